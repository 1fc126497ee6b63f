import Foundation
import OrbTestSupport
import XCTest

/// The controls over the video, used with the mouse as a person would: a click shows and hides them, the speed
/// button changes how fast playback goes, the close button ends it.
final class TransportTests: XCTestCase {
  /// Whether the controls are on screen: the bar's 60% black over the clip's 0x203040 near its left end.
  private func barShown(_ image: RGBImage) -> Bool {
    let rows = (image.height * 3 / 4..<image.height).filter { image.pixel(x: 24, y: $0).b < 0x30 }
    return rows.count > 20
  }

  private func positions(_ player: BackgroundPlayer) -> [Int] {
    player.events.filter { $0["event"] as? String == "progress" }.compactMap { $0["position_ms"] as? Int }
  }

  func testClickTogglesTheControlsAndTheirButtonsWork() throws {
    try Screen.requireDisplay()
    let title = "transport2-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", try MarkerAppTests.clip(seconds: 20)])
    defer { _ = player.wait(timeout: 1) }
    let w = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    usleep(700_000)
    XCTAssertFalse(barShown(try Screen.grab(title: title)), "the controls start hidden")
    let (cx, cy) = (w.x + w.width / 2, w.y + w.height / 3)
    _ = Tool.run("xdotool", ["mousemove", "\(cx)", "\(cy)"])
    _ = Tool.run("xdotool", ["mousemove", "\(cx + 4)", "\(cy)"])
    usleep(400_000)
    XCTAssertTrue(barShown(try Screen.grab(title: title)), "moving the pointer shows the controls")
    _ = Tool.run("xdotool", ["click", "1"])
    usleep(400_000)
    XCTAssertFalse(barShown(try Screen.grab(title: title)), "a click on the video hides them")
    _ = Tool.run("xdotool", ["click", "1"])
    usleep(400_000)
    let shown = try Screen.grab(title: title)
    Screen.keep(title: title, as: "transport-controls")
    XCTAssertTrue(barShown(shown), "a second click shows them again")
    // The speed button, second in the row of buttons: 1× → 1.25×.
    let barY = w.y + w.height - 35
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + 87)", "\(barY)", "click", "1"])
    let before = positions(player).count
    usleep(2_300_000)
    let after = positions(player).dropFirst(before)
    if let first = after.first, let last = after.last, after.count >= 2 {
      let rate = Double(last - first) / Double(1000 * (after.count - 1))
      XCTAssertEqual(rate, 1.25, accuracy: 0.15, "position per second after the speed button: \(Array(after))")
    } else {
      XCTFail("no progress after the speed button: \(player.stdout)")
    }
    XCTAssertTrue(player.stderr.isEmpty || !player.stderr.contains("error"), player.stderr)
    // Close: the last button.
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width - 42)", "\(barY)"])
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width - 41)", "\(barY)", "click", "1"])
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "user-quit", player.stdout)
  }
}
