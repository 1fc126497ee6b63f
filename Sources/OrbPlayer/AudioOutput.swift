import COrbAudio
import Foundation

/// Why there is no sound: PipeWire is not running, or refused the stream.
public struct AudioOutputError: Error, CustomStringConvertible, Sendable {
  public let description: String
}

/// A PipeWire playback stream (stereo Float32) fed through a lock-free ring. The real-time `process` callback is
/// C (COrbAudio): it copies from the ring, writes silence on underrun, and publishes when each frame is heard.
/// Thread-safety: `write`/`writable`/`flush` from one producer thread; `heardFrame`, `timing`, `setActive` from any.
public final class AudioOutput: @unchecked Sendable {
  public let sampleRate: Int
  private let handle: OpaquePointer
  private let lock = NSLock()
  /// Host time (ns) of the last resume: timing from cycles before it is stale.
  private var resumedAt: UInt64 = 0

  /// - Parameters:
  ///   - ringSeconds: how much audio may wait in the ring (latency of volume/EQ changes).
  /// - Throws: `AudioOutputError` when PipeWire is not reachable.
  public init(sampleRate: Int = 48000, ringSeconds: Double = 0.25, mediaName: String) throws {
    self.sampleRate = sampleRate
    var error = [CChar](repeating: 0, count: 64)
    guard
      let h = orb_audio_open(
        "Orb Player", mediaName, UInt32(sampleRate), UInt32(Double(sampleRate) * ringSeconds), &error)
    else {
      let text = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw AudioOutputError(description: text.isEmpty ? "PipeWire is not available" : text)
    }
    handle = h
  }

  deinit { orb_audio_close(handle) }

  /// Frames that fit in the ring now.
  public var writable: Int { Int(orb_audio_writable(handle)) }

  /// Absolute ring index of the next frame written.
  public var writeIndex: UInt64 { orb_audio_write_index(handle) }

  /// Writes interleaved stereo frames; returns how many fit.
  @discardableResult
  public func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
    Int(orb_audio_write(handle, samples.baseAddress, UInt32(samples.count / 2)))
  }

  /// Drops what waits in the ring (a seek).
  public func flush() { orb_audio_flush(handle) }

  /// Pauses or resumes the stream; the ring keeps its contents.
  public func setActive(_ active: Bool) {
    if active { lock.withLock { resumedAt = HostTime.now() } }
    orb_audio_set_active(handle, active)
  }

  public var timing: orb_audio_timing {
    var t = orb_audio_timing()
    orb_audio_get_timing(handle, &t)
    return t
  }

  /// False once the stream failed or PipeWire went away (state error or unconnected).
  public var isAlive: Bool { timing.state > 0 }

  /// The ring frame (fractional) being heard at host time `host` (ns of CLOCK_MONOTONIC), or nil when unknown
  /// (no cycle yet, or none since the last resume). Never beyond what has left the ring: on an underrun it stops.
  public func heardFrame(at host: UInt64) -> Double? {
    let t = timing
    guard t.now_ns > 0, UInt64(t.now_ns) >= lock.withLock({ resumedAt }) else { return nil }
    let elapsed = Double(Int64(bitPattern: host &- UInt64(t.now_ns))) / 1e9
    let heard = Double(t.consumed) - Double(t.pending) + max(0, elapsed) * Double(sampleRate)
    return min(heard, Double(t.consumed_now))
  }
}
