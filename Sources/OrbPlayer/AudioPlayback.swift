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
/// Thread-safety: Safe; the mapping is guarded by `lock`, the DSP chain is touched only by the feed thread.
public final class AudioPlayback: MasterClock, @unchecked Sendable {
  private struct Anchor {
    var frame: UInt64
    var media: Double
    var speed: Double
  }

  public let output: AudioOutput
  private let pipeline: MediaPipeline
  private let processor: AudioProcessing
  private let lock = NSCondition()
  // Guarded by `lock`:
  private var anchors: [Anchor] = []
  private var stopped = false
  private var flushRequested = false
  /// Ring index after the last frame of the stream's end; nil until the end is reached.
  private var endFrame: UInt64?
  private var generation = 0

  public init(pipeline: MediaPipeline, output: AudioOutput, processor: AudioProcessing) {
    self.pipeline = pipeline
    self.output = output
    self.processor = processor
  }

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

  /// Call after `pipeline.seek`: drops what the output holds and what the chain buffered.
  public func flushForSeek() {
    lock.withLock {
      flushRequested = true
      anchors.removeAll()
      endFrame = nil
      generation = pipeline.currentGeneration
      lock.broadcast()
    }
    output.flush()
  }

  public func setPaused(_ paused: Bool) { output.setActive(!paused) }

  /// Whether everything decoded has been heard (the audio reached its end).
  public func finished(at host: UInt64) -> Bool {
    guard let end = lock.withLock({ endFrame }) else { return false }
    guard let heard = output.heardFrame(at: host) else { return true }
    return heard >= Double(end) - 1
  }

  public func mediaTime(at host: UInt64) -> Double? {
    guard let heard = output.heardFrame(at: host) else { return nil }
    return lock.withLock {
      if let end = endFrame, heard >= Double(end) - 1 { return nil }  // drained: the host clock takes over
      guard let anchor = anchors.last(where: { Double($0.frame) <= heard }) else { return nil }
      return anchor.media + (heard - Double(anchor.frame)) / Double(output.sampleRate) * anchor.speed
    }
  }

  private func feedLoop() {
    var expected = lock.withLock { generation }
    while true {
      let (isStopped, flush, current) = lock.withLock { () -> (Bool, Bool, Int) in
        let f = flushRequested
        flushRequested = false
        return (stopped, f, generation)
      }
      if isStopped { return }
      if flush {
        processor.reset()
        expected = current
      }
      guard let chunk = pipeline.nextAudio(timeout: 0.05) else {
        // The end of the audio (or a seek in progress): mark where it ends once, then wait for a seek or stop.
        let reachedEnd = lock.withLock {
          endFrame == nil && !flushRequested && pipeline.currentGeneration == generation
            && pipeline.audioEnded(generation: generation)
        }
        if reachedEnd {
          // The time-stretch holds the last few milliseconds back: let them out before marking the end.
          let tail = processor.flush()
          if !tail.isEmpty { write(tail) }
          lock.withLock { endFrame = output.writeIndex }
        }
        let ended = lock.withLock { endFrame != nil }
        if ended {
          lock.withLock {
            if !stopped && !flushRequested { _ = lock.wait(until: Date(timeIntervalSinceNow: 0.1)) }
          }
        }
        continue
      }
      guard chunk.generation == expected || chunk.generation == pipeline.currentGeneration else { continue }
      expected = chunk.generation
      let stereo = processor.process(chunk.samples, channels: chunk.channels)
      guard !stereo.isEmpty else { continue }
      let startFrame = output.writeIndex
      // The end of what came out stands for the end of what went in, less what the chain still holds; its start
      // lies `frames × speed` before that.
      let rate = Double(output.sampleRate)
      let end = chunk.time + Double(chunk.frames) / rate - processor.latency
      let media = max(0, end - Double(stereo.count / 2) / rate * processor.speed)
      lock.withLock {
        anchors.append(Anchor(frame: startFrame, media: media, speed: processor.speed))
        if anchors.count > 256 { anchors.removeFirst(anchors.count - 128) }
      }
      write(stereo)
    }
  }

  /// Writes all of `stereo`, waiting for room; gives up on stop or seek.
  private func write(_ stereo: [Float]) {
    var offset = 0
    stereo.withUnsafeBufferPointer { all in
      while offset < all.count {
        let written = output.write(UnsafeBufferPointer(rebasing: all[offset...]))
        offset += written * 2
        if offset >= all.count { break }
        let interrupted = lock.withLock { stopped || flushRequested }
        if interrupted { return }
        usleep(5000)
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
