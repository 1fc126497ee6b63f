import Foundation
import Synchronization

/// A blocking FIFO bounded by a cost (bytes, frames, seconds: the caller's unit), for one producer thread
/// and one consumer thread. `close()` wakes both sides for good.
/// Thread-safety: Safe; its items and counts are one value behind a `Locked`. An item need not be `Sendable`: it is
/// `sending` in and out, so the compiler checks that the producer keeps no reference to what it pushed and that
/// what a consumer pops belongs to it alone (an AVPacket, say, owned by one thread at a time).
public final class BoundedQueue<Element>: Sendable {
  private struct State {
    var items: [(element: Element, cost: Int)] = []
    var totalCost = 0
    var closed = false

    var count: Int { items.count }

    mutating func removeAll() {
      items.removeAll()
      totalCost = 0
    }
  }

  private let state = Locked(State())
  private let capacity: Int
  private let maxCount: Int

  /// - Parameters:
  ///   - capacity: the most total cost held; one item is always accepted into an empty queue.
  ///   - maxCount: the most items held, whatever their cost.
  public init(capacity: Int, maxCount: Int = .max) {
    self.capacity = capacity
    self.maxCount = maxCount
  }

  /// Appends, waiting while the queue is full. Returns false (and drops `element`) once the queue is closed.
  @discardableResult
  public func push(_ element: sending Element, cost: Int = 1) -> Bool {
    let (capacity, maxCount) = (capacity, maxCount)
    // The lock's body may take the item only out of a value of its own: a captured `sending` parameter is not
    // disconnected from the caller in the compiler's eyes, a `Mutex` made from it is.
    let handed = Mutex<Element?>(element)
    return state.wait(
      until: { s in s.closed || s.count == 0 || (s.totalCost + cost <= capacity && s.count < maxCount) },
      notifying: true,
      then: { s, _ -> Bool in
        guard !s.closed, let element = handed.withLock({ $0.take() }) else { return false }
        s.items.append((element, cost))
        s.totalCost += cost
        return true
      })
  }

  /// Removes the oldest item, waiting while the queue is empty; nil once it is closed.
  public func pop() -> sending Element? { pop(until: nil) }

  /// Like `pop`, but gives up after `timeout` seconds.
  public func pop(timeout: Double) -> sending Element? { pop(until: Date(timeIntervalSinceNow: timeout)) }

  private func pop(until deadline: Date?) -> sending Element? {
    // Notifying: a producer may be waiting for room.
    state.wait(
      until: { $0.closed || $0.count > 0 }, deadline: deadline, notifying: true,
      then: { s, _ -> sending Element? in
        if s.closed || s.count == 0 { return nil }
        // Queues hold tens of items, so removeFirst's shift is cheaper than a ring's bookkeeping. The item leaves
        // the queue's state here, so it belongs to the caller alone.
        s.totalCost -= s.items[0].cost
        return s.items.removeFirst().element
      })
  }

  /// Whether `close` was called (a timed-out `pop` and a closed queue both return nil).
  public var isClosed: Bool { state.withLock { $0.closed } }

  /// Whether nothing is queued now.
  public var isEmpty: Bool { state.withLock { $0.count == 0 } }

  /// Whether a producer would wait now (the queue holds all it may).
  public var isFull: Bool {
    let (capacity, maxCount) = (capacity, maxCount)
    return state.withLock { $0.count > 0 && ($0.totalCost >= capacity || $0.count >= maxCount) }
  }

  /// Waits while a producer would wait to push (the queue holds all it may); returns at once once it is closed.
  public func waitForRoom() {
    let (capacity, maxCount) = (capacity, maxCount)
    state.wait(
      until: { s in s.closed || s.count == 0 || (s.totalCost < capacity && s.count < maxCount) },
      then: { _, _ in })
  }

  /// Drops everything queued (a seek), waking a blocked producer.
  public func clear() { state.change { $0.removeAll() } }

  /// Ends the queue: blocked and later calls return at once.
  public func close() {
    state.change {
      $0.closed = true
      $0.removeAll()
    }
  }
}

extension BoundedQueue where Element: Sendable {
  /// The oldest item, left in the queue, waiting up to `timeout` seconds for one; nil when none came or the queue is
  /// closed. For a look from another thread than the consumer's: what it sees may be popped at any moment.
  public func peek(timeout: Double) -> Element? {
    state.wait(
      until: { $0.closed || $0.count > 0 }, deadline: Date(timeIntervalSinceNow: timeout),
      then: { s, _ in s.closed ? nil : s.items.first?.element })
  }
}
