import Foundation
import XCTest

@testable import OrbPlayer

/// A host clock the test moves by hand.
final class ManualHostClock: HostClock, @unchecked Sendable {
  private let lock = NSLock()
  private var nanoseconds: UInt64 = 1_000_000_000
  func now() -> UInt64 { lock.withLock { nanoseconds } }
  func advance(seconds: Double) { lock.withLock { nanoseconds += UInt64(seconds * 1e9) } }
}

final class MediaClockTests: XCTestCase {
  func testStandsStillUntilPlayedThenFollowsTheHost() {
    let host = ManualHostClock()
    let clock = MediaClock(host: host, start: 5)
    host.advance(seconds: 2)
    XCTAssertEqual(clock.time(), 5)
    clock.play()
    host.advance(seconds: 1.5)
    XCTAssertEqual(clock.time(), 6.5, accuracy: 1e-9)
  }

  func testAClockStartedAheadWaitsForItsStart() {
    let host = ManualHostClock()
    let clock = MediaClock(host: host)
    let start = host.now() + 16_666_667  // the first picture's presentation time, a refresh on
    clock.start(12.5, at: start, playing: true)
    XCTAssertEqual(clock.time(), 12.5, "not before its start")
    XCTAssertEqual(clock.time(at: start + 16_666_667), 12.5 + 1.0 / 60, accuracy: 1e-9)
    host.advance(seconds: 0.1)
    XCTAssertEqual(clock.time(), 12.5 + 0.1 - 1.0 / 60, accuracy: 1e-9)
    // Paused before its start, it holds the start's time, and runs from there when played.
    let paused = MediaClock(host: host)
    paused.start(3, at: host.now() + 16_666_667, playing: true)
    paused.pause()
    host.advance(seconds: 1)
    XCTAssertEqual(paused.time(), 3)
    paused.play()
    host.advance(seconds: 0.5)
    XCTAssertEqual(paused.time(), 3.5, accuracy: 1e-9)
  }

  func testPauseFreezesAndResumeContinuesFromThere() {
    let host = ManualHostClock()
    let clock = MediaClock(host: host)
    clock.play()
    host.advance(seconds: 1)
    clock.pause()
    host.advance(seconds: 10)
    XCTAssertEqual(clock.time(), 1, accuracy: 1e-9)
    clock.play()
    host.advance(seconds: 0.5)
    XCTAssertEqual(clock.time(), 1.5, accuracy: 1e-9)
  }

  func testSpeedScalesMediaTimeFromTheMomentItChanges() {
    let host = ManualHostClock()
    let clock = MediaClock(host: host)
    clock.play()
    host.advance(seconds: 2)
    clock.setSpeed(1.5)
    host.advance(seconds: 2)
    XCTAssertEqual(clock.time(), 5, accuracy: 1e-9)
  }

  func testTimeAtAFutureHostTimePredicts() {
    let host = ManualHostClock()
    let clock = MediaClock(host: host)
    clock.play()
    XCTAssertEqual(clock.time(at: host.now() + 16_000_000), 0.016, accuracy: 1e-9)
  }

  func testSetJumpsForASeek() {
    let host = ManualHostClock()
    let clock = MediaClock(host: host)
    clock.play()
    host.advance(seconds: 3)
    clock.set(42)
    host.advance(seconds: 1)
    XCTAssertEqual(clock.time(), 43, accuracy: 1e-9)
  }
}
