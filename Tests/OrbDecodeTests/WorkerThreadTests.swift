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
}
