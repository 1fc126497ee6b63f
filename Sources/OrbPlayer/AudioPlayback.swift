import Foundation
import OrbDSP
import OrbDecode

/// What turns decoded audio into the stereo output: the DSP chain (time-stretch, EQ, night mode, remap, volume).
/// Thread-safety: `Sendable`, because it is made on one thread (the render thread) and used on another; `process`,
/// `reset`, `flush`, `latency` and `speed` are called on the audio feed thread only, so a conformer need not make them
/// safe against each other (`DSPChain` does anyway: its settings change from any thread).
public protocol AudioProcessing: AnyObject, Sendable {
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
/// Thread-safety: `Sendable`; `mediaTime` is asked from any thread, by a `MediaClock` holding its lock.
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
/// Thread-safety: Safe; what changes (the output, the frame-to-media mapping, pause, stop, the seek flush and the
/// end) is one `State` behind `state`, a `Locked` because the feed thread waits on it for a stop or a seek; the rest
/// is constant, and the processor is used by the feed thread only. Lock order: `MediaClock` → this lock → the
/// source's (`flushForSeek` and the end check ask the source under it). PipeWire is never called while this lock is
/// held: `setPaused` and a reconnection tell the output after letting go (`setActive` takes PipeWire's thread-loop
/// lock), and the output's ring and timing are read outside it.
public final class AudioPlayback: MasterClock, Sendable {
  /// Where a run of output frames starts: its first ring frame, the media time it carries, at what speed.
  /// Thread-safety: a value type, kept in `State`.
  private struct Anchor {
    var frame: UInt64
    var media: Double
    var speed: Double
  }

  /// All that changes.
  /// Thread-safety: a value type, only ever inside `state`.
  private struct State {
    /// The PipeWire output now; nil while it is gone.
    var output: AudioOutput?
    var anchors: [Anchor] = []
    var stopped = false
    var paused = true
    var flushRequested = false
    /// Ring index after the last frame of the stream's end; nil until the end is reached.
    var endFrame: UInt64?
    /// The pipeline's audio ended while there was no output to play it.
    var endedSilently = false
    var generation = 0
  }

  /// Called on the feed thread when a lost output has come back: seek to the current position to refill.
  private let onOutputRestored: (@Sendable () -> Void)?
  /// Called on the feed thread, once per loss, when the output went away.
  private let onOutputLost: (@Sendable () -> Void)?

  private let sound: SoundSource
  private let processor: AudioProcessing
  private let makeOutput: @Sendable () throws -> AudioOutput
  /// Media time now, from the player's clock (used to pace audio while there is no output).
  private let clockTime: @Sendable () -> Double
  private let state: Locked<State>

  public init(
    sound: SoundSource, output: AudioOutput, processor: AudioProcessing,
    reconnect: @escaping @Sendable () throws -> AudioOutput, clockTime: @escaping @Sendable () -> Double,
    onOutputLost: (@Sendable () -> Void)? = nil, onOutputRestored: (@Sendable () -> Void)? = nil
  ) {
    self.onOutputLost = onOutputLost
    self.onOutputRestored = onOutputRestored
    self.sound = sound
    // The source's generation now, not 0: a source opened at a resume point has already made its first seek, and
    // its sound, all of that generation, was dropped as if from before a seek: nothing was heard, the clock ran on
    // the host's, and playback never ended.
    state = Locked(State(output: output, generation: sound.currentGeneration))
    self.processor = processor
    makeOutput = reconnect
    self.clockTime = clockTime
  }

  /// The PipeWire output now, if there is one.
  public var output: AudioOutput? { state.withLock { $0.output } }

  public func start() {
    startThread(named: "orb-audio-feed") { [self] in feedLoop() }
  }

  public func stop() { state.change { $0.stopped = true } }

  /// Call after the source's `seek`: the feed thread drops what the output holds and what the chain buffered, and
  /// takes only audio of the new seek generation from then on.
  public func flushForSeek() {
    let sound = sound
    state.change { s in
      s.flushRequested = true
      s.anchors.removeAll()
      s.endFrame = nil
      s.endedSilently = false
      s.generation = sound.currentGeneration
    }
  }

  public func setPaused(_ paused: Bool) {
    // Notifying: a feed waiting for room writes on at once when playback resumes.
    let out = state.change { s -> AudioOutput? in
      s.paused = paused
      return s.output
    }
    out?.setActive(!paused)
  }

  /// Whether everything decoded has been heard (the audio reached its end).
  public func finished(at host: UInt64) -> Bool {
    let (end, out, silent, nothingWritten) = state.withLock {
      ($0.endFrame, $0.output, $0.endedSilently, $0.anchors.isEmpty)
    }
    if silent { return true }
    guard let end, let out else { return false }
    // Nothing of it was written since the last seek (a seek past what a file cut short holds): nothing to hear. The
    // output waits for a picture that will not come, and the end waited on it for ever, the clock running on.
    if nothingWritten { return true }
    // Paused, or not started yet: not heard. Playing with no cycle since it resumed: as good as heard.
    guard let heard = out.heardFrame(at: host) else { return out.isActive }
    return heard >= Double(end) - 1
  }

  /// Audio cycles that found the ring empty (the decoder or the DSP fell behind) before the end of the sound, in the
  /// current output.
  public var underruns: Int { Int(output?.timing.underruns ?? 0) }

  public func mediaTime(at host: UInt64) -> Double? {
    guard let out = output, out.isAlive, let heard = out.heardFrame(at: host) else { return nil }
    return state.withLock { s in
      if let end = s.endFrame, heard >= Double(end) - 1 { return nil }  // drained: the host clock takes over
      guard let anchor = s.anchors.last(where: { Double($0.frame) <= heard }) else { return nil }
      return anchor.media + (heard - Double(anchor.frame)) / Double(out.sampleRate) * anchor.speed
    }
  }

  private func feedLoop() {
    var held: AudioChunk?  // decoded while there was no output, waiting for the clock to reach it
    var lastAttempt = Date.distantPast
    let sound = sound
    while true {
      let (isStopped, flush, current, out) = state.withLock { s -> (Bool, Bool, Int, AudioOutput?) in
        let f = s.flushRequested
        s.flushRequested = false
        return (s.stopped, f, s.generation, s.output)
      }
      if isStopped || sound.isClosed { return }
      if flush {
        // Flushed here, on the one thread that writes the ring (the output's contract).
        out?.flush()
        processor.reset()
        held = nil
      }
      if let out, !out.isAlive {
        state.withLock { s in
          s.output = nil
          s.anchors.removeAll()
        }
        onOutputLost?()
        continue
      }
      if out == nil {
        // No PipeWire: try again now and then; meanwhile let the audio go as the clock passes it.
        if Date().timeIntervalSince(lastAttempt) >= 2 {
          lastAttempt = Date()
          if let fresh = try? makeOutput() {
            let isPaused = state.withLock { s in
              s.output = fresh
              return s.paused
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
          if sound.audioEnded(generation: current) { state.withLock { $0.endedSilently = true } }
          usleep(20_000)
        }
        continue
      }
      guard let out else { continue }
      guard let chunk = sound.nextAudio(timeout: 0.05) else {
        // The end of the audio (or a seek in progress): mark where it ends once, then wait for a seek or stop.
        let endedGeneration = state.withLock { s -> Int? in
          let ended =
            s.endFrame == nil && !s.flushRequested && sound.currentGeneration == s.generation
            && sound.audioEnded(generation: s.generation)
          return ended ? s.generation : nil
        }
        if let endedGeneration {
          // The time-stretch holds the last few milliseconds back: let them out before marking the end.
          let tail = processor.flush()
          if !tail.isEmpty { write(tail, to: out) }
          let end = out.writeIndex
          let marked = state.withLock { s -> Bool in
            // A seek that came meanwhile starts over: this end is not its end, and would stop its clock at once.
            guard !s.flushRequested && s.generation == endedGeneration else { return false }
            s.endFrame = end
            return true
          }
          if marked { out.markEnd() }  // this thread also flushes the output, so no seek's flush comes between
        }
        // Nothing now (a seek in progress, the end, or a closed pipeline): wait a little, never spin.
        state.wait(
          until: { $0.stopped || $0.flushRequested }, deadline: Date(timeIntervalSinceNow: 0.02),
          then: { _, _ in })
        continue
      }
      // Audio from before the last seek (or from after one whose flush is not handled yet) is not written.
      guard state.withLock({ !$0.flushRequested && chunk.generation == $0.generation }) else { continue }
      let stereo = processor.process(chunk.samples, channels: chunk.channels)
      guard !stereo.isEmpty else { continue }
      let startFrame = out.writeIndex
      // The end of what came out stands for the end of what went in, less what the chain still holds; its start
      // lies `frames × speed` before that.
      let end = chunk.time + chunk.duration - processor.latency
      let media = max(0, end - Double(stereo.count / 2) / Double(out.sampleRate) * processor.speed)
      let speed = processor.speed
      let accepted = state.withLock { s -> Bool in
        guard !s.flushRequested && chunk.generation == s.generation else { return false }
        s.anchors.append(Anchor(frame: startFrame, media: media, speed: speed))
        if s.anchors.count > 256 { s.anchors.removeFirst(s.anchors.count - 128) }
        return true
      }
      if accepted { write(stereo, to: out) }
    }
  }

  /// Writes all of `stereo`, waiting for room; gives up on stop, seek, or a dead output. While the ring is full it
  /// waits until about the room the rest needs has been heard (5 to 50 ms; the ring holds 250 ms), and while paused
  /// until playback resumes (looking at the output once a second), woken at once by a stop, a seek or a resume: a
  /// retry every 5 ms woke this thread 200 times a second, playing or paused (a paused window: 3.2 -> 2.1 % of a core).
  private func write(_ stereo: [Float], to out: AudioOutput) {
    var offset = 0
    stereo.withUnsafeBufferPointer { all in
      while offset < all.count {
        let interrupted = state.withLock { $0.stopped || $0.flushRequested }
        if interrupted || !out.isAlive { return }
        let written = out.write(UnsafeBufferPointer(rebasing: all[offset...]))
        offset += written * 2
        guard offset < all.count else { return }
        let paused = state.withLock { $0.paused }
        let rest = Double((all.count - offset) / 2) / Double(out.sampleRate)
        state.wait(
          until: { $0.stopped || $0.flushRequested || $0.paused != paused },
          deadline: Date(timeIntervalSinceNow: paused ? 1 : min(max(rest, 0.005), 0.05)), then: { _, _ in })
      }
    }
  }
}

/// The player's DSP chain is what it processes audio with.
extension DSPChain: AudioProcessing {}

/// Stereo out of anything, without effects (tests use it to watch what flows).
/// Thread-safety: Safe; it holds nothing.
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
