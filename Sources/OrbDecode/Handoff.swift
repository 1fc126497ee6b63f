import Synchronization

/// One value on its way from the thread that made it to the one thread that will use it: a decoder opened while a
/// source opens, taken by its decode thread. The value goes in `sending` and comes out `sending` once, so the
/// compiler checks that neither side keeps a second use of it.
/// Thread-safety: Safe; the value is behind a `Mutex` until it is taken.
public final class Handoff<Value>: Sendable {
  private let slot: Mutex<Value?>

  public init(_ value: sending Value) { slot = Mutex(value) }

  /// The value, the first time; nil after.
  public func take() -> sending Value? { slot.withLock { $0.take() } }
}
