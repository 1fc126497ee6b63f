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

  /// A master playlist whose video variant takes its sound from an audio rendition (English) in a playlist of its
  /// own, `audio.m3u8`, which the caller may remove; 3 s of testsrc2 at 320x180 and a tone.
  static func renditionPlaylist() throws -> String {
    let folder = NSTemporaryDirectory() + "orb-rendition-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let made = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=3",
        "-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-map", "0:v", "-map", "1:a", "-c:v", "libx264",
        "-preset", "ultrafast", "-g", "25", "-b:v", "300k", "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time",
        "1", "-hls_playlist_type", "vod", "-var_stream_map", "a:0,agroup:aud,language:en,name:audio v:0,agroup:aud",
        "-master_pl_name", "master.m3u8", "-hls_segment_filename", "\(folder)/%v_%d.ts", "\(folder)/%v.m3u8",
      ], timeout: 120)
    guard made.succeeded else { throw TestMediaError("ffmpeg could not make the HLS rendition: \(made.stderr)") }
    return folder
  }

  /// An audio rendition whose playlist answers 404 is left out with a warning that names it and the answer, and
  /// the video plays on to its end: in `--probe`'s JSON, and in a window, where the host hears a `warning` event.
  func testAMissingAudioRenditionIsLeftOutWithAWarning() throws {
    let folder = try Self.renditionPlaylist()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let whole = try FaultServer(serving: folder)
    let probeWhole = Orb.run(["--probe", whole.url("file", "master.m3u8")])
    whole.stop()
    XCTAssertTrue(
      probeWhole.stdout.contains("\"channels\""), "with its playlist the rendition plays: \(probeWhole.stdout)")
    try FileManager.default.removeItem(atPath: "\(folder)/audio.m3u8")
    let server = try FaultServer(serving: folder)
    defer { server.stop() }
    let probe = Orb.run(["--probe", server.url("file", "master.m3u8")])
    XCTAssertEqual(probe.status, 0, probe.stderr)
    let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]
    XCTAssertEqual((json?["audio"] as? [Any])?.count, 0, probe.stdout)
    XCTAssertEqual((json?["video"] as? [Any])?.count, 1, probe.stdout)
    let warnings = json?["warnings"] as? [String] ?? []
    XCTAssertEqual(warnings.count, 1, probe.stdout)
    XCTAssertTrue(
      warnings.first?.contains("audio.m3u8") == true && warnings.first?.contains("404") == true, probe.stdout)

    try Screen.requireDisplay()
    let player = try BackgroundPlayer(["--events-fd", "1", server.url("file", "master.m3u8")])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertEqual(player.wait(timeout: 30), 0, player.stderr)
    let warning = player.events.first { $0["event"] as? String == "warning" }
    let message = warning?["message"] as? String ?? ""
    XCTAssertTrue(message.contains("audio.m3u8") && message.contains("404"), player.stdout)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertGreaterThan(ended?["position_ms"] as? Int ?? 0, 2500, "the video played on to its end: \(player.stdout)")
  }

  /// In a window, the variant is also no more than the network carried while the master opened: from a server
  /// that sends 30 KB/s (240 kb/s) a 600 kb/s and a 100 kb/s variant play the 100 kb/s one, though neither fills the
  /// screen; from a fast server, the 600 kb/s one. The stats overlay says which, with the throughput.
  func testAWindowPlaysAVariantTheNetworkCanCarry() throws {
    try Screen.requireDisplay()
    try Accessibility.require()
    let master = try Self.masterPlaylist(
      named: "hls-throughput-variants-v1", large: (640, 360, "600k"), small: (320, 180, "100k"), seconds: 3)
    let folder = (master as NSString).deletingLastPathComponent
    for (rate, expected) in [(30_000, "320x180"), (0, "640x360")] {
      let server = try FaultServer(serving: folder, options: ["--rate", "\(rate)"])
      defer { server.stop() }
      let title = "throughput-\(UUID().uuidString.prefix(6))"
      let player = try BackgroundPlayer(
        ["--title", title, "--paused", server.url(rate > 0 ? "trickle" : "file", "master.m3u8")])
      defer { _ = player.wait(timeout: 1) }
      XCTAssertNotNil(Screen.waitForWindow(title: title, timeout: 30), player.stderr)
      usleep(500_000)
      Screen.press("i", title: title)
      let lines = { (tree: Accessibility.Node) in
        tree.all.map(\.text).joined(separator: "\n").split(separator: "\n").map(String.init)
      }
      let tree = try Accessibility.wait(player.process.processIdentifier) {
        lines($0).contains { $0.hasPrefix("Video") }
      }
      let video = lines(tree).first { $0.hasPrefix("Video") } ?? ""
      let variant = lines(tree).first { $0.hasPrefix("Variant") } ?? ""
      XCTAssertTrue(video.contains(expected), "at \(rate) B/s: \(video); \(player.stderr)")
      XCTAssertTrue(variant.contains("network"), "the overlay names the throughput: \(variant)")
      Screen.press("q", title: title)
      XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    }
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
