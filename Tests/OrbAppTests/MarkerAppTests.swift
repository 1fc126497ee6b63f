import Foundation
import OrbTestSupport
import XCTest

/// The host's skip-intro and skip-credits markers as a viewer meets them: the button inside the window only, what
/// skipping does, and what the host hears.
final class MarkerAppTests: XCTestCase {
  /// A plain dark 640x360 clip (no white in it, so text and buttons are easy to find in a screenshot).
  static func clip(seconds: Int = 8) throws -> String {
    try TestMedia.path(
      "plain-\(seconds)s.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x203040:size=640x360:rate=25:duration=\(seconds)", "-c:v", "libx264", "-preset",
        "ultrafast", "-pix_fmt", "yuv420p",
      ])
  }

  private func events(_ player: BackgroundPlayer, _ name: String) -> [[String: Any]] {
    player.events.filter { $0["event"] as? String == name }
  }

  /// Bright pixels (the button's white border and text) in the bottom-right quarter of `image`.
  private func brightInCorner(_ image: RGBImage) -> Int {
    var count = 0
    for y in stride(from: image.height / 2, to: image.height, by: 2) {
      for x in stride(from: image.width / 2, to: image.width, by: 2) {
        let p = image.pixel(x: x, y: y)
        if p.r > 200 && p.g > 200 && p.b > 200 { count += 1 }
      }
    }
    return count
  }

  func testSkipIntroJumpsPastItAndSkipCreditsEndsPlayback() throws {
    try Screen.requireDisplay()
    let title = "markers-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])  // away: the controls stay hidden
    let player = try BackgroundPlayer(
      [
        "--events-fd", "1", "--title", title, "--paused", "--resume-ms", "300", "--intro", "1000-3000",
        "--credits", "5000", try Self.clip(),
      ])
    defer { _ = player.wait(timeout: 1) }
    let window = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    // Paused before the intro, however slow the machine: no button yet. Then it plays into the intro.
    usleep(500_000)
    let before = try Screen.grab(title: title)
    XCTAssertEqual(brightInCorner(before), 0, "a skip button before the intro")
    Screen.press("space", title: title)
    let shown = try XCTUnwrap(
      player.waitForEvent { $0["event"] as? String == "marker" && $0["state"] as? String == "shown" }, player.stdout)
    XCTAssertEqual(shown["kind"] as? String, "intro")
    XCTAssertEqual(shown["start_ms"] as? Int, 1000)
    XCTAssertEqual(shown["end_ms"] as? Int, 3000)
    XCTAssertEqual(Double(shown["position_ms"] as? Int ?? 0), 1000, accuracy: 150)
    usleep(300_000)
    let during = try Screen.grab(title: title)
    Screen.keep(title: title, as: "skip-intro")
    XCTAssertGreaterThan(brightInCorner(during), 30, "no Skip Intro button inside the intro")
    // The button: the bright border and text in the right half (nothing else there is bright); it stays put when
    // the controls show, so its place in this screenshot is where to click.
    var box = (x0: Int.max, y0: Int.max, x1: 0, y1: 0)
    for y in stride(from: 0, to: during.height, by: 2) {
      for x in stride(from: during.width / 2, to: during.width, by: 2) {
        let p = during.pixel(x: x, y: y)
        guard p.r > 200 && p.g > 200 && p.b > 200 else { continue }
        box = (min(box.x0, x), min(box.y0, y), max(box.x1, x), max(box.y1, y))
      }
    }
    XCTAssertGreaterThan(box.x1, box.x0, "no button found")
    let (x, y) = (window.x + box.x1 - 30, window.y + (box.y0 + box.y1) / 2)
    _ = Tool.run("xdotool", ["mousemove", "\(x)", "\(y)", "click", "1"])
    let skip = try XCTUnwrap(player.waitForEvent { $0["event"] as? String == "skip" }, player.stdout)
    XCTAssertEqual(skip["kind"] as? String, "intro")
    XCTAssertEqual(skip["to_ms"] as? Int, 3000)
    XCTAssertLessThan(skip["from_ms"] as? Int ?? 9999, 3000)
    let hidden = try XCTUnwrap(
      player.waitForEvent { $0["event"] as? String == "marker" && $0["state"] as? String == "hidden" }, player.stdout)
    XCTAssertGreaterThanOrEqual(hidden["position_ms"] as? Int ?? 0, 3000, "left the intro by the skip")
    // The credits run to the end: skipping them ends playback for the host's next episode.
    XCTAssertNotNil(
      player.waitForEvent { $0["event"] as? String == "marker" && $0["kind"] as? String == "credits" }, player.stdout)
    // Enter skips them, as the button's tooltip says.
    usleep(300_000)
    Screen.press("Return", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let ended = try XCTUnwrap(events(player, "ended").last, player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "credits")
    XCTAssertLessThan(ended["position_ms"] as? Int ?? 9999, 7000, "ended at the skip, not by playing out")
    XCTAssertEqual(events(player, "skip").last?["kind"] as? String, "credits")
  }

  /// Bright pixels in the right half above the controls' place (the bottom 90 rows): the skip button alone.
  private func brightAboveTheBar(_ image: RGBImage) -> Int {
    var count = 0
    for y in stride(from: image.height / 2, to: image.height - 90, by: 2) {
      for x in stride(from: image.width / 2, to: image.width, by: 2) {
        let p = image.pixel(x: x, y: y)
        if p.r > 200 && p.g > 200 && p.b > 200 { count += 1 }
      }
    }
    return count
  }

  /// Waits for a progress event at or past `ms`.
  private func waitForPosition(_ player: BackgroundPlayer, _ ms: Int) -> Bool {
    player.waitForEvent(timeout: 30) { $0["event"] as? String == "progress" && ($0["position_ms"] as? Int ?? 0) >= ms }
      != nil
  }

  /// In a long intro the button shows by itself for its first 8 s, then only with the controls (as the family's
  /// other players do): the viewer who let it pass is not nagged, and can still reach it.
  func testTheSkipButtonShowsAloneForEightSecondsThenWithTheControls() throws {
    try Screen.requireDisplay()
    let title = "skip8-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])  // away: the controls stay hidden
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--title", title, "--intro", "500-19000", try Self.clip(seconds: 20)])
    defer { _ = player.wait(timeout: 1) }
    let window = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(
      player.waitForEvent { $0["event"] as? String == "marker" && $0["state"] as? String == "shown" }, player.stdout)
    XCTAssertTrue(waitForPosition(player, 2000), player.stdout)
    XCTAssertGreaterThan(brightAboveTheBar(try Screen.grab(title: title)), 30, "no button 1.5 s into the intro")
    // 8 s into the intro (at 8.5 s) it goes; at 10 s it is gone.
    XCTAssertTrue(waitForPosition(player, 10_000), player.stdout)
    XCTAssertEqual(brightAboveTheBar(try Screen.grab(title: title)), 0, "the button stayed past 8 s")
    // The pointer brings the controls up, and the button with them.
    let (cx, cy) = (window.x + window.width / 2, window.y + window.height / 3)
    _ = Tool.run("xdotool", ["mousemove", "\(cx)", "\(cy)"])
    _ = Tool.run("xdotool", ["mousemove", "\(cx + 4)", "\(cy)"])
    usleep(500_000)
    let withControls = try Screen.grab(title: title)
    Screen.keep(title: title, as: "skip-intro-with-controls")
    XCTAssertGreaterThan(brightAboveTheBar(withControls), 30, "no button with the controls up")
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "skip" }, "nobody skipped")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  /// Markers that cannot be meant are left out, one warning each, and playback is as without them; a marker that
  /// is not a number is a usage error.
  func testMarkersThatCannotBeMeantAreIgnored() throws {
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--resume-ms", "6000", "--intro", "5000-1000", "--credits", "9000", try Self.clip()])
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    XCTAssertEqual(events(player, "marker").count, 0, player.stdout)
    XCTAssertEqual(events(player, "ended").last?["reason"] as? String, "eof")
    XCTAssertTrue(player.stderr.contains("--intro ignored"), player.stderr)
    XCTAssertTrue(player.stderr.contains("--credits ignored"), player.stderr)
    // The host that sent them hears it too.
    let warnings = events(player, "warning").compactMap { $0["message"] as? String }
    XCTAssertEqual(warnings.filter { $0.hasPrefix("--intro ignored") || $0.hasPrefix("--credits ignored") }.count, 2)
    let usage = Orb.run(["--intro", "soon", try Self.clip()])
    XCTAssertEqual(usage.status, 1)
    XCTAssertTrue(usage.stderr.contains("--intro takes START-END in milliseconds"), usage.stderr)
  }

  /// An intro that runs to the end of the file (the host's END past it): skipping it ends the file as playing to its
  /// end does, and the button does not come back (it was skipped to the last picture, inside the window again, and
  /// shown again).
  func testSkippingAnIntroThatRunsToTheEndEndsTheFile() throws {
    try Screen.requireDisplay()
    let title = "markers-end-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--title", title, "--resume-ms", "4000", "--intro", "500-60000", try Self.clip()])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(
      player.waitForEvent { $0["event"] as? String == "marker" && $0["state"] as? String == "shown" }, player.stdout)
    Screen.press("Return", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
    XCTAssertEqual(events(player, "ended").last?["reason"] as? String, "eof", player.stdout)
    let skipped = try XCTUnwrap(player.events.firstIndex { $0["event"] as? String == "skip" }, player.stdout)
    XCTAssertFalse(
      player.events[skipped...].contains { $0["event"] as? String == "marker" && $0["state"] as? String == "shown" },
      "the button came back: \(player.stdout)")
    let at = events(player, "ended").last?["position_ms"] as? Int ?? 0
    XCTAssertLessThan(at, 7000, "ended at the skip, not at the end")
  }
}
