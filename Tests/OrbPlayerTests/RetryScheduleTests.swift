import OrbPlayer
import XCTest

final class RetryScheduleTests: XCTestCase {
  func testFiveMinutesHoldFourteenTriesBackingOffToThirtySeconds() {
    var schedule = RetrySchedule()
    XCTAssertEqual(schedule.count, 14)
    XCTAssertEqual(Array(schedule.delays.prefix(6)), [1, 2, 4, 8, 30, 30])
    XCTAssertEqual(schedule.delays.reduce(0, +), 315, accuracy: 1e-9, "about five minutes")
    XCTAssertTrue(schedule.next()! == (1, 1))
    XCTAssertTrue(schedule.next()! == (2, 2))
    for _ in 3...14 { XCTAssertNotNil(schedule.next()) }
    XCTAssertNil(schedule.next(), "the budget is spent")
  }

  func testAShortBudgetHasFewTries() {
    XCTAssertEqual(RetrySchedule(budget: 3).delays, [1, 2])
    XCTAssertEqual(RetrySchedule(budget: 10).delays, [1, 2, 4, 8])
    XCTAssertEqual(RetrySchedule(budget: 0).delays, [], "no retry")
  }

  func testTheBudgetCountsTheTimeTheTriesTakeNotOnlyTheWaits() {
    // A server that takes the connection and never answers: each try ends after 15 s, so five minutes since the
    // first failure hold 9 tries, not the 14 of a server that refuses at once (which took 8.5 minutes).
    var schedule = RetrySchedule()
    var now: UInt64 = 5_000_000_000
    var tries: [Int] = []
    var said: [Int] = []
    while let (attempt, delay) = schedule.next(now: now) {
      tries.append(attempt)
      said.append(schedule.most(now: now))
      now += UInt64((delay + 15) * 1e9)
    }
    XCTAssertEqual(tries, Array(1...9))
    XCTAssertEqual(schedule.count, 14, "the most there can be, all failing at once")
    // What each retry event says: 14 at first, then fewer as each try's 15 s is spent, never below the tries made.
    XCTAssertEqual(said.first, 14)
    XCTAssertEqual(said, said.sorted(by: >), "\(said)")
    XCTAssertGreaterThanOrEqual(said.last ?? 0, 9, "\(said)")
    XCTAssertLessThanOrEqual(said.last ?? 99, 10, "the last try's event is close to the truth: \(said)")

    var quick = RetrySchedule(budget: 10)
    XCTAssertNotNil(quick.next(now: 0))
    XCTAssertNil(quick.next(now: 11_000_000_000), "ten seconds of trying are spent")
  }

  func testTimePausedByTheViewerIsNotSpentTrying() {
    var schedule = RetrySchedule(budget: 10)
    XCTAssertNotNil(schedule.next(now: 0))
    schedule.paused(for: 100)
    XCTAssertTrue(schedule.next(now: 103_000_000_000)! == (2, 2), "3 s of trying, 100 s paused")
    XCTAssertNil(schedule.next(now: 111_000_000_000))
  }
}
