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

  func testAClockHalfARefreshFromTheFramesShowsEveryFrame() {
    // 60 fps on a 60 Hz display, the clock half a refresh past the frames and jittering by 0.8 ms either way.
    let frame = 1.0 / 60
    var s = PresentationState(paused: false)
    _ = refresh(&s, now: 0, ready: frames(from: 0, count: 1, duration: frame))
    for n in 1...20 {
      let jitter = n % 2 == 0 ? 0.0008 : -0.0008
      let d = refresh(
        &s, now: Double(n) * frame + frame / 2 + jitter,
        ready: frames(from: Double(n) * frame, count: 2, duration: frame),
        shown: Frame(time: Double(n - 1) * frame, duration: frame))
      XCTAssertEqual(d.show, 0, "refresh \(n) shows the next frame")
      XCTAssertEqual(d.dropped, 0, "refresh \(n)")
    }
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
