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
}
