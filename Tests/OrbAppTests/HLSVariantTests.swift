import Foundation
import OrbTestSupport
import XCTest

/// An HLS master playlist plays one variant, as `--hls-bitrate` (mpv's option) asks: the highest by default, the
/// lowest, or the highest within a bandwidth.
final class HLSVariantTests: XCTestCase {
  /// Two variants, 640x360 at 1.5 Mb/s and 320x180 at 300 kb/s, each with its own audio, in a folder of their own.
  static func masterPlaylist() throws -> String {
    try masterPlaylist(named: "hls-variants-v1", large: (640, 360, "1500k"), small: (320, 180, "300k"), seconds: 4)
  }

  /// A master playlist of two variants of testsrc2, `large` and `small` (width, height, bit rate), each with its
  /// own audio, in a folder `name` of the test media.
  static func masterPlaylist(
    named name: String, large: (Int, Int, String), small: (Int, Int, String), seconds: Int, rate: Int = 25
  ) throws -> String {
    let folder = TestMedia.directory + "/" + name
    let master = "\(folder)/master.m3u8"
    if FileManager.default.fileExists(atPath: master) { return master }
    let building = "\(folder).tmp-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: building, withIntermediateDirectories: true)
    let made = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
        "testsrc2=size=\(large.0)x\(large.1):rate=\(rate):duration=\(seconds)", "-f", "lavfi", "-i",
        "sine=frequency=440:duration=\(seconds)", "-filter_complex",
        "[0:v]split=2[a][b];[b]scale=\(small.0):\(small.1)[b2]",
        "-map", "[a]", "-map", "[b2]", "-map", "1:a", "-map", "1:a", "-c:v", "libx264", "-preset", "ultrafast",
        "-b:v:0", large.2, "-b:v:1", small.2, "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "1",
        "-var_stream_map", "v:0,a:0 v:1,a:1", "-master_pl_name", "master.m3u8", "-hls_segment_filename",
        "\(building)/v%v_%d.ts", "\(building)/v%v.m3u8",
      ], timeout: 120)
    guard made.succeeded else { throw TestMediaError("ffmpeg could not make the HLS variants: \(made.stderr)") }
    if rename(building, folder) != 0 { try? FileManager.default.removeItem(atPath: building) }
    return master
  }

  private func width(_ args: [String]) throws -> Int {
    let png = NSTemporaryDirectory() + "orb-variant-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let r = Orb.run(args + ["--frame-at", "1", "--output", png, try Self.masterPlaylist()])
    XCTAssertEqual(r.status, 0, r.stderr)
    return try RGBImage(png: png).width
  }

  func testTheVariantIsTheOneAskedFor() throws {
    XCTAssertEqual(try width([]), 640, "the highest by default")
    XCTAssertEqual(try width(["--hls-bitrate", "min"]), 320)
    XCTAssertEqual(try width(["--hls-bitrate", "1M"]), 320, "1 Mb/s holds only the 400 kb/s variant")
    XCTAssertEqual(try width(["--hls-bitrate", "5M"]), 640)
    XCTAssertEqual(Orb.run(["--hls-bitrate", "fast", "--probe", try Self.masterPlaylist()]).status, 1)
  }

  /// In a window, without `--hls-bitrate`, the variant is the cheapest that fills the screen: on the 1920x1080 test
  /// screen a 1440p and a 1080p variant play the 1080p one, as the stats overlay (read through the accessible tree)
  /// says; `--hls-bitrate max` still takes the 1440p one.
  func testAWindowPlaysTheVariantThatFitsItsScreen() throws {
    try Screen.requireDisplay()
    try Accessibility.require()
    let master = try Self.masterPlaylist(
      named: "hls-screen-variants-v1", large: (2560, 1440, "4000k"), small: (1920, 1080, "2000k"), seconds: 2,
      rate: 10)
    for (args, expected) in [([String](), "1920x1080"), (["--hls-bitrate", "max"], "2560x1440")] {
      let title = "variant-\(UUID().uuidString.prefix(6))"
      let player = try BackgroundPlayer(["--title", title, "--paused"] + args + [master])
      defer { _ = player.wait(timeout: 1) }
      XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
      usleep(500_000)
      Screen.press("i", title: title)
      let video = { (tree: Accessibility.Node) in
        tree.all.map(\.text).joined(separator: "\n").split(separator: "\n").first { $0.hasPrefix("Video") }
      }
      let tree = try Accessibility.wait(player.process.processIdentifier) { video($0) != nil }
      XCTAssertTrue(
        video(tree)?.contains(expected) == true, "args \(args): \(String(describing: video(tree))); \(player.stderr)")
      Screen.press("q", title: title)
      XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    }
  }
}
