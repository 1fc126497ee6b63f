import Foundation
import Synchronization
import XCTest

@testable import OrbDecode

/// The queue between the decode threads and their consumers.
final class BoundedQueueTests: XCTestCase {
  /// The video decode thread waits for room before it decodes another picture: the wait ends when the consumer
  /// takes the picture waiting, or when the queue is closed (playback stopped), never before.
  func testWaitingForRoomEndsWhenAPictureIsTakenOrTheQueueCloses() {
    let queue = BoundedQueue<Int>(capacity: 1)
    queue.waitForRoom()  // empty: at once
    queue.push(1)
    let done = Atomic(false)
    let waiter = Thread {
      queue.waitForRoom()
      done.store(true, ordering: .sequentiallyConsistent)
    }
    waiter.start()
    usleep(200_000)
    XCTAssertFalse(done.load(ordering: .sequentiallyConsistent), "went on while the queue was full")
    XCTAssertEqual(queue.pop(), 1)
    for _ in 0..<100 where !done.load(ordering: .sequentiallyConsistent) { usleep(10_000) }
    XCTAssertTrue(done.load(ordering: .sequentiallyConsistent), "still waiting once the picture was taken")

    queue.push(2)
    let closed = Atomic(false)
    Thread {
      queue.waitForRoom()
      closed.store(true, ordering: .sequentiallyConsistent)
    }.start()
    usleep(100_000)
    XCTAssertFalse(closed.load(ordering: .sequentiallyConsistent))
    queue.close()
    for _ in 0..<100 where !closed.load(ordering: .sequentiallyConsistent) { usleep(10_000) }
    XCTAssertTrue(closed.load(ordering: .sequentiallyConsistent), "still waiting on a closed queue")
  }
}
