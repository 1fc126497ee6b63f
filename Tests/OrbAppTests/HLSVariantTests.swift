import Foundation
import OrbTestSupport
import XCTest

/// An HLS master playlist plays one variant, as `--hls-bitrate` (mpv's option) asks: the highest by default, the
/// lowest, or the highest within a bandwidth.
final class HLSVariantTests: XCTestCase {
  /// Two variants, 640x360 at 1.5 Mb/s and 320x180 at 300 kb/s, each with its own audio, in a folder of their own.
  static func masterPlaylist() throws -> String {
    let folder = TestMedia.directory + "/hls-variants-v1"
    let master = "\(folder)/master.m3u8"
    if FileManager.default.fileExists(atPath: master) { return master }
    let building = "\(folder).tmp-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: building, withIntermediateDirectories: true)
    let made = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=4",
        "-f", "lavfi", "-i", "sine=frequency=440:duration=4", "-filter_complex",
        "[0:v]split=2[a][b];[b]scale=320:180[b2]",
        "-map", "[a]", "-map", "[b2]", "-map", "1:a", "-map", "1:a", "-c:v", "libx264", "-preset", "ultrafast",
        "-b:v:0", "1500k", "-b:v:1", "300k", "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "1",
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
}
