import Foundation
import XCTest

@testable import OrbDecode

/// A worker thread carries its name where `top -H`, `perf` and a debugger read it (the thread's comm), cut to the
/// system's 15 bytes, not the process's name.
final class WorkerThreadTests: XCTestCase {
  func testTheSystemSeesTheThreadsName() {
    let seen = Locked<String?>(nil)
    let done = expectation(description: "thread ran")
    startThread(named: "orb-test-worker-with-a-long-name") {
      let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
      seen.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
      done.fulfill()
    }
    wait(for: [done], timeout: 10)
    XCTAssertEqual(seen.withLock { $0 }, "orb-test-worker")
  }

  /// `answer(within:)` gives what the work answers in time, and nil, once the time is up, for work that waits on a lock
  /// held elsewhere (as the last word's read of a hung player's state): the caller goes on.
  func testAnAnswerIsWaitedForOnlyAsLongAsAsked() {
    XCTAssertEqual(answer(within: 5, named: "orb-test-answer") { 42 }, 42)
    let held = NSLock()
    held.lock()
    let started = Date()
    let none: Int? = answer(within: 0.3, named: "orb-test-answer") {
      held.lock()
      defer { held.unlock() }
      return 7
    }
    XCTAssertNil(none, "no answer while the lock is held")
    let waited = Date().timeIntervalSince(started)
    XCTAssertGreaterThanOrEqual(waited, 0.29, "waited as long as asked")
    XCTAssertLessThan(waited, 5, "and then went on")
    held.unlock()
  }
}
