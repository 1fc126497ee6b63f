import Foundation
import OrbTestSupport
import XCTest

/// A server that fails the way servers do for a while (503 while restarting) is tried again by the family's rule:
/// after 1, 2, 4, 8 s, then every 30 s, each try an event, the window saying so; paused, the player stops trying.
final class RetryTests: XCTestCase {
  /// Answers 503 for the first `argv[2]` seconds (always, with a negative number), then serves the clip.
  static let script = #"""
    import http.server, sys, time
    clip, fail_for = sys.argv[1], float(sys.argv[2])
    start = time.time()
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            if fail_for < 0 or time.time() - start < fail_for:
                self.send_response(503); self.send_header("Content-Length", "0"); self.end_headers(); return
            data = open(clip, "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "video/mp4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(s.server_address[1], flush=True)
    s.serve_forever()
    """#

  /// The 3 s clip with its index first, so a server without range requests can serve it.
  static func clip() throws -> String {
    try TestMedia.path(
      "moving-3s-faststart.mp4", ["-i", try Clips.moving(seconds: 3), "-c", "copy", "-movflags", "+faststart"])
  }

  private func retries(_ player: BackgroundPlayer) -> [[String: Any]] {
    player.events.filter { $0["event"] as? String == "retry" }
  }

  func testAServerThatComesBackIsTriedAgainAndPlays() throws {
    try Screen.requireDisplay()
    let server = try LoopbackServer(script: Self.script, arguments: [try Self.clip(), "2.5"])
    defer { server.stop() }
    let player = try BackgroundPlayer(["--events-fd", "1", server.url("/clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 40), 0, player.stderr)
    let tries = retries(player)
    XCTAssertEqual(tries.compactMap { $0["attempt"] as? Int }, [1, 2], player.stdout)
    XCTAssertEqual(tries.compactMap { $0["in_ms"] as? Int }, [1000, 2000])
    XCTAssertEqual(tries.first?["of"] as? Int, 14)
    XCTAssertTrue(
      (tries.first?["reason"] as? String ?? "").contains("503") || player.stdout.contains("server"), "\(tries)")
    let states = player.events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertEqual(states.first, "buffering", "waiting to try again is buffering: \(states)")
    XCTAssertEqual(player.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "eof")
  }

  func testAServerThatStaysDownIsANetworkErrorOnceTheBudgetIsSpent() throws {
    try Screen.requireDisplay()
    let server = try LoopbackServer(script: Self.script, arguments: [try Self.clip(), "-1"])
    defer { server.stop() }
    let started = Date()
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--retry-for", "3", "--error-linger-ms", "0", server.url("/clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 40), 1, player.stderr)
    XCTAssertEqual(retries(player).compactMap { $0["attempt"] as? Int }, [1, 2], player.stdout)
    XCTAssertEqual(retries(player).first?["of"] as? Int, 2)
    XCTAssertGreaterThan(Date().timeIntervalSince(started), 2.9, "both waits were waited")
    let error = player.events.first { $0["event"] as? String == "error" }
    XCTAssertEqual(error?["kind"] as? String, "network", player.stdout)
  }

  /// Paused while waiting to try again, it stops trying; quitting then is immediate.
  func testAPauseStopsTheTriesAndQuitIsImmediate() throws {
    try Screen.requireDisplay()
    let server = try LoopbackServer(script: Self.script, arguments: [try Self.clip(), "-1"])
    defer { server.stop() }
    let title = "retry-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", server.url("/clip.mp4")])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    let deadline = Date(timeIntervalSinceNow: 10)
    while retries(player).isEmpty && Date() < deadline { usleep(50_000) }
    Screen.press("space", title: title)
    usleep(4_000_000)
    XCTAssertEqual(retries(player).count, 1, "paused, it tried again: \(player.stdout)")
    let asked = Date()
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    XCTAssertLessThan(Date().timeIntervalSince(asked), 2, "quit waited on the retry")
    XCTAssertEqual(player.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "user-quit")
  }
}
