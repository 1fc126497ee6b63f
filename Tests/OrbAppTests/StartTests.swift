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

  /// A host that launches the player and stops it at once (the viewer chose another episode), before GTK has
  /// started: it hears where playback was, its own resume point (the player was killed without a word).
  func testAStopBeforeTheWindowIsMadeStillTellsThePosition() throws {
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(["--events-fd", "1", "--resume-ms", "2000", try Clips.moving(seconds: 3)])
    let pid = player.process.processIdentifier
    // The local file's early open has begun (a thread of the player's own: the open, or the decoding it starts,
    // which lasts): the window is still being made, if at all.
    let deadline = Date(timeIntervalSinceNow: 10)
    func opening() -> Bool {
      let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
      return tasks.contains { task in
        task != "\(pid)"
          && (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?.hasPrefix("orb-") == true
      }
    }
    while !opening() && Date() < deadline { usleep(500) }
    XCTAssertTrue(opening(), "the early open never began")
    player.process.signal(SIGTERM)
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" }, player.stdout + player.stderr)
    XCTAssertEqual(ended["reason"] as? String, "terminated")
    XCTAssertEqual(ended["position_ms"] as? Int, 2000, player.stdout)
  }

  /// A tall video (a phone's screen recording) opens a window no taller than 900 pixels, the picture pillarboxed in
  /// it; it asked for 480x1039, taller than many laptops' screens.
  func testATallVideoOpensAWindowThatFitsTheScreen() throws {
    try Screen.requireDisplay()
    let tall = try TestMedia.path(
      "tall-585x1266.mp4",
      ["-f", "lavfi", "-i", "color=c=gray:size=585x1266:rate=10:duration=3", "-c:v", "libx264", "-preset", "ultrafast"])
    let title = "tall-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, tall])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(500_000)
    let size = try XCTUnwrap(Screen.geometry(title: title))
    XCTAssertEqual(size.width, 480, "\(size)")
    XCTAssertEqual(size.height, 900, "\(size)")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  /// A file cut short (half of an MP4 whose index says 20 s, a download stopped half way), sought past what it holds
  /// while it plays: it ends there, with its position. The sound's end waited for a picture that never came, and the
  /// clock ran on past the length, for ever.
  func testASeekPastWhatACutShortFileHoldsEnds() throws {
    try Screen.requireDisplay()
    let whole = try TestMedia.path(
      "av-20s-faststart.mp4",
      Clips.pictureAndTone(seconds: 20) + [
        "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-movflags", "+faststart",
      ])
    let half = NSTemporaryDirectory() + "orb-half-\(UUID().uuidString).mp4"
    let data = try Data(contentsOf: URL(fileURLWithPath: whole))
    try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: half))
    defer { try? FileManager.default.removeItem(atPath: half) }
    let title = "half-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--events-fd", "1", "--title", title, half])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_500_000)
    Screen.press("Right", title: title)
    Screen.press("Right", title: title)  // 10 s on: past the 10 s it holds
    XCTAssertEqual(player.wait(timeout: 20), 0, "it never ended: \(player.stdout.suffix(400))")
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" }, player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof")
    XCTAssertLessThanOrEqual(ended["position_ms"] as? Int ?? .max, 20000, player.stdout)
  }
}
