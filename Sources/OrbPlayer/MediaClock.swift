import Foundation
import Synchronization

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
/// Thread-safety: Safe; all of its state is one value behind a `Mutex`. The master is asked while it is held
/// (lock order: the clock before `AudioPlayback`).
public final class MediaClock: Sendable {
  private struct State {
    var anchorHost: UInt64
    var anchorMedia: Double
    var speed: Double = 1
    var playing = false
    var master: MasterClock?
    /// Started at a host time still to come (`start(_:at:playing:)`): before `anchorHost` it reads `anchorMedia`.
    var startsAhead = false

    func time(at host: UInt64) -> Double {
      guard playing else { return anchorMedia }
      let elapsed = Double(Int64(bitPattern: host &- anchorHost)) / 1e9
      return anchorMedia + (startsAhead ? max(0, elapsed) : elapsed) * speed
    }

    /// Anchors at `host` where the clock is now, so a change of speed or play state never jumps.
    mutating func reanchor(at host: UInt64) {
      anchorMedia = time(at: host)
      anchorHost = host
      startsAhead = false
    }
  }

  private let host: HostClock
  private let state: Mutex<State>

  public init(host: HostClock = MonotonicHostClock(), start: Double = 0) {
    self.host = host
    state = Mutex(State(anchorHost: host.now(), anchorMedia: start))
  }

  /// Media seconds at host time `at` (nanoseconds; default now).
  public func time(at: UInt64? = nil) -> Double {
    let when = at ?? host.now()
    return state.withLock { s in
      if s.playing, let master = s.master, let heard = master.mediaTime(at: when) {
        s.anchorHost = when
        s.anchorMedia = heard
        s.startsAhead = false
        return heard
      }
      return s.time(at: when)
    }
  }

  /// Makes `master` (the audio output) the source of time while it can tell; nil returns to the host clock.
  public func setMaster(_ master: MasterClock?) { state.withLock { $0.master = master } }

  /// Whether the master (audio) is driving the clock right now.
  public var isDrivenByMaster: Bool {
    let now = host.now()
    return state.withLock { s in s.playing && s.master?.mediaTime(at: now) != nil }
  }

  public var isPlaying: Bool { state.withLock { $0.playing } }
  public var speed: Double { state.withLock { $0.speed } }

  public func play() { change { $0.playing = true } }
  public func pause() { change { $0.playing = false } }
  public func setSpeed(_ s: Double) { change { $0.speed = s } }

  /// Jumps to media time `seconds` (a seek), keeping play/pause.
  public func set(_ seconds: Double) {
    let now = host.now()
    state.withLock {
      $0.anchorHost = now
      $0.anchorMedia = seconds
      $0.startsAhead = false
    }
  }

  /// Starts from media time `seconds` at host time `host` (a first picture's presentation time, often a refresh
  /// ahead of now), running if `playing`: it reads `seconds` until then and runs from there, so that the pictures
  /// after the first come when their time is due on screen rather than a refresh early.
  public func start(_ seconds: Double, at host: UInt64, playing: Bool) {
    state.withLock {
      $0.anchorHost = host
      $0.anchorMedia = seconds
      $0.playing = playing
      $0.startsAhead = true
    }
  }

  private func change(_ body: (inout State) -> Void) {
    let now = host.now()
    state.withLock { s in
      s.reanchor(at: now)
      body(&s)
    }
  }
}
