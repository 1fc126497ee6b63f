import Foundation

/// Nanoseconds of CLOCK_MONOTONIC.
public enum HostTime {
  public static func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
  }

  public static func seconds(since start: UInt64) -> Double { Double(now() &- start) / 1e9 }
}

/// Where the master clock's time comes from; injected in tests.
public protocol HostClock: Sendable {
  /// Nanoseconds on a monotonic scale.
  func now() -> UInt64
}

/// CLOCK_MONOTONIC.
public struct MonotonicHostClock: HostClock {
  public init() {}
  public func now() -> UInt64 { HostTime.now() }
}

/// Media time as a function of host time: anchored at a (host, media) pair, advancing at `speed` while playing.
/// The audio output will re-anchor it from PipeWire's position; without audio it runs on the monotonic clock.
/// Thread-safety: Safe; every member takes the clock's lock.
public final class MediaClock: @unchecked Sendable {
  private let host: HostClock
  private let lock = NSLock()
  private var anchorHost: UInt64
  private var anchorMedia: Double
  private var speedValue: Double = 1
  private var playing = false

  public init(host: HostClock = MonotonicHostClock(), start: Double = 0) {
    self.host = host
    anchorHost = host.now()
    anchorMedia = start
  }

  /// Media seconds at host time `at` (nanoseconds; default now).
  public func time(at: UInt64? = nil) -> Double {
    lock.withLock { timeLocked(at ?? host.now()) }
  }

  public var isPlaying: Bool { lock.withLock { playing } }
  public var speed: Double { lock.withLock { speedValue } }

  public func play() { reanchor { $0.playing = true } }
  public func pause() { reanchor { $0.playing = false } }
  public func setSpeed(_ s: Double) { reanchor { $0.speedValue = s } }

  /// Jumps to media time `seconds` (a seek), keeping play/pause.
  public func set(_ seconds: Double) {
    lock.withLock {
      anchorHost = host.now()
      anchorMedia = seconds
    }
  }

  private func timeLocked(_ at: UInt64) -> Double {
    guard playing else { return anchorMedia }
    let elapsed = Double(Int64(bitPattern: at &- anchorHost)) / 1e9
    return anchorMedia + elapsed * speedValue
  }

  private func reanchor(_ change: (MediaClock) -> Void) {
    lock.withLock {
      let now = host.now()
      anchorMedia = timeLocked(now)
      anchorHost = now
      change(self)
    }
  }
}
