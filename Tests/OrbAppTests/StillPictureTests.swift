import Foundation
import OrbTestSupport
import XCTest

/// A picture alone given as the file (a photo, a screenshot): shown for `MediaSource.stillSeconds` (5 s; mpv shows
/// one for 1 s, VLC for 10), not for the 25th of a second the image demuxer gives it, after which the window was gone;
/// and `--frame-at` finds it at any time of that span, as it does a PNG.
final class StillPictureTests: XCTestCase {
  private func still(_ ext: String) throws -> String {
    try TestMedia.path(
      "still-640x360.\(ext)",
      [
        "-f", "lavfi", "-i", "color=c=red:size=640x360,drawbox=x=320:y=0:w=320:h=360:color=blue:t=fill",
        "-frames:v", "1",
      ])
  }

  func testAStillPictureIsShownForFiveSecondsAndThenEnds() throws {
    try Screen.requireDisplay()
    let picture = try still("jpg")
    let title = "still-\(UUID().uuidString.prefix(6))"
    let started = Date()
    let player = try BackgroundPlayer(["--events-fd", "1", "--title", title, picture])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_500_000)
    let shot = try Screen.grab(title: title)
    let (left, right) = (
      shot.pixel(x: shot.width / 4, y: shot.height / 2), shot.pixel(x: shot.width * 3 / 4, y: shot.height / 2)
    )
    XCTAssertTrue(left.r > 200 && left.g < 60 && left.b < 60, "the picture's red half, 1.5 s in: \(left)")
    XCTAssertTrue(right.r < 60 && right.g < 60 && right.b > 200, "the picture's blue half: \(right)")
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    XCTAssertGreaterThan(Date().timeIntervalSince(started), 4.5, player.stdout)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended?["position_ms"] as? Int ?? 0), 5000, accuracy: 300, player.stdout)
    XCTAssertTrue(
      player.events.filter { $0["event"] as? String == "warning" }.isEmpty, "not cut short: \(player.stdout)")
  }

  func testFrameAtFindsAStillPictureAnywhereInItsSpan() throws {
    for ext in ["jpg", "png"] {
      let picture = try still(ext)
      let probe = Orb.run(["--probe", picture])
      XCTAssertTrue(probe.stdout.contains("\"duration_ms\" : 5000"), probe.stdout)
      XCTAssertTrue(probe.stdout.contains("\"is_still\" : true"), probe.stdout)
      for time in ["0", "1", "4.9"] {
        let out = NSTemporaryDirectory() + "orb-still-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = Orb.run(["--frame-at", time, "--output", out, picture])
        XCTAssertEqual(r.status, 0, "\(ext) at \(time): \(r.stderr)")
        let image = try RGBImage(png: out)
        let left = image.pixel(x: image.width / 4, y: image.height / 2)
        XCTAssertTrue(left.r > 200 && left.g < 60 && left.b < 60, "\(ext) at \(time): \(left)")
      }
    }
  }
}
