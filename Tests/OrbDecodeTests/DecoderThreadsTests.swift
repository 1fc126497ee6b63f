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
}
