import XCTest

@testable import OrbPlayer

/// The scheduling policy on its own, driven with made-up times: what is shown at a refresh, when the clock starts,
/// holds and resumes, when playback waits for data and when it has ended.
final class PresentationStateTests: XCTestCase {
  typealias Frame = PresentationState.Frame

  /// A refresh at host time `host` seconds with the clock at `now`, 60 Hz, the source neither starved nor at its end.
  private func refresh(
    _ state: inout PresentationState, host: Double = 0, now: Double, playing: Bool = true, ready: [Frame],
    shown: Frame? = nil, hasVideo: Bool = true, starved: Bool = false, refilled: Bool = false,
    soundFinished: Bool = true
  ) -> PresentationState.Decision {
    state.refresh(
      .init(
        host: UInt64(host * 1e9), now: now, halfRefresh: 1.0 / 120, clockPlaying: playing, ready: ready,
        shown: shown, hasVideo: hasVideo, starved: starved, refilled: refilled, soundFinished: soundFinished))
  }

  private func frames(from start: Double, count: Int, duration: Double = 0.04) -> [Frame] {
    (0..<count).map { Frame(time: start + Double($0) * duration, duration: duration) }
  }

  func testTheFirstPictureStartsTheClockAtItsTime() {
    var s = PresentationState(paused: false)
    XCTAssertEqual(s.state, .loading)
    var d = refresh(&s, now: 0, playing: false, ready: [])
    XCTAssertEqual(d, .init(), "nothing to show yet, nothing to do")
    d = refresh(&s, now: 0, playing: false, ready: frames(from: 12.5, count: 2))
    XCTAssertEqual(d.clock, .start(at: 12.5))
    XCTAssertEqual(d.show, 0)
    XCTAssertFalse(d.startSound, "the sound waits until the picture is on screen")
    XCTAssertEqual(s.state, .playing)
    // A refresh on, the picture is on screen: the sound starts, and the next picture is shown when due.
    d = refresh(&s, now: 12.51, ready: frames(from: 12.54, count: 1), shown: Frame(time: 12.5, duration: 0.04))
    XCTAssertTrue(d.startSound)
    XCTAssertNil(d.clock, "the clock started with the first picture")
    XCTAssertNil(d.show)
    d = refresh(&s, now: 12.535, ready: frames(from: 12.54, count: 1), shown: Frame(time: 12.5, duration: 0.04))
    XCTAssertFalse(d.startSound, "the sound starts once")
    XCTAssertEqual(d.show, 0)
  }

  func testADisplaySlowToComeBackAfterTheFirstPictureDropsNothing() {
    // The window's first frames are slow: the refresh after the first picture comes two refreshes on.
    let frame = 1.0 / 60
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, playing: false, ready: frames(from: 0, count: 3, duration: frame))
    let d = refresh(
      &s, now: 2 * frame + 0.001, ready: frames(from: frame, count: 2, duration: frame),
      shown: Frame(time: 0, duration: frame))
    XCTAssertTrue(d.startSound)
    XCTAssertEqual(d.clock, .start(at: frame), "the clock goes on from a refresh after the first picture")
    XCTAssertEqual(d.show, 0, "the second picture, not the third")
    XCTAssertEqual(d.dropped, 0)
  }

  func testAPauseBeforeTheSoundStartsKeepsItSilent() {
    let shown = Frame(time: 0, duration: 0.04)
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, playing: false, ready: frames(from: 0, count: 2))
    let paused = s.togglePause()
    XCTAssertEqual(paused?.clockRuns, false)
    XCTAssertEqual(paused?.soundHeld, true)
    var d = refresh(&s, now: 0, playing: false, ready: frames(from: 0.04, count: 1), shown: shown)
    XCTAssertFalse(d.startSound)
    XCTAssertEqual(s.state, .paused)
    // Resumed after that refresh: the clock and the sound run at once.
    let resumed = s.togglePause()
    XCTAssertEqual(resumed?.clockRuns, true)
    XCTAssertEqual(resumed?.soundHeld, false)

    // Paused and resumed between the first picture and the next refresh: the clock runs again at once, the sound
    // still waits for that refresh.
    s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, playing: false, ready: frames(from: 0, count: 2))
    _ = s.togglePause()
    let again = s.togglePause()
    XCTAssertEqual(again?.clockRuns, true)
    XCTAssertEqual(again?.soundHeld, true)
    d = refresh(&s, now: 0.01, ready: frames(from: 0.04, count: 1), shown: shown)
    XCTAssertTrue(d.startSound)
  }

  func testStartingPausedShowsThePictureAndKeepsSilent() {
    var s = PresentationState(paused: true)
    var d = refresh(&s, now: 0, playing: false, ready: frames(from: 0, count: 1))
    XCTAssertEqual(d.show, 0)
    XCTAssertEqual(d.clock, .start(at: 0))
    XCTAssertFalse(d.startSound)
    XCTAssertEqual(s.state, .paused)
    d = refresh(&s, now: 0, playing: false, ready: frames(from: 0.04, count: 1), shown: Frame(time: 0, duration: 0.04))
    XCTAssertFalse(d.startSound, "paused: silent at the next refresh too")
    XCTAssertNil(d.show)
  }

  func testOnlyDueFramesAreShownAndLateOnesDropped() {
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1))
    let shown = Frame(time: 0, duration: 0.04)
    // Ready but not yet due: 0.04 is more than half a refresh ahead of 0.02.
    var d = refresh(&s, now: 0.02, ready: frames(from: 0.04, count: 3), shown: shown)
    XCTAssertNil(d.show)
    XCTAssertEqual(d.dropped, 0)
    // At 0.125 the frames at 0.04 and 0.08 are late, 0.12 is due.
    d = refresh(&s, now: 0.125, ready: frames(from: 0.04, count: 3), shown: shown)
    XCTAssertEqual(d.show, 2)
    XCTAssertEqual(d.dropped, 2)
    XCTAssertEqual(d.avOffset ?? 1, -0.005, accuracy: 1e-9)
  }

  /// 60 fps on a 60 Hz display, the ready ring holding the two frames after the one shown: plays `refreshes`
  /// refreshes, the clock at refresh n reading `clock(n)`, and says what was shown at each, and what was dropped and
  /// repeated from refresh `from` on.
  private func play60(
    refreshes: Int, from: Int, clock: (Int) -> Double
  ) -> (shown: [Int?], dropped: Int, repeated: Int) {
    let f = 1.0 / 60
    var s = PresentationState(paused: false)
    var current: Int?
    var shownAt: [Int?] = []
    var (dropped, repeated) = (0, 0)
    for n in 0..<refreshes {
      let next = (current ?? -1) + 1
      let d = refresh(
        &s, now: clock(n), ready: frames(from: Double(next) * f, count: 2, duration: f),
        shown: current.map { Frame(time: Double($0) * f, duration: f) })
      if let i = d.show { current = next + i }
      shownAt.append(d.show.map { next + $0 })
      if n >= from {
        dropped += d.dropped
        if d.repeated || d.show == nil { repeated += 1 }
      }
    }
    return (shownAt, dropped, repeated)
  }

  func testAClockHalfARefreshFromTheFramesShowsEveryFrame() {
    // The clock half a refresh past the frames from refresh 2 on (the clock jumps there, after the first picture
    // started it at its time) and jittering by 0.8 ms either way: once it has settled, each refresh shows the next
    // frame, none twice and none skipped.
    let f = 1.0 / 60
    let run = play60(refreshes: 24, from: 3) { n in
      n == 0 ? 0 : Double(n) * f + f / 2 + (n % 2 == 0 ? 0.0008 : -0.0008)
    }
    XCTAssertEqual(run.dropped, 0)
    XCTAssertEqual(run.repeated, 0)
  }

  func testAfterTheClockJumpsTheFrameNearestItIsShown() {
    // At refresh 10 the clock jumps 9 ms ahead (the sound took it over): frame 10 is then 9 ms past its time, frame
    // 11 7.7 ms to come. The nearer, 11, is shown, and from there each refresh shows the next frame while the clock
    // creeps 3 ms further ahead. With the hysteresis of even refreshes at the jump, 10 was shown, 9 ms behind the
    // clock, and the creep carried the clock past the point where a refresh skips a frame.
    let f = 1.0 / 60
    let run = play60(refreshes: 40, from: 11) { n in
      Double(n) * f + (n >= 10 ? 0.009 + Double(min(n - 10, 12)) * 0.00025 : 0)
    }
    XCTAssertEqual(run.shown[9], 9)
    XCTAssertEqual(run.shown[10], 11, "the frame nearest the clock after its jump")
    XCTAssertEqual(run.shown[11], 12)
    XCTAssertEqual(run.dropped, 0)
    XCTAssertEqual(run.repeated, 0)
  }

  func testAClockCreepingTowardTheNextFrameDropsNothing() {
    // The sound takes over at refresh 10 and the clock goes back 28.8 ms, so that frame 10 is shown at refresh 12,
    // 5.5 ms after its time; then, over 20 refreshes, the clock creeps 5 ms ahead (a cairo window's paint estimate
    // rising to what its frames take), jittering by half a millisecond: each refresh still shows the next frame.
    // Under the rule before, whose late edge was 4 ms nearer, the creep made a refresh skip a frame.
    let f = 1.0 / 60
    let run = play60(refreshes: 60, from: 12) { n in
      guard n >= 10 else { return Double(n) * f }
      let creep = Double(min(n - 10, 20)) * 0.00025
      return Double(n) * f - 0.0288 + creep + (n % 2 == 0 ? 0.0005 : -0.0005)
    }
    XCTAssertEqual(run.shown[12], 10)
    XCTAssertEqual(run.dropped, 0)
    XCTAssertEqual(run.repeated, 0)
    XCTAssertEqual(run.shown.last ?? nil, 57, "one new frame a refresh from frame 10 at refresh 12")
  }

  func testSlowDecodingRepeatsAFrameButIsNotBuffering() {
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1))
    _ = refresh(&s, now: 0.02, ready: [], shown: Frame(time: 0, duration: 0.04))  // the sound starts
    let d = refresh(&s, now: 0.06, ready: [], shown: Frame(time: 0, duration: 0.04), starved: false)
    XCTAssertTrue(d.repeated)
    XCTAssertNil(d.clock)
    XCTAssertFalse(s.isBuffering)
  }

  func testAStarvedSourceHoldsTheClockUntilRefilled() {
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1))
    let shown = Frame(time: 0, duration: 0.04)
    // Starved, but the next picture is not due yet: play on.
    var d = refresh(&s, now: 0.01, ready: [], shown: shown, starved: true)
    XCTAssertNil(d.clock)
    // Starved when the next picture is due: wait, at once.
    d = refresh(&s, now: 0.035, ready: [], shown: shown, starved: true)
    XCTAssertEqual(d.clock, .hold)
    XCTAssertTrue(d.holdSound)
    XCTAssertTrue(s.isBuffering)
    XCTAssertEqual(s.state, .playing)
    // A frame arrives but not enough is read ahead: still waiting, nothing shown.
    d = refresh(&s, now: 0.035, playing: false, ready: frames(from: 0.04, count: 1), shown: shown, refilled: false)
    XCTAssertEqual(d, .init())
    // Refilled: the clock goes on from where it waited and the frame that waited is shown.
    d = refresh(&s, now: 0.035, playing: false, ready: frames(from: 0.04, count: 1), shown: shown, refilled: true)
    XCTAssertEqual(d.clock, .resume)
    XCTAssertTrue(d.startSound)
    XCTAssertEqual(d.show, 0)
    XCTAssertFalse(s.isBuffering)
  }

  func testASeekWaitingForDataIsBufferingAfterHalfASecond() {
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1))
    _ = refresh(&s, host: 0.02, now: 0.02, ready: [], shown: Frame(time: 0, duration: 0.04))
    XCTAssertFalse(s.seeked(hasVideo: true))
    // Decoding up to the target (packets in hand): never buffering, however long.
    _ = refresh(&s, host: 1, now: 20, playing: false, ready: [], starved: false)
    _ = refresh(&s, host: 3, now: 20, playing: false, ready: [], starved: false)
    XCTAssertFalse(s.isBuffering)
    // Waiting for data (nothing to decode, the place not read yet): buffering once it has lasted half a second.
    _ = refresh(&s, host: 4, now: 20, playing: false, ready: [], starved: true)
    _ = refresh(&s, host: 4.4, now: 20, playing: false, ready: [], starved: true)
    XCTAssertFalse(s.isBuffering)
    _ = refresh(&s, host: 4.6, now: 20, playing: false, ready: [], starved: true)
    XCTAssertTrue(s.isBuffering)
    XCTAssertEqual(s.state, .playing)
    // Paused, it is a pause.
    _ = s.togglePause()
    XCTAssertFalse(s.isBuffering)
    _ = s.togglePause()
    // The picture comes: it plays from there.
    let d = refresh(&s, host: 5, now: 20, playing: false, ready: frames(from: 20, count: 1))
    XCTAssertEqual(d.clock, .start(at: 20))
    XCTAssertFalse(s.isBuffering)
    // Another seek starts the count again.
    _ = s.seeked(hasVideo: true)
    _ = refresh(&s, host: 6, now: 30, playing: false, ready: [], starved: true)
    XCTAssertFalse(s.isBuffering)
  }

  func testAPauseWhileWaitingForDataIsAPauseAndResumesOnlyWhenRefilled() {
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1))
    let shown = Frame(time: 0, duration: 0.04)
    _ = refresh(&s, now: 0.04, ready: [], shown: shown, starved: true)
    XCTAssertTrue(s.isBuffering)
    let paused = s.togglePause()
    XCTAssertEqual(paused?.clockRuns, false)
    XCTAssertEqual(paused?.soundHeld, true)
    XCTAssertFalse(s.isBuffering, "paused is not buffering")
    XCTAssertEqual(s.state, .paused)
    // Unpaused while still waiting: the clock and sound stay held.
    let resumed = s.togglePause()
    XCTAssertEqual(resumed?.clockRuns, false)
    XCTAssertEqual(resumed?.soundHeld, true)
    XCTAssertTrue(s.isBuffering)
  }

  func testSoundAloneWaitsOnlyWhenStarvedForAFifthOfASecond() {
    var s = PresentationState(paused: false)
    XCTAssertTrue(s.soundAlone(videoGivenUp: false))
    var d = refresh(&s, host: 10, now: 1, ready: [], hasVideo: false, starved: true, soundFinished: false)
    XCTAssertNil(d.clock)
    d = refresh(&s, host: 10.1, now: 1.1, ready: [], hasVideo: false, starved: true, soundFinished: false)
    XCTAssertNil(d.clock)
    d = refresh(&s, host: 10.25, now: 1.2, ready: [], hasVideo: false, starved: true, soundFinished: false)
    XCTAssertEqual(d.clock, .hold)
  }

  func testTheEndComesAfterTheLastPictureAndTheLastSound() {
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1))
    s.sourceFinished()
    let last = Frame(time: 4.96, duration: 0.04)
    XCTAssertFalse(refresh(&s, now: 4.98, ready: [], shown: last).ended, "the last picture's time is not over")
    XCTAssertFalse(refresh(&s, now: 5.01, ready: [], shown: last, soundFinished: false).ended, "sound still playing")
    XCTAssertTrue(refresh(&s, now: 5.02, ready: [], shown: last).ended)
    XCTAssertEqual(s.state, .ended)
  }

  func testASeekWaitsForItsFirstPictureAndIsNotLoading() {
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1))
    s.sourceFinished()
    XCTAssertFalse(s.seeked(hasVideo: true), "with video the first picture starts the clock, not the seek")
    XCTAssertFalse(s.sourceEnded)
    XCTAssertEqual(s.state, .playing)
    XCTAssertTrue(s.awaitsPicture)
    let d = refresh(&s, now: 3, ready: frames(from: 20, count: 2))
    XCTAssertEqual(d.clock, .start(at: 20))
    XCTAssertEqual(d.show, 0)
    XCTAssertTrue(s.seeked(hasVideo: false), "sound alone runs at once")
    XCTAssertFalse(s.awaitsPicture)
  }

  func testAFailureStopsEverything() {
    var s = PresentationState(paused: false)
    s.fail()
    XCTAssertEqual(s.state, .error)
    XCTAssertEqual(refresh(&s, now: 0, ready: frames(from: 0, count: 3)), .init())
    XCTAssertNil(s.togglePause())
  }
}
