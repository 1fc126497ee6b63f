import Foundation
import OrbDSP
import OrbDecode

/// What turns decoded audio into the stereo output: the DSP chain (time-stretch, EQ, night mode, remap, volume).
/// Thread-safety: `process` and `reset` are called on the audio feed thread only.
public protocol AudioProcessing: AnyObject {
  /// Interleaved input of `channels` channels → interleaved stereo.
  func process(_ samples: [Float], channels: Int) -> [Float]
  /// Media seconds that went in but have not come out yet (time-stretch buffering).
  var latency: Double { get }
  /// The current speed: output of one second lasts 1/speed seconds.
  var speed: Double { get }
  /// Forgets buffered audio (a seek).
  func reset()
  /// What is still held back, at the end of the stream (interleaved stereo).
  func flush() -> [Float]
}

/// A source of the master clock: which media time is heard at a host time.
public protocol MasterClock: AnyObject, Sendable {
  /// Media seconds heard at host time `host` (ns of CLOCK_MONOTONIC), or nil when the master cannot tell now
  /// (nothing playing yet, after a seek, after the end).
  func mediaTime(at host: UInt64) -> Double?
}

/// Feeds one pipeline's audio through the DSP chain into the PipeWire output on its own thread, and knows, for each
/// frame in the output, which media time it carries: that makes it the master clock.
/// When PipeWire goes away, the audio is let go at the pace of the clock (which falls back to the host clock) and a
/// new output is tried every two seconds; once one connects, `onOutputRestored` asks the player to refill from where
/// it is, so sound comes back in step with the picture.
/// Thread-safety: Safe; the mapping and the output are guarded by `lock`, the DSP chain is touched only by the feed
/// thread.
public final class AudioPlayback: MasterClock, @unchecked Sendable {
  private struct Anchor {
    var frame: UInt64
    var media: Double
    var speed: Double
  }

  /// Called on the feed thread when a lost output has come back: seek to the current position to refill.
  private let onOutputRestored: (@Sendable () -> Void)?
  /// Called on the feed thread, once per loss, when the output went away.
  private let onOutputLost: (@Sendable () -> Void)?

  private let sound: SoundSource
  private let processor: AudioProcessing
  private let makeOutput: () throws -> AudioOutput
  /// Media time now, from the player's clock (used to pace audio while there is no output).
  private let clockTime: () -> Double
  private let lock = NSCondition()
  // Guarded by `lock`:
  private var currentOutput: AudioOutput?
  private var anchors: [Anchor] = []
  private var stopped = false
  private var paused = true
  private var flushRequested = false
  /// Ring index after the last frame of the stream's end; nil until the end is reached.
  private var endFrame: UInt64?
  /// The pipeline's audio ended while there was no output to play it.
  private var endedSilently = false
  private var generation = 0

  public init(
    sound: SoundSource, output: AudioOutput, processor: AudioProcessing,
    reconnect: @escaping () throws -> AudioOutput, clockTime: @escaping () -> Double,
    onOutputLost: (@Sendable () -> Void)? = nil, onOutputRestored: (@Sendable () -> Void)? = nil
  ) {
    self.onOutputLost = onOutputLost
    self.onOutputRestored = onOutputRestored
    self.sound = sound
    currentOutput = output
    self.processor = processor
    makeOutput = reconnect
    self.clockTime = clockTime
  }

  /// The PipeWire output now, if there is one.
  public var output: AudioOutput? { lock.withLock { currentOutput } }

  public func start() {
    let t = Thread { [self] in feedLoop() }
    t.name = "orb-audio-feed"
    t.start()
  }

  public func stop() {
    lock.withLock {
      stopped = true
      lock.broadcast()
    }
  }

  /// Call after the source's `seek`: the feed thread drops what the output holds and what the chain buffered, and
  /// takes only audio of the new seek generation from then on.
  public func flushForSeek() {
    lock.withLock {
      flushRequested = true
      anchors.removeAll()
      endFrame = nil
      endedSilently = false
      generation = sound.currentGeneration
      lock.broadcast()
    }
  }

  public func setPaused(_ paused: Bool) {
    let out = lock.withLock { () -> AudioOutput? in
      self.paused = paused
      return currentOutput
    }
    out?.setActive(!paused)
  }

  /// Whether everything decoded has been heard (the audio reached its end).
  public func finished(at host: UInt64) -> Bool {
    let (end, out, silent) = lock.withLock { (endFrame, currentOutput, endedSilently) }
    if silent { return true }
    guard let end, let out else { return false }
    guard let heard = out.heardFrame(at: host) else { return true }
    return heard >= Double(end) - 1
  }

  /// Audio cycles that found the ring empty (the decoder or the DSP fell behind), in the current output.
  public var underruns: Int { Int(output?.timing.underruns ?? 0) }

  public func mediaTime(at host: UInt64) -> Double? {
    guard let out = output, out.isAlive, let heard = out.heardFrame(at: host) else { return nil }
    return lock.withLock {
      if let end = endFrame, heard >= Double(end) - 1 { return nil }  // drained: the host clock takes over
      guard let anchor = anchors.last(where: { Double($0.frame) <= heard }) else { return nil }
      return anchor.media + (heard - Double(anchor.frame)) / Double(out.sampleRate) * anchor.speed
    }
  }

  private func feedLoop() {
    var held: AudioChunk?  // decoded while there was no output, waiting for the clock to reach it
    var lastAttempt = Date.distantPast
    while true {
      let (isStopped, flush, current, out) = lock.withLock { () -> (Bool, Bool, Int, AudioOutput?) in
        let f = flushRequested
        flushRequested = false
        return (stopped, f, generation, currentOutput)
      }
      if isStopped || sound.isClosed { return }
      if flush {
        // Flushed here, on the one thread that writes the ring (the output's contract).
        out?.flush()
        processor.reset()
        held = nil
      }
      if let out, !out.isAlive {
        lock.withLock {
          currentOutput = nil
          anchors.removeAll()
        }
        onOutputLost?()
        continue
      }
      if out == nil {
        // No PipeWire: try again now and then; meanwhile let the audio go as the clock passes it.
        if Date().timeIntervalSince(lastAttempt) >= 2 {
          lastAttempt = Date()
          if let fresh = try? makeOutput() {
            let isPaused = lock.withLock {
              currentOutput = fresh
              return paused
            }
            fresh.setActive(!isPaused)
            processor.reset()
            held = nil
            onOutputRestored?()
            continue
          }
        }
        if held == nil { held = sound.nextAudio(timeout: 0.05) }
        if let chunk = held {
          if chunk.time + chunk.duration <= clockTime() { held = nil } else { usleep(20_000) }
        } else {
          if sound.audioEnded(generation: current) { lock.withLock { endedSilently = true } }
          usleep(20_000)
        }
        continue
      }
      guard let out else { continue }
      guard let chunk = sound.nextAudio(timeout: 0.05) else {
        // The end of the audio (or a seek in progress): mark where it ends once, then wait for a seek or stop.
        let reachedEnd = lock.withLock {
          endFrame == nil && !flushRequested && sound.currentGeneration == generation
            && sound.audioEnded(generation: generation)
        }
        if reachedEnd {
          // The time-stretch holds the last few milliseconds back: let them out before marking the end.
          let tail = processor.flush()
          if !tail.isEmpty { write(tail, to: out) }
          lock.withLock { endFrame = out.writeIndex }
        }
        // Nothing now (a seek in progress, the end, or a closed pipeline): wait a little, never spin.
        lock.withLock {
          if !stopped && !flushRequested { _ = lock.wait(until: Date(timeIntervalSinceNow: 0.02)) }
        }
        continue
      }
      // Audio from before the last seek (or from after one whose flush is not handled yet) is not written.
      guard lock.withLock({ !flushRequested && chunk.generation == generation }) else { continue }
      let stereo = processor.process(chunk.samples, channels: chunk.channels)
      guard !stereo.isEmpty else { continue }
      let startFrame = out.writeIndex
      // The end of what came out stands for the end of what went in, less what the chain still holds; its start
      // lies `frames × speed` before that.
      let end = chunk.time + chunk.duration - processor.latency
      let media = max(0, end - Double(stereo.count / 2) / Double(out.sampleRate) * processor.speed)
      let accepted = lock.withLock { () -> Bool in
        guard !flushRequested && chunk.generation == generation else { return false }
        anchors.append(Anchor(frame: startFrame, media: media, speed: processor.speed))
        if anchors.count > 256 { anchors.removeFirst(anchors.count - 128) }
        return true
      }
      if accepted { write(stereo, to: out) }
    }
  }

  /// Writes all of `stereo`, waiting for room; gives up on stop, seek, or a dead output.
  private func write(_ stereo: [Float], to out: AudioOutput) {
    var offset = 0
    stereo.withUnsafeBufferPointer { all in
      while offset < all.count {
        let interrupted = lock.withLock { stopped || flushRequested }
        if interrupted || !out.isAlive { return }
        let written = out.write(UnsafeBufferPointer(rebasing: all[offset...]))
        offset += written * 2
        if offset < all.count { usleep(5000) }
      }
    }
  }
}

/// The player's DSP chain is what it processes audio with.
extension DSPChain: AudioProcessing {}

/// Stereo out of anything, without effects (tests use it to watch what flows).
public final class PlainStereo: AudioProcessing {
  public init() {}
  public var latency: Double { 0 }
  public var speed: Double { 1 }
  public func reset() {}
  public func flush() -> [Float] { [] }
  public func process(_ samples: [Float], channels: Int) -> [Float] {
    if channels == 2 { return samples }
    let frames = samples.count / channels
    var out = [Float](repeating: 0, count: frames * 2)
    for i in 0..<frames {
      let l = samples[i * channels]
      let r = channels > 1 ? samples[i * channels + 1] : l
      out[i * 2] = l
      out[i * 2 + 1] = r
    }
    return out
  }
}
