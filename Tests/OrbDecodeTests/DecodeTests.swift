import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// Decoding straight through: every frame ffmpeg decodes arrives, in order, with sane times and pixels.
final class DecodeTests: XCTestCase {
  func testH264WithBFramesDecodesEveryFrameInOrder() throws {
    let path = try Media.h264()
    let hasBFrames = try probedStream(path, 0)["has_b_frames"] as? Int ?? 0
    XCTAssertGreaterThan(hasBFrames, 0, "the clip should reorder frames (B-frames)")
    try assertDecodesLikeFFprobe(path, frameRate: 25)
  }

  func testHEVC10BitDecodesEveryFrameInOrder() throws {
    try assertDecodesLikeFFprobe(try Clips.hevcHDR10(), frameRate: 24)
  }

  func testVP9DecodesEveryFrameInOrder() throws {
    try assertDecodesLikeFFprobe(try Media.vp9(), frameRate: 25)
  }

  func testMPEG2InTSDecodesEveryFrameFromTimeZero() throws {
    // The TS starts at 1.4 s of stream time; the player counts from the start of the file.
    try assertDecodesLikeFFprobe(try Media.mpeg2(), frameRate: 25)
  }

  func testMPEG4InAVIDecodesEveryFrame() throws {
    try assertDecodesLikeFFprobe(try Media.mpeg4(), frameRate: 25)
  }

  /// A variable-frame-rate recording (30 fps for a second, then 10 fps): each frame lasts until the next one, not
  /// `1 / avg_frame_rate` (15.25 fps here, wrong for both halves).
  func testVariableFrameRateFramesLastUntilTheNextOne() throws {
    try assertVariableRateTiming(container: "mp4")
  }

  /// Matroska gives its video frames no duration of their own: the next frame's start is the only one there is.
  func testVariableFrameRateInMatroskaFramesLastUntilTheNextOne() throws {
    try assertVariableRateTiming(container: "mkv")
  }

  private func assertVariableRateTiming(container: String, file: StaticString = #filePath, line: UInt = #line)
    throws
  {
    let path = try Media.variableRate(container: container)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    var frames: [VideoFrame] = []
    while let frame = pipeline.nextFrame() { frames.append(frame) }
    XCTAssertEqual(frames.count, 60, file: file, line: line)
    for (a, b) in zip(frames, frames.dropFirst()) {
      XCTAssertEqual(a.duration, b.time - a.time, accuracy: 0.001, "frame at \(a.time) s", file: file, line: line)
    }
    XCTAssertEqual(frames.first?.duration ?? 0, 1.0 / 30, accuracy: 0.001, file: file, line: line)
    XCTAssertEqual(frames[45].duration, 0.1, accuracy: 0.001, file: file, line: line)
  }

  func testHDR10FramesCarryPQColourAnd10BitSamples() throws {
    let pipeline = try MediaPipeline(source: try Clips.hevcHDR10())
    defer { pipeline.close() }
    let frame = try XCTUnwrap(pipeline.nextFrame())
    XCTAssertEqual(frame.width, 320)
    XCTAssertEqual(frame.height, 240)
    XCTAssertEqual(frame.layout, .planar420)
    XCTAssertEqual(frame.bitDepth, 10)
    XCTAssertEqual(frame.bytesPerComponent, 2)
    XCTAssertEqual(frame.sampleScale, 65535.0 / 1023, accuracy: 1e-9)
    XCTAssertEqual(frame.pixelFormatName, "yuv420p10le")
    XCTAssertEqual(frame.color, ColorInfo(matrix: .bt2020nc, range: .limited, primaries: .bt2020, transfer: .pq))
    XCTAssertEqual(frame.hdr.maxCLL, 1000)
    XCTAssertEqual(frame.hdr.maxFALL, 400)
    XCTAssertEqual(try XCTUnwrap(frame.hdr.mastering).maxLuminance, 1000, accuracy: 1e-9)
    XCTAssertEqual(frame.planes.count, 3)
    XCTAssertEqual(frame.planes.map(\.width), [320, 160, 160])
    XCTAssertEqual(frame.planes.map(\.height), [240, 120, 120])
    // 10-bit samples sit in the low bits of little-endian 16-bit words: nothing above 1023, and some above 255.
    let luma = frame.planes[0]
    var highest = 0
    for row in 0..<luma.height {
      for column in 0..<luma.width {
        let offset = row * luma.stride + column * 2
        let value =
          Int(luma.base.load(fromByteOffset: offset, as: UInt8.self))
          | Int(luma.base.load(fromByteOffset: offset + 1, as: UInt8.self)) << 8
        highest = max(highest, value)
      }
    }
    XCTAssertLessThanOrEqual(highest, 1023, "a 10-bit sample in the low bits of its word")
    XCTAssertGreaterThan(highest, 255, "values above 8 bits show the samples are really 10-bit")
  }

  func testFirstDecodedPictureMatchesFFmpegs() throws {
    // All three planes of the first frame equal ffmpeg's own decode of it, byte for byte (no conversion on
    // either side: the clip is yuv420p).
    let path = try Media.h264()
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let frame = try XCTUnwrap(pipeline.nextFrame())
    let reference = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p",
        "-",
      ])
    XCTAssertTrue(reference.succeeded, reference.stderr)
    let ours = planeBytes(frame)
    XCTAssertEqual(ours.count, 320 * 240 * 3 / 2)
    XCTAssertEqual(ours.count, reference.stdoutData.count)
    XCTAssertTrue(ours == [UInt8](reference.stdoutData), "the first frame differs from ffmpeg's decode of it")
  }

  func testCorruptPacketsDecodeToTheEndWithoutHanging() throws {
    let path = try Media.corrupt()
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let (frames, finished) = decodeAll(pipeline, timeout: 60)
    XCTAssertTrue(finished, "decoding a damaged clip should end, not hang")
    XCTAssertGreaterThan(frames.count, 0, "damaged packets should not stop every frame")
    let times = frames.map(\.time)
    XCTAssertTrue(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "times should still rise: \(times)")
    print("corrupt.mp4: \(frames.count) frames, \(pipeline.health.corruptPackets) packets skipped")
  }

  func testCutShortDownloadPlaysWhatItHasAndEnds() throws {
    // moov first, so it opens; its mdat is cut in the middle, as a download that stopped.
    let full = try Media.h264FastStart()
    let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: full)[.size] as? Int)
    let path = try TestMedia.truncated(full, bytes: size / 2)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let (frames, finished) = decodeAll(pipeline, timeout: 60)
    XCTAssertTrue(finished, "a cut-short file should end, not hang")
    XCTAssertGreaterThan(frames.count, 5)
    XCTAssertLessThan(frames.count, 50)
  }

  func testAudioOnlyFileHasNoVideoToPlay() throws {
    let path = try Media.audioOnly()
    let info = try MediaSource(path).info
    XCTAssertEqual(info.video.count, 0)
    XCTAssertEqual(info.audio.count, 1)
    XCTAssertThrowsError(try MediaPipeline(source: path)) { error in
      let mediaError = error as? MediaError
      XCTAssertEqual(mediaError?.kind, .unplayable, "\(error)")
      XCTAssertEqual(mediaError?.reason, "no video stream in it")
    }
  }

  // MARK: helpers

  /// Decodes `path` to the end and compares with ffprobe: the same number of frames, times strictly
  /// increasing from about 0, one frame interval apart on average, each lasting 1 / `frameRate`.
  private func assertDecodesLikeFFprobe(
    _ path: String, frameRate: Double, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let expected = FFprobe.frameCount(path)
    XCTAssertGreaterThan(expected, 0, "ffprobe counted no frames in \(path)", file: file, line: line)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let (frames, finished) = decodeAll(pipeline, timeout: 60)
    XCTAssertTrue(finished, "decoding did not end within 60 s", file: file, line: line)
    XCTAssertEqual(frames.count, expected, "frames decoded vs ffprobe -count_frames", file: file, line: line)
    XCTAssertNil(pipeline.nextFrame(), "the end stays the end", file: file, line: line)
    XCTAssertEqual(pipeline.health.corruptPackets, 0, file: file, line: line)
    guard let first = frames.first, let last = frames.last else { return }
    let times = frames.map(\.time)
    for (i, (a, b)) in zip(times, times.dropFirst()).enumerated() where !(a < b) {
      XCTFail("frame \(i + 1) at \(b) s does not follow frame \(i) at \(a) s", file: file, line: line)
    }
    XCTAssertEqual(first.time, 0, accuracy: 0.05, "the first frame starts the file", file: file, line: line)
    // A frame lasts until the next one: a constant rate is exact however the container rounds it (not the first
    // frame, which AVI's timestamps give twice the length).
    let middle = frames[frames.count / 2]
    XCTAssertEqual(middle.duration, 1 / frameRate, accuracy: 1e-6, file: file, line: line)
    if frames.count > 1 {
      let step = (last.time - first.time) / Double(frames.count - 1)
      XCTAssertEqual(step, 1 / frameRate, accuracy: 1e-3, "mean frame interval", file: file, line: line)
    }
  }
}
