import Foundation
import XCTest

@testable import OrbDecode

/// A local file is read only about two seconds ahead of its decoders, not to the bound of the packet queues (the
/// whole of a short file), and no decoder starves for it.
final class ReadAheadTests: XCTestCase {
  /// Waits until the demuxer has read `at least` seconds ahead of the start (or 10 s pass), then a moment more.
  private func settledReadAhead(_ pipeline: MediaPipeline, atLeast: Double) -> (seconds: Double?, atEnd: Bool) {
    let deadline = Date(timeIntervalSinceNow: 10)
    while Date() < deadline, (pipeline.buffered(after: 0).seconds ?? 0) < atLeast { usleep(20_000) }
    usleep(400_000)
    return pipeline.buffered(after: 0)
  }

  func testALocalFileIsReadTwoSecondsAheadAndPlaysToTheEnd() throws {
    let pipeline = try MediaPipeline(source: try Media.twelveSeconds(), audio: MediaPipeline.AudioRequest())
    defer { pipeline.close() }
    // Nothing is played: the decoders fill their small queues and the demuxer stops about two seconds past them.
    let read = settledReadAhead(pipeline, atLeast: 2)
    let seconds = try XCTUnwrap(read.seconds)
    XCTAssertGreaterThanOrEqual(seconds, 2)
    XCTAssertLessThan(seconds, 4, "12 s file, nothing played: read \(seconds) s ahead")
    XCTAssertFalse(read.atEnd)
    // Taking pictures moves the reading on: every one of them comes, and the end.
    let (frames, finished) = decodeAll(pipeline, timeout: 60)
    XCTAssertTrue(finished)
    XCTAssertEqual(frames.count, 300)
  }

  func testSoundThatStartsLateInTheFileStillComes() throws {
    let pipeline = try MediaPipeline(source: try Media.lateSound(), audio: MediaPipeline.AudioRequest())
    defer { pipeline.close() }
    // The first sound lies 6 s of pictures into the file: the demuxer reads past its two seconds to reach it.
    let sound = try XCTUnwrap(pipeline.sound)
    let deadline = Date(timeIntervalSinceNow: 10)
    var first: Double?  // the time of the first sample heard (what comes before it may be silence filled in)
    while first == nil, Date() < deadline, let chunk = sound.nextAudio(timeout: 1) {
      if let loud = chunk.samples.firstIndex(where: { abs($0) > 0.05 }) {
        first = chunk.time + Double(loud / chunk.channels) / Double(chunk.sampleRate)
      }
    }
    let time = try XCTUnwrap(first, "no sound decoded within 10 s")
    XCTAssertEqual(time, 6, accuracy: 0.1)
    let (frames, finished) = decodeAll(pipeline, timeout: 60)
    XCTAssertTrue(finished)
    XCTAssertEqual(frames.count, 300)
  }

  func testTheDemuxerRestsOnlyWhenEveryDecoderHasEnough() {
    var s = PipelineState()
    XCTAssertFalse(s.hasReadAhead(2, video: true, audio: true), "nothing read")
    s.videoDemuxedFrom = 0
    s.videoDemuxedUntil = 3
    s.videoTakenAt = 0.5
    XCTAssertTrue(s.hasReadAhead(2, video: true, audio: false))
    XCTAssertFalse(s.hasReadAhead(2, video: true, audio: true), "no sound read yet: read on")
    s.audioDemuxedFrom = 0
    s.audioDemuxedUntil = 3
    s.audioTakenAt = 1.5
    XCTAssertFalse(s.hasReadAhead(2, video: true, audio: true), "1.5 s of sound ahead: read on")
    s.audioStopped = true
    XCTAssertTrue(s.hasReadAhead(2, video: true, audio: true), "a stopped decoder takes nothing")
    s.restartReading()
    XCTAssertFalse(s.hasReadAhead(2, video: true, audio: false), "a seek starts the reading again")
  }
}
