import XCTest

@testable import OrbDecode

/// Where decoded pictures and sound land in media time, without FFmpeg: stamps, missing stamps, seek targets,
/// holes and discontinuities.
final class TimelineTests: XCTestCase {
  func testPicturesWithoutStampsFollowEachOtherAtTheNominalRate() {
    var timing = VideoTiming(nominalDuration: 1.0 / 30, tick: 1.0 / 1_200_000)
    let times = (0..<4).map { _ in timing.place(stamped: nil, ownDuration: 0).time }
    XCTAssertEqual(times, [0, 1.0 / 30, 2.0 / 30, 3.0 / 30].map { $0 }, accuracy: 1e-12)
    timing.restart()
    XCTAssertEqual(timing.place(stamped: nil, ownDuration: 0).time, 0, "a seek in a raw stream starts again at 0")
  }

  func testAContainersRoundedDurationGivesWayToTheNominalOne() {
    // Matroska stores 1/24 s as 41 or 42 ms: the nominal duration is the exact one.
    var timing = VideoTiming(nominalDuration: 1.0 / 24, tick: 0.001)
    XCTAssertEqual(timing.place(stamped: 0, ownDuration: 0.041).duration, 1.0 / 24, accuracy: 1e-12)
    XCTAssertEqual(timing.place(stamped: 0.042, ownDuration: 0.042).duration, 1.0 / 24, accuracy: 1e-12)
    // A variable-rate recording: a frame that lasts 100 ms where the average says 66 keeps its own.
    var vfr = VideoTiming(nominalDuration: 59.0 / 900, tick: 1.0 / 15360)
    XCTAssertEqual(vfr.place(stamped: 1, ownDuration: 0.1).duration, 0.1, accuracy: 1e-12)
    XCTAssertEqual(vfr.place(stamped: 0, ownDuration: 1.0 / 30).duration, 1.0 / 30, accuracy: 1e-12)
  }

  func testAPictureLastsUntilTheNextOneStarts() {
    var lookahead = DurationLookahead<Int>(tick: 0.001)
    XCTAssertNil(lookahead.offer(0, time: 0, duration: 1.0 / 30), "held until the next picture says how long")
    // Matroska carries no duration for these: 30 fps, then 10 fps.
    XCTAssertEqual(lookahead.offer(1, time: 0.033, duration: 1.0 / 30)?.duration ?? 0, 1.0 / 30, accuracy: 1e-12)
    let slow = lookahead.offer(2, time: 0.133, duration: 1.0 / 30)
    XCTAssertEqual(slow?.picture, 1)
    XCTAssertEqual(slow?.duration ?? 0, 0.1, accuracy: 1e-9, "the picture before a 100 ms gap lasts 100 ms")
    // A jump of a minute is a discontinuity, not a picture shown for a minute.
    XCTAssertEqual(lookahead.offer(3, time: 60, duration: 0.04)?.duration ?? 0, 1.0 / 30, accuracy: 1e-12)
    let last = lookahead.finish()
    XCTAssertEqual(last?.picture, 3)
    XCTAssertEqual(last?.duration ?? 0, 0.04, accuracy: 1e-12, "the last picture keeps its own duration")
    XCTAssertNil(lookahead.finish())
    _ = lookahead.offer(4, time: 1, duration: 0.04)
    lookahead.restart()
    XCTAssertNil(lookahead.offer(5, time: 5, duration: 0.04), "a seek forgets the picture from before it")
  }

  func testASeekLetsOutThePictureThatCoversTheTarget() {
    var hold = SeekHold<Int>()
    hold.restart(at: 1.0)
    XCTAssertEqual(hold.offer(0, time: 0.90), [])
    XCTAssertEqual(hold.offer(1, time: 0.94), [])
    XCTAssertEqual(hold.offer(2, time: 0.98), [], "0.98 covers 1.0 unless the next one starts by then")
    XCTAssertEqual(hold.offer(3, time: 1.02), [2, 3], "it did not: 0.98-1.02 covers 1.0")
    XCTAssertEqual(hold.offer(4, time: 1.06), [4])
    // A target between pictures (a gap in a variable-rate stream): the one before it is shown first.
    hold.restart(at: 2.0)
    XCTAssertEqual(hold.offer(10, time: 1.90), [])
    XCTAssertEqual(hold.offer(11, time: 2.10), [10, 11])
    // A picture that starts at the target is the one.
    hold.restart(at: 3.0)
    XCTAssertEqual(hold.offer(15, time: 2.96), [])
    XCTAssertEqual(hold.offer(16, time: 3.0), [16], "at once: whatever comes next, it covers 3.0")
    XCTAssertEqual(hold.offer(17, time: 3.04), [17])
    // The stream ends before the target: the last picture there is comes out at the end.
    hold.restart(at: 9.0)
    XCTAssertEqual(hold.offer(20, time: 4.96), [])
    XCTAssertEqual(hold.finish(), 20)
    XCTAssertNil(hold.finish())
  }

  func testSoundBeforeTheTargetIsTrimmed() {
    var timeline = AudioTimeline(sampleRate: 48000)
    timeline.restart(at: 2.0)
    XCTAssertNil(timeline.place(frames: 1024, stamped: 1.9), "wholly before the target")
    let place = timeline.place(frames: 4800, stamped: 1.95)
    XCTAssertEqual(place?.drop, 2400)
    XCTAssertEqual(place?.time ?? 0, 2.0, accuracy: 1e-9)
    XCTAssertNil(place?.silence)
    XCTAssertEqual(timeline.nextTime ?? 0, 2.05, accuracy: 1e-9)
  }

  func testAHoleIsSilenceOfItsLength() {
    var timeline = AudioTimeline(sampleRate: 48000)
    _ = timeline.place(frames: 1024, stamped: 0)
    // Two AAC packets (2048 frames) did not decode: the next one starts 2048 frames later.
    let place = timeline.place(frames: 1024, stamped: Double(3 * 1024) / 48000)
    XCTAssertEqual(place?.silence?.start ?? -1, Double(1024) / 48000, accuracy: 1e-9)
    XCTAssertEqual(place?.silence?.frames, 2048)
    XCTAssertEqual(place?.drop, 0)
    // Pieces without stamps, and a jitter under 20 ms, leave no hole.
    XCTAssertNil(timeline.place(frames: 1024, stamped: nil)?.silence)
    XCTAssertNil(timeline.place(frames: 1024, stamped: (timeline.nextTime ?? 0) + 0.01)?.silence)
  }

  func testAJumpOfMinutesIsADiscontinuityNotAHole() {
    var timeline = AudioTimeline(sampleRate: 48000)
    _ = timeline.place(frames: 1024, stamped: 0)
    let place = timeline.place(frames: 1024, stamped: 600)
    XCTAssertNil(place?.silence, "ten minutes of silence would hold the picture ten minutes")
    XCTAssertEqual(place?.time ?? 0, 600, accuracy: 1e-9)
  }
}

private func XCTAssertEqual(
  _ a: [Double], _ b: [Double], accuracy: Double, file: StaticString = #filePath, line: UInt = #line
) {
  XCTAssertEqual(a.count, b.count, file: file, line: line)
  for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: accuracy, file: file, line: line) }
}
