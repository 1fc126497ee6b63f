import Foundation

/// A blocking FIFO bounded by a cost (bytes, frames, seconds: the caller's unit), for one producer thread
/// and one consumer thread. `close()` wakes both sides for good.
/// Thread-safety: Safe; every member takes the queue's lock.
public final class BoundedQueue<Element>: @unchecked Sendable {
  private let condition = NSCondition()
  private var items: [(element: Element, cost: Int)] = []
  private var totalCost = 0
  private var closed = false
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
  public func push(_ element: Element, cost: Int = 1) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    while !closed && count > 0 && (totalCost + cost > capacity || count >= maxCount) {
      condition.wait()
    }
    if closed { return false }
    items.append((element, cost))
    totalCost += cost
    condition.broadcast()
    return true
  }

  /// Removes the oldest item, waiting while the queue is empty; nil once it is closed.
  public func pop() -> Element? {
    condition.lock()
    defer { condition.unlock() }
    while !closed && count == 0 { condition.wait() }
    if closed { return nil }
    return removeFirstLocked()
  }

  /// Like `pop`, but gives up after `timeout` seconds.
  public func pop(timeout: Double) -> Element? {
    condition.lock()
    defer { condition.unlock() }
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !closed && count == 0 {
      if !condition.wait(until: deadline) { break }
    }
    if closed || count == 0 { return nil }
    return removeFirstLocked()
  }

  /// Whether `close` was called (a timed-out `pop` and a closed queue both return nil).
  public var isClosed: Bool {
    condition.lock()
    defer { condition.unlock() }
    return closed
  }

  /// Whether nothing is queued now.
  public var isEmpty: Bool {
    condition.lock()
    defer { condition.unlock() }
    return count == 0
  }

  /// Whether a producer would wait now (the queue holds all it may).
  public var isFull: Bool {
    condition.lock()
    defer { condition.unlock() }
    return count > 0 && (totalCost >= capacity || count >= maxCount)
  }

  /// Drops everything queued (a seek), waking a blocked producer.
  public func clear() {
    condition.lock()
    items.removeAll()
    totalCost = 0
    condition.broadcast()
    condition.unlock()
  }

  /// Ends the queue: blocked and later calls return at once.
  public func close() {
    condition.lock()
    closed = true
    items.removeAll()
    totalCost = 0
    condition.broadcast()
    condition.unlock()
  }

  private var count: Int { items.count }

  private func removeFirstLocked() -> Element {
    // Queues hold tens of items, so removeFirst's shift is cheaper than a ring's bookkeeping.
    let item = items.removeFirst()
    totalCost -= item.cost
    condition.broadcast()
    return item.element
  }
}
