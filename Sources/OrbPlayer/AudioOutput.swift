import COrbAudio
import Foundation
import OrbDecode
import Synchronization

/// Why there is no sound: PipeWire is not running, or refused the stream.
/// Thread-safety: a value type.
public struct AudioOutputError: Error, CustomStringConvertible, Sendable {
  public let description: String
}

/// A PipeWire playback stream (stereo Float32) fed through a lock-free ring. The real-time `process` callback is
/// C (COrbAudio): it copies from the ring, writes silence on underrun, and publishes when each frame is heard.
/// Two locks are involved. Its own `Mutex` guards the host time of the last resume, and is a leaf: nothing is called
/// while it is held. PipeWire's thread-loop lock, inside COrbAudio, guards the `pw_stream` against PipeWire's loop
/// thread (`orb-audio`, which runs the stream's state callbacks); only `setActive` takes it (and the opening, before
/// that thread runs), never the real-time callback, the ring or the timing.
/// Thread-safety: Safe; `write`/`writable`/`flush` from one producer thread (the ring has one writer: the C
/// contract), `writeIndex`, `heardFrame`, `timing`, `isAlive`, `setActive` from any.
public final class AudioOutput: Sendable {
  /// What changes after opening.
  /// Thread-safety: a value type, only ever inside `state`.
  private struct State {
    /// Host time (ns) of the last resume: timing from cycles before it is stale.
    var resumedAt: UInt64 = 0
    /// Resumed, and not paused since: nothing is heard before the first resume or while paused.
    var active = false
  }

  public let sampleRate: Int
  private let stream: StreamHandle
  private let state = Mutex(State())

  /// - Parameters:
  ///   - ringSeconds: how much audio may wait in the ring (latency of volume/EQ changes).
  ///   - mediaName: the source; the stream is named by its file name (`MediaSource.displayName`): any client of
  ///     PipeWire reads it, and a URL's secrets stay out of it.
  /// - Throws: `AudioOutputError` when PipeWire is not reachable.
  public init(sampleRate: Int = 48000, ringSeconds: Double = 0.25, mediaName: String) throws {
    self.sampleRate = sampleRate
    var error = [CChar](repeating: 0, count: 64)
    guard
      let h = orb_audio_open(
        "Orb Player", MediaSource.displayName(mediaName), UInt32(sampleRate), UInt32(Double(sampleRate) * ringSeconds),
        &error)
    else {
      let text = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw AudioOutputError(description: text.isEmpty ? "PipeWire is not available" : text)
    }
    stream = StreamHandle(pointer: h)
  }

  deinit { orb_audio_close(stream.pointer) }

  /// Frames that fit in the ring now.
  public var writable: Int { Int(orb_audio_writable(stream.pointer)) }

  /// Absolute ring index of the next frame written.
  public var writeIndex: UInt64 { orb_audio_write_index(stream.pointer) }

  /// Writes interleaved stereo frames; returns how many fit.
  @discardableResult
  public func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
    Int(orb_audio_write(stream.pointer, samples.baseAddress, UInt32(samples.count / 2)))
  }

  /// Drops what waits in the ring (a seek).
  public func flush() { orb_audio_flush(stream.pointer) }

  /// All written so far is the whole sound: the output running dry after it is the end, not an underrun.
  public func markEnd() { orb_audio_mark_end(stream.pointer) }

  /// Pauses or resumes the stream; the ring keeps its contents. Takes PipeWire's thread-loop lock.
  public func setActive(_ active: Bool) {
    state.withLock {
      $0.active = active
      if active { $0.resumedAt = HostTime.now() }
    }
    orb_audio_set_active(stream.pointer, active)
  }

  public var timing: orb_audio_timing {
    var t = orb_audio_timing()
    orb_audio_get_timing(stream.pointer, &t)
    return t
  }

  /// Resumed and not paused since.
  public var isActive: Bool { state.withLock { $0.active } }

  /// False once the stream failed or PipeWire went away (state error or unconnected).
  public var isAlive: Bool { timing.state > 0 }

  /// The ring frame (fractional) being heard at host time `host` (ns of CLOCK_MONOTONIC), or nil when unknown
  /// (no cycle yet, or none since the last resume) or when nothing is heard (paused, or never resumed: a stream
  /// runs a cycle or two between connecting and its first pause, and a position extrapolated from that cycle ran
  /// ahead of the sound by up to 80 ms at the start, making the clock leap and pictures drop). Never beyond what
  /// was written to the ring: when it runs dry, the position stops where the sound does. Not capped at what the
  /// graph has taken so far: `host` is often a picture's presentation time, a refresh ahead, by which the graph will
  /// have taken its next cycle; capped there (with a sink that reports no delay, PipeWire's null sink) the position
  /// stood still for part of each 21 ms cycle and then jumped, and a 60 fps video dropped one picture in six.
  /// Extrapolated no further than `extrapolationLimit` past the last cycle: when the graph stops calling (the sound
  /// server stalled or stopped), the position stands there, where it ran on over all the ring held (a quarter of a
  /// second) and then stepped back when the server came back.
  public func heardFrame(at host: UInt64) -> Double? {
    let t = timing
    let (active, resumedAt) = state.withLock { ($0.active, $0.resumedAt) }
    guard active, t.now_ns > 0, UInt64(t.now_ns) >= resumedAt else { return nil }
    let since = Double(Int64(bitPattern: host &- UInt64(t.now_ns))) / 1e9
    let elapsed = min(since, Self.extrapolationLimit(cycleFrames: t.cycle_frames, rate: Double(sampleRate)))
    let heard = Double(t.consumed) - Double(t.pending) + max(0, elapsed) * Double(sampleRate)
    return min(heard, Double(writeIndex))
  }

  /// Seconds past a cycle the position may be extrapolated: the cycle's own length, then 50 ms for the look-ahead of
  /// a picture's presentation time (a refresh: 17 ms at 60 Hz, 42 ms at 24 Hz) and a cycle that comes late. In
  /// steady play the next cycle always comes first.
  static func extrapolationLimit(cycleFrames: UInt32, rate: Double) -> Double {
    Double(cycleFrames) / rate + 0.05
  }
}

/// COrbAudio's `orb_audio *`, so that an `AudioOutput` can be shared between threads.
/// Thread-safety: Safe, but declared so by hand, because the compiler cannot see into C; what makes it safe is
/// COrbAudio's contract, which `AudioOutput` keeps: the ring's indices are C atomics with one writer (the producer
/// thread) and one reader (the real-time callback); the timing is copied out under a sequence lock, from any thread;
/// the stream's state is atomic; `orb_audio_set_active` takes PipeWire's thread-loop lock. The pointer is opened
/// once, before the wrapper exists, and closed once, in `AudioOutput.deinit`, when no thread can reach it any more.
private struct StreamHandle: @unchecked Sendable {
  let pointer: OpaquePointer
}
