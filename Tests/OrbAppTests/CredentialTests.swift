import Foundation
import OrbTestSupport
import XCTest

/// The bearer token and `--header` lines go only to the media's own origin: never to another host after a redirect,
/// never to HLS segments on another host. Two loopback servers on two ports are two origins.
final class CredentialTests: XCTestCase {
  /// Serves files from a folder, writes each request's path and headers as a JSON line to a log, and answers
  /// /go-elsewhere with a redirect to the other server, /go-here with one to itself, /page with a web page,
  /// /hls/index.m3u8 with the folder's playlist whose segments are on the other server, and /hls-bounce/index.m3u8
  /// with one whose segments are at the origin's /bounce/, which redirects each to the other server, and
  /// /hls-here/index.m3u8 with one whose segments are at the origin's /media/.
  static let script = #"""
    import http.server, sys, os, json
    folder, log, other = sys.argv[1], sys.argv[2], sys.argv[3]
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            with open(log, "a") as f:
                f.write(json.dumps({"path": self.path, "headers": dict(self.headers)}) + "\n")
            if self.path == "/go-elsewhere":
                self.send_response(302); self.send_header("Location", other + "/clip.mp4"); self.end_headers(); return
            if self.path == "/go-here":
                self.send_response(302); self.send_header("Location", "/clip.mp4"); self.end_headers(); return
            if self.path == "/page":
                body = b"<html><body>Sign in</body></html>"
                self.send_response(200); self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body); return
            if self.path.startswith("/bounce/"):
                self.send_response(302); self.send_header("Location", other + "/" + self.path[8:])
                self.end_headers(); return
            # The folder's playlist with its segments elsewhere, behind the origin's redirects, or at the origin.
            playlists = {"/hls/index.m3u8": other + "/", "/hls-bounce/index.m3u8": "/bounce/",
                         "/hls-here/index.m3u8": "/media/"}
            if self.path in playlists:
                text = open(os.path.join(folder, "index.m3u8")).read()
                lines = [playlists[self.path] + l if l.endswith(".ts") else l for l in text.splitlines()]
                body = ("\n".join(lines) + "\n").encode()
                self.send_response(200); self.send_header("Content-Type", "application/vnd.apple.mpegurl")
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body); return
            name = os.path.join(folder, os.path.basename(self.path))
            if not os.path.isfile(name):
                self.send_response(404); self.end_headers(); return
            data = open(name, "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "video/mp2t" if name.endswith(".ts") else "video/mp4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[4]) if len(sys.argv) > 4 else 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """#

  private var folder = ""
  private var origin: LoopbackServer!
  private var elsewhere: LoopbackServer!

  override func setUpWithError() throws {
    folder = NSTemporaryDirectory() + "orb-creds-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: try Clips.moving(seconds: 3), toPath: "\(folder)/clip.mp4")
    let hls = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-i", "\(folder)/clip.mp4", "-c", "copy", "-f", "hls", "-hls_time", "1",
        "-hls_segment_filename", "\(folder)/seg%d.ts", "\(folder)/index.m3u8",
      ])
    XCTAssertTrue(hls.succeeded, hls.stderr)
    // The other server's address must be known first: a free port for the origin, found by binding it once.
    elsewhere = try LoopbackServer(script: Self.script, arguments: [folder, "\(folder)/elsewhere.log", "http://x"])
    origin = try LoopbackServer(
      script: Self.script, arguments: [folder, "\(folder)/origin.log", "http://127.0.0.1:\(elsewhere.port)"])
  }

  override func tearDown() {
    origin?.stop()
    elsewhere?.stop()
    try? FileManager.default.removeItem(atPath: folder)
  }

  private func requests(_ log: String) -> [[String: Any]] {
    ((try? String(contentsOfFile: "\(folder)/\(log)", encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  private func header(_ request: [String: Any], _ name: String) -> String? {
    (request["headers"] as? [String: String])?.first { $0.key.lowercased() == name.lowercased() }?.value
  }

  private func probe(_ args: [String]) -> (status: Int32, kind: String?, stderr: String) {
    let r = Orb.run(["--probe", "--events-fd", "2"] + args, timeout: 60)
    let kind = Orb.events(r.stderr).first { $0["event"] as? String == "error" }?["kind"] as? String
    return (r.status, kind, r.stderr)
  }

  func testWithATokenARedirectToAnotherHostIsSignInAndNotFollowed() {
    let r = probe(["--auth-token", "orb-secret", origin.url("/go-elsewhere")])
    XCTAssertEqual(r.status, 1, r.stderr)
    XCTAssertEqual(r.kind, "sign-in", r.stderr)
    XCTAssertTrue(requests("elsewhere.log").isEmpty, "the other host was asked: \(requests("elsewhere.log"))")
    XCTAssertFalse(r.stderr.contains("orb-secret"), "the token in a message: \(r.stderr)")
  }

  func testWithoutATokenRedirectsAreFollowedWithoutTheHeaders() {
    let r = probe(["--header", "X-Secret: s3cret", origin.url("/go-elsewhere")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let there = requests("elsewhere.log")
    XCTAssertFalse(there.isEmpty, "the redirect was not followed")
    XCTAssertTrue(there.allSatisfy { header($0, "X-Secret") == nil }, "the header left its origin: \(there)")
    XCTAssertEqual(header(requests("origin.log").first ?? [:], "X-Secret"), "s3cret", "the origin had it")
  }

  func testARedirectWithinTheOriginKeepsTheToken() {
    let r = probe(["--auth-token", "orb-secret", origin.url("/go-here")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let clip = requests("origin.log").filter { $0["path"] as? String == "/clip.mp4" }
    XCTAssertFalse(clip.isEmpty)
    XCTAssertTrue(clip.allSatisfy { header($0, "Authorization") == "Bearer orb-secret" }, "\(clip)")
  }

  func testHLSSegmentsOnAnotherHostGetNoToken() {
    let r = probe(["--auth-token", "orb-secret", origin.url("/hls/index.m3u8")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let playlist = requests("origin.log").filter { $0["path"] as? String == "/hls/index.m3u8" }
    XCTAssertTrue(playlist.allSatisfy { header($0, "Authorization") == "Bearer orb-secret" }, "\(playlist)")
    let segments = requests("elsewhere.log").filter { ($0["path"] as? String ?? "").hasSuffix(".ts") }
    XCTAssertFalse(segments.isEmpty, "no segment was read")
    XCTAssertTrue(segments.allSatisfy { header($0, "Authorization") == nil }, "the token went to \(segments)")
  }

  /// A segment at the origin that redirects to another host: FFmpeg would follow it with the request's headers.
  /// With a token it is turned away as a sign-in (the other host is never asked); without one it is followed
  /// without the headers.
  func testAnHLSSegmentRedirectedElsewhereNeverTakesTheCredentials() {
    let signIn = probe(["--auth-token", "orb-secret", origin.url("/hls-bounce/index.m3u8")])
    XCTAssertEqual(signIn.status, 1, signIn.stderr)
    XCTAssertEqual(signIn.kind, "sign-in", signIn.stderr)
    XCTAssertTrue(requests("elsewhere.log").isEmpty, "the other host was asked: \(requests("elsewhere.log"))")
    let bounced = requests("origin.log").filter { ($0["path"] as? String ?? "").hasPrefix("/bounce/") }
    XCTAssertFalse(bounced.isEmpty, "no segment was asked for")
    XCTAssertTrue(bounced.allSatisfy { header($0, "Authorization") == "Bearer orb-secret" }, "\(bounced)")

    let followed = probe(["--header", "X-Secret: s3cret", origin.url("/hls-bounce/index.m3u8")])
    XCTAssertEqual(followed.status, 0, followed.stderr)
    let there = requests("elsewhere.log")
    XCTAssertFalse(there.isEmpty, "the redirect was not followed")
    XCTAssertTrue(there.allSatisfy { header($0, "X-Secret") == nil }, "the header left its origin: \(there)")
  }

  /// Cookies from `--cookies-file` reach the host they name and stay behind when a redirect leaves it.
  func testCookiesGoToTheirHostOnly() throws {
    let cookies = "\(folder)/cookies.txt"
    try "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\torb-cookie\n"
      .write(toFile: cookies, atomically: true, encoding: .utf8)
    let r = probe(["--cookies-file", cookies, origin.url("/go-elsewhere")])
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertEqual(header(requests("origin.log").first ?? [:], "Cookie"), "session=orb-cookie")
    let there = requests("elsewhere.log")
    XCTAssertFalse(there.isEmpty)
    XCTAssertTrue(there.allSatisfy { header($0, "Cookie") == nil }, "the cookie left its host: \(there)")
  }

  /// Each request takes the cookies that match its own path: the playlist's cookie stays off the segments beside
  /// it on the same host, and the cookie for the whole host goes with both.
  func testEachRequestTakesTheCookiesOfItsOwnPath() throws {
    let cookies = "\(folder)/cookies.txt"
    try """
    # Netscape HTTP Cookie File
    127.0.0.1\tFALSE\t/hls-here/\tFALSE\t0\tplaylist\tonly-here
    127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\torb-cookie

    """.write(toFile: cookies, atomically: true, encoding: .utf8)
    let r = probe(["--cookies-file", cookies, origin.url("/hls-here/index.m3u8")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let asked = requests("origin.log")
    let playlist = asked.filter { $0["path"] as? String == "/hls-here/index.m3u8" }
    XCTAssertFalse(playlist.isEmpty)
    for request in playlist {
      let cookie = header(request, "Cookie") ?? ""
      XCTAssertTrue(cookie.contains("playlist=only-here") && cookie.contains("session=orb-cookie"), cookie)
    }
    let segments = asked.filter { ($0["path"] as? String ?? "").hasPrefix("/media/") }
    XCTAssertFalse(segments.isEmpty, "no segment was read: \(asked)")
    XCTAssertTrue(
      segments.allSatisfy { header($0, "Cookie") == "session=orb-cookie" },
      "a segment's cookies: \(segments.map { header($0, "Cookie") ?? "none" })")
  }

  func testAWebPageWhereMediaWasExpectedIsSignInWithCredentials() {
    XCTAssertEqual(probe(["--auth-token", "orb-secret", origin.url("/page")]).kind, "sign-in")
    let plain = probe([origin.url("/page")])
    XCTAssertEqual(plain.kind, "unplayable")
    XCTAssertTrue(plain.stderr.contains("web page"), plain.stderr)
  }
}
