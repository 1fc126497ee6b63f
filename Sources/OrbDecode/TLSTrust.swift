import CFFmpeg
import Foundation
import Synchronization

/// How the certificates of HTTPS servers are checked, on every connection the player makes (the redirect check, the
/// media, an HLS stream's playlists, keys and segments): against the authorities the system trusts, or those of
/// `caFile` instead (`--tls-ca-file`: a home server's own authority), the server's name included; or not at all
/// (`--tls-verify no`). FFmpeg checks none by default, so a bearer token went to whoever answered in the server's
/// place.
/// Thread-safety: Safe; the setting is kept behind a lock, set at start-up and read by each connection.
public struct TLSTrust: Sendable, Equatable {
  public var verify: Bool
  public var caFile: String?

  public init(verify: Bool = true, caFile: String? = nil) {
    self.verify = verify
    self.caFile = caFile
  }

  private static let current = Mutex(TLSTrust())

  /// The setting every connection follows.
  public static var setting: TLSTrust {
    get { current.withLock { $0 } }
    set { current.withLock { $0 = newValue } }
  }

  /// Sets FFmpeg's options of a connection (its `tls` protocol's, which its `http` passes on) to the setting.
  static func apply(to options: inout OpaquePointer?) {
    let trust = setting
    av_dict_set(&options, "tls_verify", trust.verify ? "1" : "0", 0)
    if let file = trust.caFile { av_dict_set(&options, "ca_file", file, 0) }
  }

  /// Why a connection to `url` (HTTPS) that failed as FFmpeg's tls fails on a certificate it cannot trust (EIO)
  /// failed: made again (no request is sent on these), it fails with the check once more and succeeds without it
  /// only when the certificate was the cause (a handshake a busy server dropped once passes the second time). Nil
  /// when it was not, or the check is off.
  static func untrustedCertificate(_ url: URL, cancellation: Cancellation) -> String? {
    let trust = setting
    guard trust.verify else { return nil }
    func connects(checked: Bool) -> Bool {
      var opened: UnsafeMutablePointer<AVIOContext>?
      defer { avio_closep(&opened) }
      return HTTPDiagnosis.connect(url, into: &opened, cancellation: cancellation, within: 5, checked: checked) >= 0
    }
    guard !connects(checked: true), connects(checked: false) else { return nil }
    let authority = trust.caFile.map { "the authority in \($0)" } ?? "this system"
    return "the server's certificate is not trusted by \(authority) (made by the server itself, out of date, or "
      + "for another name); --tls-ca-file FILE trusts the authority that made it, --tls-verify no any server"
  }
}
