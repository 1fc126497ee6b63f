import Foundation
import OrbTestSupport
import XCTest

/// Videos of a picture every second or two, without sound (a slideshow, a timelapse, a silent screen recording):
/// they play to their end, and `--frame-at` finds any moment of them. Both waited for ever: the demuxer counted a
/// 2 s picture as 2 s read ahead while the decoder still waited for more packets; and a Matroska file whose first
/// picture gave FFmpeg no start time was taken for a raw stream, which seeks from its first byte.
final class SlowVideoTests: XCTestCase {
  /// `seconds` of testsrc2 at `rate` pictures a second, no sound, in `container`.
  private func clip(rate: String, seconds: Int, _ container: String = "mkv") throws -> String {
    try TestMedia.path(
      "slow-\(rate)fps-\(seconds)s.\(container)",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=\(rate):duration=\(seconds)", "-c:v", "libx264", "-preset",
        "ultrafast",
      ])
  }

  private func frameAt(_ seconds: String, _ path: String) throws -> Data {
    let png = NSTemporaryDirectory() + "orb-slow-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let r = Orb.run(["--frame-at", seconds, "--output", png, path], timeout: 30)
    XCTAssertEqual(r.status, 0, "--frame-at \(seconds) \(path): \(r.stderr)")
    return (try? Data(contentsOf: URL(fileURLWithPath: png))) ?? Data()
  }

  func testAPictureEveryTwoSecondsPlaysToItsEnd() throws {
    try Screen.requireDisplay()
    let path = try clip(rate: "0.5", seconds: 8)
    let player = try BackgroundPlayer(["--events-fd", "1", path])
    XCTAssertEqual(player.wait(timeout: 40), 0, player.stderr)
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" }, player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 8000, accuracy: 300, player.stdout)
    let presented = (ended["stats"] as? [String: Any])?["presented"] as? Int ?? 0
    XCTAssertGreaterThanOrEqual(presented, 4, "its four pictures: \(player.stdout)")
    XCTAssertNotEqual(try frameAt("5", path), try frameAt("1", path), "the pictures at 1 s and 5 s")
  }

  func testAnyMomentOfAMatroskaFileWithoutAStartTimeIsFound() throws {
    // 0.9 pictures a second: their times (0, 1.111, 2.222 …) leave FFmpeg no start time in Matroska.
    let mkv = try clip(rate: "0.9", seconds: 10)
    let mp4 = try clip(rate: "0.9", seconds: 10, "mp4")
    for seconds in ["0.5", "3.5", "8"] {
      XCTAssertEqual(try frameAt(seconds, mkv), try frameAt(seconds, mp4), "the picture at \(seconds) s")
    }
    XCTAssertNotEqual(try frameAt("0.5", mkv), try frameAt("3.5", mkv))
  }
}
