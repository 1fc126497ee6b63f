import Foundation
import OrbTestSupport
import XCTest

/// How a launch begins: the window's size and place, and where playback starts.
final class StartTests: XCTestCase {
  func testGeometrySizesAndPlacesTheWindow() throws {
    try Screen.requireDisplay()
    let title = "geometry-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, "--geometry", "500x300+40+60", try Clips.moving(seconds: 3)])
    defer { _ = player.wait(timeout: 1) }
    let g = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    usleep(800_000)  // the video opens: it must not resize the window to its own 640x360
    let now = try XCTUnwrap(Screen.geometry(title: title))
    XCTAssertEqual(now.width, 500)
    XCTAssertEqual(now.height, 300)
    XCTAssertEqual(g.x, 40)
    XCTAssertEqual(g.y, 60)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    for bad in ["500", "500x", "5x5", "500x300+1", "axb"] {
      let usage = Orb.run(["--geometry", bad, try Clips.moving(seconds: 3)])
      XCTAssertEqual(usage.status, 1, "--geometry \(bad)")
      XCTAssertTrue(usage.stderr.contains("--geometry must be"), usage.stderr)
    }
  }

  /// A resume point past the end (a stale bookmark) plays from the beginning and says so once; the host hears
  /// playback begin at 0.
  func testAResumePointPastTheEndStartsFromTheBeginning() throws {
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(["--events-fd", "1", "--resume-ms", "99000", try Clips.moving(seconds: 3)])
    XCTAssertEqual(player.wait(timeout: 30), 0, player.stderr)
    let state = try XCTUnwrap(player.events.first { $0["event"] as? String == "state" }, player.stdout)
    XCTAssertEqual(state["position_ms"] as? Int, 0)
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" })
    let shown = (ended["stats"] as? [String: Any])?["presented"] as? Int ?? 0
    XCTAssertGreaterThan(shown, 80, "the whole 3 s were played, not the last frame")
    let said = player.stderr.components(separatedBy: "is past the end").count - 1
    XCTAssertEqual(said, 1, player.stderr)
  }
}
