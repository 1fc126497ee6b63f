/// A value that nothing else references, though the compiler cannot see it: it went into a C call beside a value
/// another thread may reach (av_read_frame fills a packet from the format context), and the compiler cannot see
/// that the C side kept no pointer to it. Taking `value` out gives a value the compiler treats as the caller's
/// alone, fit to be `sending`. Wrap only what a C function is documented not to retain; each use says why.
/// Thread-safety: whatever `Value` is; this type only carries the promise above across the compiler's checks.
public struct Unshared<Value>: @unchecked Sendable {
  public let value: Value
  public init(_ value: Value) { self.value = value }
}
