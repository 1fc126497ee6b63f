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

  func testTheEnvironmentCanSetTheCount() {
    let uhd = video("hevc", 3840, 2160, fps: 24)
    XCTAssertEqual(Decoder.frameThreads(for: uhd, bitRate: nil, cores: 16, environment: ["ORB_VIDEO_THREADS": "6"]), 6)
    XCTAssertEqual(
      Decoder.frameThreads(
        for: video("h264", 1280, 720, fps: 30), bitRate: nil, environment: ["ORB_VIDEO_THREADS": "3"]),
      3)
    // Not a count from 1 to 64: the player's own choice.
    for odd in ["0", "65", "many", ""] {
      XCTAssertEqual(
        Decoder.frameThreads(for: uhd, bitRate: nil, cores: 16, environment: ["ORB_VIDEO_THREADS": odd]), 16, odd)
    }
  }

  func testNALUnitsAreReadFromAnHvcCRecordAndFromStartCodes() {
    // Annex B: a 4-byte and a 3-byte start code; the next start code's leading zero is not part of a unit.
    let annexB: [UInt8] = [0, 0, 0, 1, 0x40, 0x01, 0x0C, 0, 0, 1, 0x44, 0x01, 0xC0, 0, 0, 0, 1, 0x4E, 0x01, 0x89]
    XCTAssertEqual(
      HEVCBitstream.nalUnits(annexB).map(Array.init), [[0x40, 0x01, 0x0C], [0x44, 0x01, 0xC0], [0x4E, 0x01, 0x89]])
    // hvcC: 22 bytes of header, then one array (type byte, count 2) of two length-prefixed units.
    let hvcC: [UInt8] =
      [1] + [UInt8](repeating: 0, count: 21) + [1, 0x20, 0, 2, 0, 2, 0x40, 0x01, 0, 3, 0x44, 0x01, 0xC0]
    XCTAssertEqual(HEVCBitstream.nalUnits(hvcC).map(Array.init), [[0x40, 0x01], [0x44, 0x01, 0xC0]])
    XCTAssertEqual(HEVCBitstream.nalUnits(Array(hvcC.dropLast())).map(Array.init), [[0x40, 0x01]], "a cut unit")
  }
}
