import Foundation
import OrbTestSupport
import XCTest

/// HTTPS servers' certificates are checked, as every browser does and FFmpeg by itself does not: one the system does
/// not trust (here, one the server made itself) is refused before any request, so the token never reaches whoever
/// answers in the server's place; `--tls-ca-file` trusts a home server's own authority, `--tls-verify no` any.
final class TLSTests: XCTestCase {
  private var folder = ""
  private var server: FaultServer!
  /// The server's certificate (made for 127.0.0.1 and localhost, by itself), and its key.
  private var certificate = ""

  override func setUpWithError() throws {
    folder = try FaultServer.mediaFolder("tls")
    let key = "\(folder)/key.pem"
    certificate = "\(folder)/certificate.pem"
    let made = Tool.run(
      "openssl",
      [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
      ])
    XCTAssertTrue(made.succeeded, made.stderr)
    let both = "\(folder)/server.pem"
    let pem = try Data(contentsOf: URL(fileURLWithPath: certificate)) + Data(contentsOf: URL(fileURLWithPath: key))
    try pem.write(to: URL(fileURLWithPath: both))
    server = try FaultServer(serving: folder, tls: both)
  }

  override func tearDown() {
    server?.stop()
    try? FileManager.default.removeItem(atPath: folder)
  }

  private func probe(_ args: [String]) -> (status: Int32, error: [String: Any]?, stderr: String) {
    let r = Orb.run(["--probe", "--events-fd", "2"] + args, timeout: 60)
    return (r.status, Orb.events(r.stderr).first { $0["event"] as? String == "error" }, r.stderr)
  }

  func testACertificateNobodyVouchesForIsRefusedBeforeTheTokenIsSent() throws {
    let r = probe(["--auth-token", "orb-secret", server.url("file", "clip.mp4")])
    XCTAssertEqual(r.status, 1, r.stderr)
    XCTAssertEqual(r.error?["kind"] as? String, "network", r.stderr)
    let message = r.error?["message"] as? String ?? ""
    XCTAssertTrue(message.contains("certificate is not trusted"), message)
    XCTAssertTrue(server.requests.isEmpty, "a request reached the server: \(server.requests)")
    // A name that does not resolve is said so over HTTPS too (FFmpeg's tls says "input/output error" for both).
    let unknown = probe(["https://nonexistent.invalid/clip.mp4"])
    XCTAssertTrue(
      (unknown.error?["message"] as? String ?? "").hasSuffix("the server's name cannot be found (nonexistent.invalid)"),
      unknown.stderr)
    // In the window it is said at once: no tries again (nothing changes by trying).
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--error-linger-ms", "0", "--auth-token", "orb-secret", server.url("file", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 30), 1, player.stderr)
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "retry" }, player.stdout)
    XCTAssertTrue(server.requests.isEmpty, "a request reached the server: \(server.requests)")
  }

  func testTheServersOwnAuthorityOrNoCheckLetsItPlay() {
    let trusted = probe(["--auth-token", "orb-secret", "--tls-ca-file", certificate, server.url("file", "clip.mp4")])
    XCTAssertEqual(trusted.status, 0, trusted.stderr)
    XCTAssertTrue(
      server.requests("/file/clip.mp4").allSatisfy { $0.header("Authorization") == "Bearer orb-secret" },
      "\(server.requests)")
    // An HLS stream's playlist and segments, each a connection of its own, are checked against it too.
    let hls = probe(["--tls-ca-file", certificate, server.url("file", "index.m3u8")])
    XCTAssertEqual(hls.status, 0, hls.stderr)
    XCTAssertFalse(server.requests("/file/seg").isEmpty, "no segment was asked for: \(server.requests)")
    XCTAssertEqual(probe(["--tls-verify", "no", server.url("file", "clip.mp4")]).status, 0)
  }
}
