import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// Seeking lands on the frame that covers the target, and that frame is the same picture as when decoding
/// straight through (the idea of FFmpeg's tests/api/api-seek-test.c).
final class SeekTests: XCTestCase {
  func testSeekLandsOnTheCoveringFrameWithTheSamePixelsAsStraightThrough() throws {
    // Keyframes at 0 and 1.2 s: 0.5 and 1.0 decode from 0 and drop what comes before; 1.5 starts at 1.2.
    let path = try Media.h264()
    let reference = try straightThrough(path)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    for target in [1.0, 0.5, 1.5, 1.23, 0.0, 1.96] {
      pipeline.seek(to: target)
      let frame = try XCTUnwrap(firstFrame(pipeline), "no frame after seek(to: \(target))")
      assertCovers(frame, target, matching: reference)
    }
  }

  /// A quick seek (dragging the slider) shows the key frame before the target, without decoding up to it; the sound
  /// starts there too, so picture and sound stay together.
  func testAQuickSeekShowsTheKeyFrameBeforeTheTarget() throws {
    let path = try Media.h264()
    let pipeline = try MediaPipeline(source: path, audio: MediaPipeline.AudioRequest())
    defer { pipeline.close() }
    pipeline.seek(to: 1.9, exact: false)
    let quick = try XCTUnwrap(firstFrame(pipeline))
    XCTAssertEqual(quick.time, 1.2, accuracy: 0.001, "the key frame at 1.2 s, not the frame at 1.9 s")
    let sound = try XCTUnwrap(pipeline.nextAudio(timeout: 5))
    XCTAssertLessThan(sound.time, 1.3, "the sound starts with the picture, at \(sound.time) s")
    pipeline.seek(to: 1.9, exact: true)
    XCTAssertEqual(try XCTUnwrap(firstFrame(pipeline)).time, 1.88, accuracy: 0.001, "an exact seek still is")
  }

  /// Matroska gives its frames no durations, so a variable-rate recording's frame is known to last until the next one
  /// only once that one is decoded: an exact seek still lands on the frame that covers the target, not on one before it
  /// that the nominal rate (15.25 fps here, for 30 fps then 10 fps) says lasts past the target. Frame stepping forward
  /// seeks just past the next frame's start, which this is.
  func testSeekInVariableRateMatroskaLandsOnTheCoveringFrame() throws {
    let path = try Media.variableRate(container: "mkv")
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    for (target, covering) in [(0.5005, 0.5), (0.2, 0.2), (0.9995, 29.0 / 30), (1.25, 1.2), (0.0345, 1.0 / 30)] {
      pipeline.seek(to: target)
      let frame = try XCTUnwrap(firstFrame(pipeline), "no frame after seek(to: \(target))")
      XCTAssertEqual(frame.time, covering, accuracy: 0.001, "seek(to: \(target))")
    }
  }

  func testRepeatedSeeksEachDeliverTheCoveringFrame() throws {
    // Seeking again and again, as a user dragging the slider does, forwards and back, from wherever the
    // pipeline is (often at the end of the file, where the demuxer waits).
    let path = try Media.h264()
    let reference = try straightThrough(path)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    for i in 0..<30 {
      let target = Double((i * 7) % 19) / 10
      pipeline.seek(to: target)
      let frame = try XCTUnwrap(firstFrame(pipeline), "no frame after seek #\(i) to \(target) s")
      assertCovers(frame, target, matching: reference)
    }
  }

  func testSeekAfterTheEndRestartsPlayback() throws {
    let path = try Media.h264()
    let reference = try straightThrough(path)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let (frames, finished) = decodeAll(pipeline, timeout: 60)
    XCTAssertTrue(finished)
    XCTAssertEqual(frames.count, reference.count)
    pipeline.seek(to: 1.0)
    let frame = try XCTUnwrap(firstFrame(pipeline), "no frame after seeking back from the end")
    assertCovers(frame, 1.0, matching: reference)
    // And it plays on from there to the end again.
    let (rest, restFinished) = decodeAll(pipeline, timeout: 60)
    XCTAssertTrue(restFinished)
    XCTAssertEqual(rest.count, reference.filter { $0.time > frame.time }.count)
  }

  func testStartingAtAPositionLikeResume() throws {
    let path = try Media.h264()
    let reference = try straightThrough(path)
    let pipeline = try MediaPipeline(source: path, start: 1.0)
    defer { pipeline.close() }
    let frame = try XCTUnwrap(firstFrame(pipeline))
    assertCovers(frame, 1.0, matching: reference)
  }

  /// A resume point before the video's first picture, in a file whose video starts after its sound (2 s here): the
  /// first picture is the video's first, and the sound plays from the resume point's neighbourhood, not "no picture
  /// could be decoded" (the seek went back for a key frame before the video's first and lost both).
  func testAResumePointBeforeTheVideoStartsShowsItsFirstPicture() throws {
    let path = try TestMedia.path(
      "video-after-sound.mkv",
      [
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4", "-itsoffset", "2", "-f", "lavfi",
        "-i", "testsrc2=size=320x240:rate=25:duration=2", "-map", "0:a", "-map", "1:v", "-c:v", "libx264",
        "-pix_fmt", "yuv420p", "-c:a", "libopus",
      ])
    for start in [1.5, 0.5] {
      let pipeline = try MediaPipeline(source: path, start: start, audio: MediaPipeline.AudioRequest())
      defer { pipeline.close() }
      let frame = try XCTUnwrap(firstFrame(pipeline), "no picture from a start at \(start) s")
      XCTAssertEqual(frame.time, 2.0, accuracy: 0.03, "from \(start) s: the video's first picture")
      let sound = try XCTUnwrap(pipeline.nextAudio(timeout: 5), "no sound from a start at \(start) s")
      XCTAssertLessThanOrEqual(sound.time, 2.0, "from \(start) s: the sound from before the first picture on")
    }
  }

  func testSeekInHEVC() throws {
    let path = try Clips.hevcHDR10()
    let reference = try straightThrough(path)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    for target in [0.5, 0.1] {
      pipeline.seek(to: target)
      let frame = try XCTUnwrap(firstFrame(pipeline), "no frame after seek(to: \(target))")
      assertCovers(frame, target, matching: reference)
    }
  }

  func testSeekInVP9() throws {
    let path = try Media.vp9()
    let reference = try straightThrough(path)
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    pipeline.seek(to: 1.0)
    let frame = try XCTUnwrap(firstFrame(pipeline), "no frame after seek(to: 1.0)")
    assertCovers(frame, 1.0, matching: reference)
  }

  /// In MPEG-TS with 5 s between key frames, a seek to 7.5 s that FFmpeg lands at 7.5 s gives no picture until the
  /// end of the file unless the demuxer goes back to the key frame at 5 s; a seek to 4.8 s must go back to 0.
  func testSeekInALongGOPTransportStreamFindsTheKeyFrameBeforeTheTarget() throws {
    let path = try Media.longGOPTransportStream()
    let reference = try straightThrough(path)
    let pipeline = try MediaPipeline(source: path, audio: MediaPipeline.AudioRequest())
    defer { pipeline.close() }
    for target in [7.5, 4.8, 6.2, 7.96, 2.0] {
      pipeline.seek(to: target)
      let frame = try XCTUnwrap(firstFrame(pipeline), "no frame after seek(to: \(target))")
      assertCovers(frame, target, matching: reference)
      let sound = try XCTUnwrap(pipeline.nextAudio(timeout: 5), "no sound after seek(to: \(target))")
      XCTAssertEqual(sound.time, target, accuracy: 0.1, "the sound starts at the target too")
    }
  }

  // MARK: helpers

  private func straightThrough(_ path: String) throws -> [DecodedFrame] {
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let (frames, finished) = decodeAll(pipeline, keepPixels: true, timeout: 60)
    XCTAssertTrue(finished, "straight-through decode of \(path) did not end")
    return frames
  }

  /// `frame` covers `target` (time <= target < time + duration) and has the pixels of the straight-through
  /// frame at the same time.
  private func assertCovers(
    _ frame: DecodedFrame, _ target: Double, matching reference: [DecodedFrame], file: StaticString = #filePath,
    line: UInt = #line
  ) {
    XCTAssertTrue(
      frame.time <= target + 1e-6 && target < frame.time + frame.duration - 1e-6,
      "after seek(to: \(target)) the frame at \(frame.time) s (lasting \(frame.duration) s) does not cover it",
      file: file, line: line)
    guard let same = reference.first(where: { abs($0.time - frame.time) < 1e-6 }) else {
      XCTFail("no straight-through frame at \(frame.time) s", file: file, line: line)
      return
    }
    XCTAssertEqual(frame.pixels.count, same.pixels.count, file: file, line: line)
    if frame.pixels != same.pixels {
      let differing = zip(frame.pixels, same.pixels).filter { $0 != $1 }.count
      XCTFail(
        "after seek(to: \(target)) the frame at \(frame.time) s differs from the straight-through one in "
          + "\(differing) of \(same.pixels.count) bytes", file: file, line: line)
    }
  }
}
