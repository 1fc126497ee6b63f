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

/// Media time as a function of host time. While playing with a `master` (the audio output) that can tell, it is the
/// master's time: the media time being heard. Otherwise it runs on the host clock from its last anchor, advancing
/// at `speed`, and every answer from the master re-anchors it, so a switch between the two never jumps.
/// Thread-safety: Safe; every member takes the clock's lock.
public final class MediaClock: @unchecked Sendable {
  private let host: HostClock
  private let lock = NSLock()
  private var anchorHost: UInt64
  private var anchorMedia: Double
  private var speedValue: Double = 1
  private var playing = false
  private var master: MasterClock?

  public init(host: HostClock = MonotonicHostClock(), start: Double = 0) {
    self.host = host
    anchorHost = host.now()
    anchorMedia = start
  }

  /// Media seconds at host time `at` (nanoseconds; default now).
  public func time(at: UInt64? = nil) -> Double {
    lock.withLock {
      let when = at ?? host.now()
      if playing, let master, let heard = master.mediaTime(at: when) {
        anchorHost = when
        anchorMedia = heard
        return heard
      }
      return timeLocked(when)
    }
  }

  /// Makes `master` (the audio output) the source of time while it can tell; nil returns to the host clock.
  public func setMaster(_ master: MasterClock?) { lock.withLock { self.master = master } }

  /// Whether the master (audio) is driving the clock right now.
  public var isDrivenByMaster: Bool {
    lock.withLock { playing && master?.mediaTime(at: host.now()) != nil }
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
