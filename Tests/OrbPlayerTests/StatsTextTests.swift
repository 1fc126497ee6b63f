import OrbDecode
import XCTest

@testable import OrbPlayer

/// The stats overlay (`i`) says what an HDR tester needs to see.
final class StatsTextTests: XCTestCase {
  /// An HLS master playlist: the overlay names the variant playing, not the first one listed.
  /// Two times that read the same to the second are told apart by their milliseconds (a resume point past the end
  /// by half a second read "0:00:06 is past the end (0:00:06)").
  func testTimesThatReadTheSameShowTheirMilliseconds() {
    XCTAssertTrue(StatsText.clocks(6.5, 6.4) == ("0:00:06.500", "0:00:06.400"))
    XCTAssertTrue(StatsText.clocks(99, 3.02) == ("0:01:39", "0:00:03"))
    XCTAssertTrue(StatsText.clocks(3725.25, 3725.0) == ("1:02:05.250", "1:02:05.000"))
    XCTAssertTrue(StatsText.clocks(6.9996, 6.5) == ("0:00:07.000", "0:00:06.500"), "rounded up to the next second")
  }

  /// A time no file can have (a damaged resume file's 1e300, a stream's NaN) is said within bounds: converting it
  /// trapped, and the player died on opening the file.
  func testATimeOutOfAllBoundsIsSaidNotATrap() {
    XCTAssertEqual(StatsText.clock(1e300), "277777777:46:40")
    XCTAssertEqual(StatsText.clock(.nan), "0:00:00")
    XCTAssertEqual(StatsText.clock(-.infinity), "0:00:00")
    XCTAssertEqual(StatsText.clocks(1e300, 1e300).0, "277777777:46:40.000")
    XCTAssertEqual(StatsText.clocks(.infinity, .nan).0, "0:00:00.000")
  }

  func testTheHLSVariantPlayingIsNamed() {
    func variant(_ index: Int, _ width: Int, _ height: Int, _ bits: Int64) -> VideoStreamInfo {
      VideoStreamInfo(
        index: index, codec: "h264", profile: "High", width: width, height: height, frameRate: 25,
        sampleAspectRatio: "1:1", rotation: 0, displayWidth: width, displayHeight: height, pixelFormat: "yuv420p",
        bitDepth: 8, colorPrimaries: "bt709", colorTransfer: "bt709", colorMatrix: "bt709", colorRange: "tv",
        effectiveColor: .init(matrix: "bt709", range: "limited", primaries: "bt709", transfer: "bt709"),
        mastering: nil, maxCll: nil, maxFall: nil, frameCount: nil, isDefault: false, variantBitrate: bits)
    }
    var info = MediaInfo(source: "https://example.com/master.m3u8", container: "hls")
    info.video = [variant(0, 1280, 720, 3_000_000), variant(2, 640, 360, 800_000)]
    let lines = StatsText(
      info: info, frame: nil, stats: PlaybackStats(), presentation: "memory copies", device: "llvmpipe",
      position: 1, duration: nil, video: info.video[1]
    ).lines
    XCTAssertTrue(lines.contains { $0.hasPrefix("Video") && $0.contains("640x360") }, "\(lines)")
    XCTAssertTrue(lines.contains("Variant   0.80 Mb/s of 2 (HLS)"), "\(lines)")
  }

  func testHDRStreamLinesNameEverythingTheOverlayPromises() {
    var info = MediaInfo(source: "/media/demo.mkv", container: "matroska,webm", durationMs: 90_000)
    info.video = [
      VideoStreamInfo(
        index: 0, codec: "hevc", profile: "Main 10", width: 3840, height: 2160, frameRate: 23.976,
        sampleAspectRatio: "1:1", rotation: 0, displayWidth: 3840, displayHeight: 2160, pixelFormat: "yuv420p10le",
        bitDepth: 10, colorPrimaries: "bt2020", colorTransfer: "smpte2084", colorMatrix: "bt2020nc", colorRange: "tv",
        effectiveColor: .init(matrix: "bt2020nc", range: "limited", primaries: "bt2020", transfer: "smpte2084"),
        mastering: nil, maxCll: 1000, maxFall: 400, frameCount: nil, isDefault: true)
    ]
    let mastering = HDRMetadata.Mastering(
      red: .init(x: 0.68, y: 0.32), green: .init(x: 0.265, y: 0.69), blue: .init(x: 0.15, y: 0.06),
      whitePoint: .init(x: 0.3127, y: 0.329), minLuminance: 0.0001, maxLuminance: 1000)
    var stats = PlaybackStats()
    stats.presented = 480
    stats.dropped = 3
    stats.avOffset = -0.0042
    stats.firstFrameMs = 142
    stats.seekMsMedian = 88
    stats.seeks = 5
    let text = StatsText(
      info: info,
      frame: (
        width: 3840, height: 2160, pixelFormat: "yuv420p10le",
        color: ColorInfo(matrix: .bt2020nc, range: .limited, primaries: .bt2020, transfer: .pq),
        hdr: HDRMetadata(mastering: mastering, maxCLL: 1000, maxFALL: 400)
      ), stats: stats, presentation: "zero-copy GL import", device: "llvmpipe (LLVM 15.0.6, 256 bits)",
      toneMapping: "bt2390, detected peak 640 nits (mastering 1000 nits, MaxCLL 1000), target 203 nits",
      audio: "PipeWire, 48000 Hz stereo", position: 75.5,
      duration: 90
    ).lines.joined(separator: "\n")
    for expected in [
      "hevc (Main 10)", "3840x2160", "23.976 fps", "yuv420p10le", "bt2020 / smpte2084 / bt2020nc, limited range",
      "R 0.6800,0.3200", "W 0.3127,0.3290", "0.0001 – 1000 nits", "MaxCLL 1000 nits, MaxFALL 400 nits",
      "bt2390, detected peak 640 nits (mastering 1000 nits, MaxCLL 1000), target 203 nits",
      "zero-copy GL import on llvmpipe", "480 shown, 3 dropped", "first picture 142 ms, seeks 88 ms median of 5",
      "A/V -4.2 ms", "0:01:15 / 0:01:30", "PipeWire, 48000 Hz stereo",
    ] {
      XCTAssertTrue(text.contains(expected), "the overlay lacks \"\(expected)\":\n\(text)")
    }
  }

  /// An interlaced stream says how it is scanned and whether its fields are shown whole; a progressive one says
  /// nothing of fields unless every picture is split.
  func testFieldsLineSaysHowInterlacedVideoIsShown() {
    func lines(_ order: String, _ mode: DeinterlaceMode, shown: VideoFrame.Fields? = nil) -> [String] {
      var info = MediaInfo(source: "/media/recording.ts", container: "mpegts")
      info.video = [
        VideoStreamInfo(
          index: 0, codec: "mpeg2video", profile: "Main", width: 720, height: 576, frameRate: 25,
          sampleAspectRatio: "64:45", rotation: 0, displayWidth: 1024, displayHeight: 576, pixelFormat: "yuv420p",
          bitDepth: 8, colorPrimaries: "bt470bg", colorTransfer: "bt709", colorMatrix: "bt470bg", colorRange: "tv",
          effectiveColor: .init(matrix: "bt470bg", range: "limited", primaries: "bt470bg", transfer: "bt709"),
          mastering: nil, maxCll: nil, maxFall: nil, frameCount: nil, isDefault: true, fieldOrder: order)
      ]
      return StatsText(
        info: info, frame: nil, stats: PlaybackStats(), presentation: "memory copies", device: "CPU", position: 1,
        duration: nil, deinterlace: mode, fields: shown
      ).lines.filter { $0.hasPrefix("Fields") }
    }
    let whole = "each field shown whole (yadif), two pictures a frame"
    XCTAssertEqual(lines("tt", .auto), ["Fields    interlaced, top field first: \(whole)"])
    XCTAssertEqual(lines("bb", .no), ["Fields    interlaced, bottom field first: shown as stored"])
    XCTAssertEqual(lines("progressive", .auto), [])
    XCTAssertEqual(lines("progressive", .yes), ["Fields    not marked interlaced: \(whole)"])
    // The picture on screen speaks for itself: a stream whose header says progressive, interlaced midway.
    XCTAssertEqual(
      lines("progressive", .auto, shown: .field(topFirst: true, marked: true)),
      ["Fields    interlaced, top field first: \(whole)"])
    XCTAssertEqual(lines("tt", .auto, shown: .progressive), [], "a progressive stretch of an interlaced stream")
  }

  func testSDRStreamHasNoHDRLines() {
    let text = StatsText(
      info: nil,
      frame: (
        width: 640, height: 360, pixelFormat: "yuv420p", color: ColorInfo(matrix: .bt709, range: .limited),
        hdr: HDRMetadata()
      ), stats: PlaybackStats(), presentation: "memory copies", device: "llvmpipe", position: 0, duration: nil
    ).lines.joined(separator: "\n")
    XCTAssertFalse(text.contains("Mastering"))
    XCTAssertFalse(text.contains("MaxCLL"))
    XCTAssertFalse(text.contains("Tone map"))
  }
}
