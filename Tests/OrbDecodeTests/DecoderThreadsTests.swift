import OrbTestSupport
import XCTest

@testable import OrbDecode

/// A video decoder gets one frame thread where one core decodes the stream with room to spare (each thread holds a
/// picture more and delays the first), and one a core where it does not.
final class DecoderThreadsTests: XCTestCase {
  private func video(_ codec: String, _ width: Int, _ height: Int, fps: Double?) -> VideoStreamInfo {
    VideoStreamInfo(
      index: 0, codec: codec, profile: nil, width: width, height: height, frameRate: fps, sampleAspectRatio: "1:1",
      rotation: 0, displayWidth: width, displayHeight: height, pixelFormat: "yuv420p", bitDepth: 8,
      colorPrimaries: "bt709", colorTransfer: "bt709", colorMatrix: "bt709", colorRange: "tv",
      effectiveColor: .init(matrix: "bt709", range: "limited", primaries: "bt709", transfer: "bt709"),
      mastering: nil, maxCll: nil, maxFall: nil, frameCount: nil, isDefault: true)
  }

  func testOneCoreTakesWhatItDecodesWithRoomToSpare() {
    XCTAssertEqual(Decoder.frameThreads(for: video("h264", 1920, 1080, fps: 30), bitRate: 5_000_000, cores: 8), 1)
    XCTAssertEqual(Decoder.frameThreads(for: video("h264", 1280, 720, fps: 60), bitRate: nil, cores: 8), 1)
    XCTAssertEqual(Decoder.frameThreads(for: video("vp9", 1280, 720, fps: 30), bitRate: nil, cores: 8), 1)
    XCTAssertEqual(Decoder.frameThreads(for: video("h264", 1920, 1080, fps: 60), bitRate: 20_000_000, cores: 8), 1)
    XCTAssertEqual(Decoder.frameThreads(for: video("hevc", 1920, 1080, fps: 24), bitRate: nil, cores: 2), 1)
  }

  func testHeavierStreamsTakeACoreEach() {
    XCTAssertEqual(Decoder.frameThreads(for: video("h264", 2560, 1440, fps: 60), bitRate: nil, cores: 8), 8)
    XCTAssertEqual(Decoder.frameThreads(for: video("hevc", 1920, 1080, fps: 60), bitRate: nil, cores: 2), 2)
    XCTAssertEqual(Decoder.frameThreads(for: video("hevc", 3840, 2160, fps: 24), bitRate: nil, cores: 64), 16)
    // A Blu-ray's 40 Mb/s is heavy at any size; one core still gets two threads.
    XCTAssertEqual(Decoder.frameThreads(for: video("h264", 1920, 1080, fps: 24), bitRate: 40_000_000, cores: 1), 2)
  }

  /// HEVC from x265, once as it codes by default (wavefront rows) and once told not to.
  private func hevc(wavefront: Bool) throws -> StreamParameters {
    let path = try TestMedia.path(
      wavefront ? "hevc-wpp.mkv" : "hevc-no-wpp.mkv",
      Media.testsrc(rate: 25) + [
        "-t", "0.2", "-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
        (wavefront ? "" : "wpp=0:") + "log-level=error",
      ])
    let source = try MediaSource(path)
    return try XCTUnwrap(source.parameters[try XCTUnwrap(source.info.video.first).index])
  }

  func testHEVCInWavefrontRowsSharesEachPictureAmongItsThreads() throws {
    let rows = try hevc(wavefront: true)
    let whole = try hevc(wavefront: false)
    XCTAssertEqual(rows.hevcWavefront, true)
    XCTAssertEqual(whole.hevcWavefront, false)
    let uhd = video("hevc", 3840, 2160, fps: 24)
    XCTAssertEqual(
      Decoder.threading(for: uhd, parameters: rows, bitRate: nil, cores: 2), .init(count: 2, slicesOnly: true))
    XCTAssertEqual(
      Decoder.threading(for: uhd, parameters: whole, bitRate: nil, cores: 2), .init(count: 2, slicesOnly: false))
    // One thread is one thread either way.
    XCTAssertEqual(
      Decoder.threading(for: video("hevc", 1920, 1080, fps: 24), parameters: rows, bitRate: nil, cores: 2),
      .init(count: 1, slicesOnly: false))
  }

  func testParameterSetsAreReadFromStartCodesToo() {
    // An Annex B PPS (00 00 00 01, NAL type 34) whose entropy_coding_sync_enabled_flag is set: ids 0 and 0 (ue "1"),
    // seven flag bits 0, ref idx defaults and init_qp 0 (three "1"), three flags 0 (no cu_qp_delta), cb and cr
    // offsets 0 ("1" "1"), five flags 0, then the flag: 11 0000000 111 000 11 00000 1 = C0 71 82.
    let pps: [UInt8] = [0, 0, 0, 1, 0x44, 0x01, 0xC0, 0x71, 0x82]
    XCTAssertEqual(HEVCParallelism.wavefront(configuration: pps), true)
    var off = pps
    off[8] = 0x80  // the flag cleared
    XCTAssertEqual(HEVCParallelism.wavefront(configuration: off), false)
    XCTAssertNil(HEVCParallelism.wavefront(configuration: [0, 0, 1, 0x40, 0x01, 0x0C]), "a VPS only")
  }
}
