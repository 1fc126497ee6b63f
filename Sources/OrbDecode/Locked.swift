import Foundation

/// A value reachable only through its lock, for state that threads also wait on: what `Mutex` (Synchronization)
/// gives, plus the condition variable it does not have. Every read and write of the value happens inside
/// `withLock` or `wait`, so no code can touch it unlocked; this is the one place that pairing is trusted by hand.
/// Rules: inside `body`, call no callback, and take only locks that come after this one in the lock order of the
/// type that uses it (written where that type is declared).
/// The value goes in, and each result comes out, `sending`, as with `Mutex`: a state that holds non-`Sendable`
/// things (packets on their way between threads) can hand them out only as values the compiler sees nothing else
/// holds, so taking an item out of the state (`removeFirst`) is how one leaves it; never return a reference the
/// state keeps.
/// Thread-safety: Safe.
public final class Locked<State>: @unchecked Sendable {
  private let condition = NSCondition()
  private var state: State
  private var changes: UInt64 = 0

  public init(_ state: sending State) { self.state = state }

  /// Runs `body` with the value, holding the lock.
  @discardableResult
  public func withLock<R>(_ body: (inout sending State) throws -> sending R) rethrows -> sending R {
    condition.lock()
    defer { condition.unlock() }
    return try body(&state)
  }

  /// Runs `body` with the value, holding the lock, then wakes every thread waiting in `wait`: for changes a
  /// waiter may be waiting for.
  @discardableResult
  public func change<R>(_ body: (inout sending State) throws -> sending R) rethrows -> sending R {
    condition.lock()
    defer {
      changes &+= 1
      condition.broadcast()
      condition.unlock()
    }
    return try body(&state)
  }

  /// How many `change`s (and notifying `wait`s) there have been: a reader that stopped looking at the value can tell
  /// whether anything a waiter would hear about has happened since.
  public var changeCount: UInt64 {
    condition.lock()
    defer { condition.unlock() }
    return changes
  }

  /// Waits until `ready` holds (or `deadline` passes), then runs `body` with the value and whether it is ready,
  /// all under the lock. Wakes on every `change`; `notifying` makes the body a `change` itself.
  public func wait<R>(
    until ready: (State) -> Bool, deadline: Date? = nil, notifying: Bool = false,
    then body: (inout sending State, _ ready: Bool) throws -> sending R
  ) rethrows -> sending R {
    condition.lock()
    defer {
      if notifying {
        changes &+= 1
        condition.broadcast()
      }
      condition.unlock()
    }
    while !ready(state) {
      if let deadline {
        if !condition.wait(until: deadline) { break }
      } else {
        condition.wait()
      }
    }
    return try body(&state, ready(state))
  }
}
