import Foundation
import Synchronization

/// What the user has chosen for the audio chain. A snapshot of it is taken once per `DSPChain.process` call.
/// Thread-safety: a value type.
public struct DSPSettings: Sendable, Equatable {
  /// Playback speed, 0.25...4 (pitch is kept).
  public var speed: Double
  /// Gain of each equaliser band (dB, −12...12), in `Equalizer.bandCentersHz` order.
  public var equalizerGainsDB: [Double]
  /// Whether night mode (compression) is on.
  public var nightMode: Bool
  /// Stereo, mono or swapped, after the down-mix to stereo.
  public var remap: ChannelRemap.Mode
  /// Volume in percent, 0...150.
  public var volumePercent: Double
  /// Whether the output is silenced.
  public var isMuted: Bool

  public init(
    speed: Double = 1, equalizerGainsDB: [Double] = [Double](repeating: 0, count: Equalizer.bandCentersHz.count),
    nightMode: Bool = false, remap: ChannelRemap.Mode = .stereo, volumePercent: Double = 100, isMuted: Bool = false
  ) {
    self.speed = speed
    self.equalizerGainsDB = equalizerGainsDB
    self.nightMode = nightMode
    self.remap = remap
    self.volumePercent = volumePercent
    self.isMuted = isMuted
  }
}

/// The player's audio chain, in the order of the other platforms: time-stretch (WSOLA) → 10-band EQ → night mode →
/// down-mix and stereo remap → volume/mute. Takes interleaved Float32 of any supported layout, gives interleaved
/// stereo at the same rate.
///
/// Time: one output frame at speed s stands for s input frames. `consumedInputFrames` is the input position (frames
/// since `reset`) that the end of the output produced so far stands for, and `latency` the media seconds that went
/// in but have not come out yet; so the media time at the end of the output is (media time of the input's end) −
/// `latency`. Only the time-stretch holds audio back; every other stage is frame for frame.
///
/// It is two halves. The shared half (`Shared`: the settings, and the speed and latency the last call published) is
/// read and written from any thread; `process` takes one snapshot of the settings per call, so a change lands
/// between two calls and is ramped or cross-faded there. The processing half (`Processor`: the stages, their working
/// buffers, reused between calls, and the positions) belongs to the thread that processes (the audio feed thread).
/// `process`, `flush`, `reset`, `consumedInputFrames` and `producedOutputFrames` use it.
///
/// Thread-safety: Safe, and checked by the compiler: each half is one value behind its own `Mutex`. The shared one is
/// held only to copy a value in or out. The processor's is held for a whole `process`/`flush`/`reset` call, which
/// makes two threads processing at once wait for each other instead of racing; in use only the feed thread takes
/// it, so it is never contended and settings never wait for processing. Lock order: the processor's, then the
/// shared one (a call publishes its speed and latency before it lets go of the processor).
public final class DSPChain: Sendable {
  /// Frames per second (Hz) of the input and the output.
  public let sampleRate: Int
  /// Length of the cross-fade when the remap mode changes (ms).
  public static let remapFadeMs = 10

  /// What any thread may read or change.
  /// Thread-safety: a value type, only ever inside `shared`.
  private struct Shared {
    var settings: DSPSettings
    /// As of the last `process`, `flush` or `reset`.
    var speed: Double
    var latency: Double = 0
  }

  private let shared: Mutex<Shared>
  private let processor: Mutex<Processor>

  /// - Parameters:
  ///   - sampleRate: frames per second (Hz), at least 8000.
  ///   - settings: the starting settings (volume starts there without a ramp).
  public init(sampleRate: Int, settings: DSPSettings = DSPSettings()) {
    precondition(sampleRate >= 8000, "the audio chain needs a rate of 8 kHz or more")
    self.sampleRate = sampleRate
    shared = Mutex(Shared(settings: settings, speed: settings.speed))
    processor = Mutex(Processor(sampleRate: sampleRate, settings: settings))
  }

  /// The settings the next `process` call will use. Safe from any thread.
  public var settings: DSPSettings {
    get { shared.withLock { $0.settings } }
    set { shared.withLock { $0.settings = newValue } }
  }

  /// Changes the settings in one step (read, modify, write under the lock). Safe from any thread; `body` must be
  /// quick and must not touch the chain.
  public func updateSettings(_ body: (inout DSPSettings) throws -> Void) rethrows {
    try shared.withLock { try body(&$0.settings) }
  }

  /// The speed the last `process` call stretched at (output of one second carries `speed` seconds of media).
  /// Safe from any thread.
  public var speed: Double { shared.withLock { $0.speed } }

  /// Media seconds that went in but have not come out yet (time-stretch buffering; 0 at speed 1), as of the last
  /// `process` call. Safe from any thread.
  public var latency: Double { shared.withLock { $0.latency } }

  /// The input position (frames since `reset`, fractional) that the end of the output so far stands for.
  public var consumedInputFrames: Double { processor.withLock { $0.consumedInputFrames } }

  /// Stereo frames produced since `reset`.
  public var producedOutputFrames: Int { processor.withLock { $0.producedOutputFrames } }

  /// Processes `frames` interleaved frames of `input` in `layout` and appends the stereo frames that are ready to
  /// `output` (interleaved L R). At speed 1 that is all of them; otherwise about frames / speed, in steps of 15 ms.
  /// The input is copied once (a caller's pointer cannot be taken into the processor's lock); the `[Float]` overload
  /// processes its array in place.
  public func process(
    _ input: UnsafeBufferPointer<Float>, layout: ChannelLayout, frames: Int, into output: inout [Float]
  ) {
    run(Array(input), layout: layout, channels: layout.count, frames: frames, into: &output)
  }

  /// Processes `frames` interleaved frames of `input` with `inputChannels` channels in FFmpeg's default layout
  /// for that count (1 mono, 2 stereo, 6 5.1, 8 7.1) and appends the stereo frames that are ready to `output`.
  /// The input is copied once, as by the overload with a layout.
  public func process(
    _ input: UnsafeBufferPointer<Float>, inputChannels: Int, frames: Int, into output: inout [Float]
  ) {
    run(Array(input), layout: nil, channels: inputChannels, frames: frames, into: &output)
  }

  /// Convenience: processes interleaved `samples` with `channels` channels and returns interleaved stereo.
  public func process(_ samples: [Float], channels: Int) -> [Float] {
    var output: [Float] = []
    output.reserveCapacity(samples.count / max(1, channels) * 2 * 4 + 4096)
    run(samples, layout: nil, channels: channels, frames: samples.count / channels, into: &output)
    return output
  }

  /// End of stream: appends the audio the time-stretch still holds (stretched at the current speed) to `output`.
  public func flush(into output: inout [Float]) {
    processor.withLock { p in
      guard p.flush(into: &output) else { return }
      publish(p)
    }
  }

  /// Convenience: end of stream; returns the stereo audio the time-stretch still held.
  public func flush() -> [Float] {
    var output: [Float] = []
    flush(into: &output)
    return output
  }

  /// Forgets all held audio and filter state and restarts the positions at 0 (a seek or a new track). The
  /// settings stay; the volume jumps to its target.
  public func reset() {
    processor.withLock { p in
      p.reset()
      publish(p)
    }
  }

  /// One `process` call: the settings' snapshot, then the stages, under the processor's lock, on `samples` in
  /// `layout`, or (nil) in the one in use or FFmpeg's default for `channels`.
  private func run(
    _ samples: [Float], layout: ChannelLayout?, channels: Int, frames: Int, into output: inout [Float]
  ) {
    let snapshot = settings
    processor.withLock { p in
      let chosen = layout ?? p.inputLayout(channels: channels)
      let processed = samples.withUnsafeBufferPointer { input in
        p.process(input, layout: chosen, frames: frames, settings: snapshot, into: &output)
      }
      if processed { publish(p) }
    }
  }

  /// Publishes the processor's speed and latency for any thread; called holding the processor's lock.
  private func publish(_ p: Processor) {
    let (speedNow, held) = (p.speed, p.latency)
    shared.withLock {
      $0.speed = speedNow
      $0.latency = held
    }
  }
}

/// The processing half of a `DSPChain`: its stages, their working buffers and the positions.
/// Thread-safety: Unsafe (not `Sendable`); it lives only inside its chain's `Mutex`.
private final class Processor {
  let sampleRate: Int
  private var applied: DSPSettings?
  private(set) var layout: ChannelLayout?
  private var stretcher: TimeStretcher?
  private var equalizer: Equalizer?
  private var night: NightMode?
  private var remap: ChannelRemap?
  private var fadingFrom: ChannelRemap?
  private var fadeRemaining = 0
  private let fadeFrames: Int
  private let volume: Volume
  private var stretched: [Float] = []
  private var fadeScratch: [Float] = []
  /// Positions of stretchers replaced by a layout change.
  private var baseConsumed: Double = 0
  private var baseProduced = 0

  init(sampleRate: Int, settings: DSPSettings) {
    self.sampleRate = sampleRate
    fadeFrames = max(1, sampleRate * DSPChain.remapFadeMs / 1000)
    volume = Volume(sampleRate: sampleRate, channels: 2, percent: settings.volumePercent, isMuted: settings.isMuted)
  }

  var consumedInputFrames: Double { baseConsumed + (stretcher?.consumedInputFrames ?? 0) }
  var producedOutputFrames: Int { baseProduced + (stretcher?.outputFramesProduced ?? 0) }
  /// The speed stretched at now.
  var speed: Double { stretcher?.speed ?? applied?.speed ?? 1 }
  /// Media seconds held in the time-stretch.
  var latency: Double { (stretcher?.latencyInputFrames ?? 0) / Double(sampleRate) }

  /// FFmpeg's default layout for `channels`, or the one in use when it has that many channels.
  func inputLayout(channels: Int) -> ChannelLayout {
    let known = layout.map { $0.count == channels } ?? false
    return known ? layout! : .default(channels: channels)
  }

  /// The stages over `frames` frames of `input`, appended to `output`; false when nothing could run (no stages).
  func process(
    _ input: UnsafeBufferPointer<Float>, layout: ChannelLayout, frames: Int, settings: DSPSettings,
    into output: inout [Float]
  ) -> Bool {
    configure(for: layout)
    apply(settings)
    guard let stretcher else { return false }
    stretched.removeAll(keepingCapacity: true)
    stretcher.process(input, frames: frames, into: &stretched)
    finish(into: &output)
    return true
  }

  /// What the time-stretch still holds, appended to `output`; false when there are no stages yet.
  func flush(into output: inout [Float]) -> Bool {
    guard let stretcher else { return false }
    stretched.removeAll(keepingCapacity: true)
    stretcher.flush(into: &stretched)
    finish(into: &output)
    return true
  }

  func reset() {
    stretcher?.reset()
    equalizer?.reset()
    night?.reset()
    volume.reset()
    fadingFrom = nil
    fadeRemaining = 0
    baseConsumed = 0
    baseProduced = 0
  }

  /// Builds the stages for a new input layout; held audio of the old one is dropped (its time counts as consumed).
  private func configure(for newLayout: ChannelLayout) {
    guard newLayout != layout else { return }
    precondition(newLayout.count > 0, "the input needs at least one channel")
    if let old = stretcher {
      baseConsumed += Double(old.inputFramesReceived)
      baseProduced += old.outputFramesProduced
    }
    layout = newLayout
    stretcher = TimeStretcher(sampleRate: sampleRate, channels: newLayout.count)
    equalizer = Equalizer(sampleRate: sampleRate, channels: newLayout.count)
    night = NightMode(sampleRate: sampleRate, channels: newLayout.count, isEnabled: false)
    remap = ChannelRemap(inputLayout: newLayout)
    fadingFrom = nil
    fadeRemaining = 0
    applied = nil
  }

  private func apply(_ new: DSPSettings) {
    guard new != applied, let layout else { return }
    stretcher?.speed = new.speed
    if new.equalizerGainsDB != applied?.equalizerGainsDB { equalizer?.setGains(new.equalizerGainsDB) }
    night?.isEnabled = new.nightMode
    if new.remap != remap?.mode {
      let previous = remap
      remap = ChannelRemap(inputLayout: layout, mode: new.remap)
      if applied != nil, let previous {
        fadingFrom = previous
        fadeRemaining = fadeFrames
      }
    }
    if volume.percent != new.volumePercent { volume.percent = new.volumePercent }
    if volume.isMuted != new.isMuted { volume.isMuted = new.isMuted }
    applied = new
  }

  /// EQ, night mode, remap and volume over `stretched`, appended to `output`.
  private func finish(into output: inout [Float]) {
    guard let equalizer, let night, let remap, let layout else { return }
    let frames = stretched.count / layout.count
    guard frames > 0 else { return }
    stretched.withUnsafeMutableBufferPointer { buffer in
      equalizer.process(buffer, frames: frames)
      night.process(buffer, frames: frames)
    }
    let start = output.count
    output.append(contentsOf: repeatElement(0, count: frames * 2))
    output.withUnsafeMutableBufferPointer { all in
      let stereo = UnsafeMutableBufferPointer(rebasing: all[start...])
      stretched.withUnsafeBufferPointer { source in
        remap.process(source, frames: frames, into: stereo)
        crossFadeRemap(source, frames: frames, into: stereo)
      }
      volume.process(stereo, frames: frames)
    }
  }

  /// After a remap mode change, blends from the old mode's output to the new one over `remapFadeMs`.
  private func crossFadeRemap(
    _ source: UnsafeBufferPointer<Float>, frames: Int, into stereo: UnsafeMutableBufferPointer<Float>
  ) {
    guard fadeRemaining > 0, let old = fadingFrom, let layout else { return }
    let count = min(frames, fadeRemaining)
    if fadeScratch.count < count * 2 { fadeScratch = [Float](repeating: 0, count: count * 2) }
    let done = fadeFrames - fadeRemaining
    fadeScratch.withUnsafeMutableBufferPointer { scratch in
      old.process(UnsafeBufferPointer(rebasing: source[0..<(count * layout.count)]), frames: count, into: scratch)
      for i in 0..<count {
        let t = Float(done + i + 1) / Float(fadeFrames)
        for c in 0..<2 {
          let from = scratch[2 * i + c]
          stereo[2 * i + c] = from + t * (stereo[2 * i + c] - from)
        }
      }
    }
    fadeRemaining -= count
    if fadeRemaining == 0 { fadingFrom = nil }
  }
}
