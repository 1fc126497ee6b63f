import CFFmpeg
import Foundation

/// Why media could not be played, in the kinds every Orb player reports to its host.
/// Thread-safety: a value type; safe to pass between threads.
public struct MediaError: Error, CustomStringConvertible, Sendable, Equatable {
  public enum Kind: String, Sendable {
    /// 5xx, timeouts, resets, stalls: worth retrying.
    case network
    /// 401/403 or a redirect to another host: stop, don't retry.
    case signIn = "sign-in"
    /// No such file, 404, 410.
    case missing
    /// Present but not decodable.
    case unplayable
  }

  public let kind: Kind
  /// The file or URL as the user gave it.
  public let source: String
  /// What went wrong, in words a user can act on ("no such file").
  public let reason: String

  public init(_ kind: Kind, source: String, reason: String) {
    self.kind = kind
    self.source = source
    self.reason = reason
  }

  /// Trying again cannot help, whatever the kind says (a certificate the player does not trust).
  public var final = false

  /// Seconds the server asked to be left before it is asked again (`Retry-After`), nil when it did not.
  public var retryAfter: Double?

  /// Worth the retry rule's tries: a network failure that may pass.
  public var isWorthRetrying: Bool { kind == .network && !final }

  /// It came after playback had begun (a stream that broke off and could not be taken up again), not at the open.
  public var whilePlaying = false

  /// "cannot open 'x.mkv': no such file"; after playback began, "stopped playing 'x.mkv': …". A URL's password and
  /// sign-in parameters are left out (`MediaSource.withoutSecrets`): this goes to stderr and to the host.
  public var description: String {
    "\(whilePlaying ? "stopped playing" : "cannot open") '\(MediaSource.withoutSecrets(source))': \(reason)"
  }

  /// The same failure, come after playback had begun.
  public func afterPlaybackBegan() -> MediaError {
    var error = self
    error.whilePlaying = true
    return error
  }

  /// Checks a local path before FFmpeg sees it, so the common mistakes get plain words; `what` the file should be
  /// ("media file", "subtitle file").
  /// A file:// URL is checked at the path it names, byte for byte (`MediaSource.pathBytes`).
  public static func checkLocalFile(_ path: String, what: String = "media file") -> MediaError? {
    checkLocalFile(MediaSource.localBytes(path), name: path, what: what)
  }

  /// The same for the path's bytes (NUL-terminated), named `path` in the message.
  static func checkLocalFile(_ bytes: [CChar], name path: String, what: String = "media file") -> MediaError? {
    // mpv's name for standard input: media is read from it through a spool (`Spool`), before this check; what else
    // asks (a subtitle file) needs a file.
    if path == "-" { return MediaError(.unplayable, source: path, reason: "is standard input, not a file") }
    var st = stat()
    if stat(bytes, &st) != 0 {
      switch errno {
      case ENOENT, ENOTDIR: return MediaError(.missing, source: path, reason: "no such file")
      case EACCES: return MediaError(.unplayable, source: path, reason: "permission denied")
      default: return MediaError(.unplayable, source: path, reason: String(cString: strerror(errno)))
      }
    }
    if (st.st_mode & S_IFMT) == S_IFDIR {
      return MediaError(.unplayable, source: path, reason: "is a directory, not a \(what)")
    }
    // A pipe or a device has no size to tell: said for what it is, not called empty. (Media from a named pipe is
    // read through a spool before this check; a subtitle file must be a file.)
    if (st.st_mode & S_IFMT) == S_IFIFO {
      return MediaError(.unplayable, source: path, reason: "is a named pipe; only files and URLs can be read")
    }
    if (st.st_mode & S_IFMT) != S_IFREG {
      return MediaError(.unplayable, source: path, reason: "is not a regular file; only files and URLs can be read")
    }
    if access(bytes, R_OK) != 0 { return MediaError(.unplayable, source: path, reason: "permission denied") }
    // A file of the kernel's (/proc, /sys) says it holds nothing and has something to read: it goes on, to be called
    // what it is not (media), not empty.
    if st.st_size == 0 && !hasBytes(bytes) { return MediaError(.unplayable, source: path, reason: "empty file") }
    return nil
  }

  /// Whether a byte can be read from the file at `path`.
  private static func hasBytes(_ path: [CChar]) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var byte: UInt8 = 0
    return read(fd, &byte, 1) == 1
  }

  /// What a local file's own header says is wrong with it, when FFmpeg's error code would mislead (a Y4M header
  /// with an impossible size fails with "device or resource busy").
  static func headerProblem(_ path: [CChar]) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = read(fd, &buffer, buffer.count)
    let head = buffer.prefix(max(0, count))
    guard head.starts(with: Array("YUV4MPEG2 ".utf8)) else { return nil }
    let line = String(decoding: head.prefix(while: { $0 != 0x0A }), as: UTF8.self)
    var size: [Character: String] = [:]
    for field in line.split(separator: " ").dropFirst() where field.first == "W" || field.first == "H" {
      size[field.first!] = String(field.dropFirst())
    }
    let w = size["W"] ?? "?"
    let h = size["H"] ?? "?"
    return "its Y4M header gives a picture size that cannot be decoded (\(w)x\(h))"
  }

  /// A request of the demuxer's that carried a token was sent on to another host, and the origin guard turned it
  /// away: a sign-in service's answer, as for the first request (`RedirectCheck`).
  static func refusedRedirect(_ source: String) -> MediaError {
    MediaError(
      .signIn, source: source,
      reason: "part of the stream is sent on to another host, as a sign-in page does; it is not followed with the "
        + "credentials")
  }

  /// A read that failed in the middle: for a network source it is the network's fault (worth a retry).
  static func fromRead(_ code: Int32, source: String) -> MediaError {
    let error = fromOpen(code, source: source)
    let isNetwork = MediaSource.isURL(source)
    guard isNetwork, error.kind == .unplayable else { return error }
    return MediaError(.network, source: source, reason: "reading stopped: \(FFmpegError.message(code).lowercased())")
  }

  /// FFmpeg's AVERROR_HTTP_BAD_REQUEST, `FFERRTAG(0xF8, '4', '0', '0')`, which the C shim does not carry.
  static let httpBadRequest = -Int32(0xF8 | 0x34 << 8 | 0x30 << 16 | 0x30 << 24)

  /// Turns FFmpeg's failure to open or read `source` into a user-facing error.
  static func fromOpen(_ code: Int32, source: String) -> MediaError {
    switch code {
    case orb_averror(ENOENT): return MediaError(.missing, source: source, reason: "no such file")
    case orb_averror(EACCES): return MediaError(.unplayable, source: source, reason: "permission denied")
    case orb_averror_http_unauthorized(), orb_averror_http_forbidden():
      return MediaError(.signIn, source: source, reason: "the server refused access (\(FFmpegError.message(code)))")
    case orb_averror_http_not_found(): return MediaError(.missing, source: source, reason: "not found on the server")
    // FFmpeg folds every other 4xx together (410 Gone among them) but for 400, which it names apart: the server will
    // not serve it to us.
    case orb_averror_http_other_4xx(), httpBadRequest:
      return MediaError(.missing, source: source, reason: "the server will not serve it (\(FFmpegError.message(code)))")
    case orb_averror_http_server_error(), orb_averror(ETIMEDOUT), orb_averror(ECONNRESET),
      orb_averror(ECONNREFUSED), orb_averror(EIO):
      return MediaError(.network, source: source, reason: FFmpegError.message(code).lowercased())
    case orb_averror_invaliddata(), orb_averror_demuxer_not_found():
      return MediaError(.unplayable, source: source, reason: "not a media file, or damaged (unrecognised data)")
    // A file that ends before its streams could be read (a FLAC or Ogg file of a few hundred bytes): FFmpeg says
    // "end of file", or of an MP3 "invalid argument".
    case FFmpegError.eof where !MediaSource.isURL(source):
      return MediaError(.unplayable, source: source, reason: "cut short, or damaged: it ends before its streams begin")
    // An MP4 index that says it has two billion entries: FFmpeg cannot allocate them, and said "cannot allocate
    // memory" of a file of 500 KB.
    case orb_averror(ENOMEM) where !MediaSource.isURL(source):
      return MediaError(
        .unplayable, source: source, reason: "damaged: its header asks for more memory than there is (its index?)")
    case orb_averror(EINVAL) where !MediaSource.isURL(source):
      return MediaError(.unplayable, source: source, reason: "not a media file, or damaged (its data makes no sense)")
    default:
      return MediaError(.unplayable, source: source, reason: FFmpegError.message(code).lowercased())
    }
  }
}
