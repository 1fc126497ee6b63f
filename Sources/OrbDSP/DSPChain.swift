import Foundation

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
/// Thread-safety: `settings`, `updateSettings`, `speed` and `latency` are safe from any thread (one lock, held only
/// to copy a value; `process` reads the settings once per call, so a change lands between two calls and is ramped or
/// cross-faded there). `process`, `flush`, `reset`, `consumedInputFrames` and `producedOutputFrames` belong to one
/// thread (the audio decode thread). Working buffers are reused between calls.
public final class DSPChain: @unchecked Sendable {
  /// Frames per second (Hz) of the input and the output.
  public let sampleRate: Int
  /// Length of the cross-fade when the remap mode changes (ms).
  public static let remapFadeMs = 10

  private let lock = NSLock()
  // Guarded by `lock`:
  private var sharedSettings: DSPSettings
  private var publishedSpeed: Double
  private var publishedLatency: Double = 0

  // The audio thread's own:
  private var applied: DSPSettings?
  private var layout: ChannelLayout?
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

  /// - Parameters:
  ///   - sampleRate: frames per second (Hz), at least 8000.
  ///   - settings: the starting settings (volume starts there without a ramp).
  public init(sampleRate: Int, settings: DSPSettings = DSPSettings()) {
    precondition(sampleRate >= 8000, "the audio chain needs a rate of 8 kHz or more")
    self.sampleRate = sampleRate
    sharedSettings = settings
    publishedSpeed = settings.speed
    fadeFrames = max(1, sampleRate * Self.remapFadeMs / 1000)
    volume = Volume(sampleRate: sampleRate, channels: 2, percent: settings.volumePercent, isMuted: settings.isMuted)
  }

  /// The settings the next `process` call will use. Safe from any thread.
  public var settings: DSPSettings {
    get {
      lock.lock()
      defer { lock.unlock() }
      return sharedSettings
    }
    set {
      lock.lock()
      sharedSettings = newValue
      lock.unlock()
    }
  }

  /// Changes the settings in one step (read, modify, write under the lock). Safe from any thread; `body` must be
  /// quick and must not touch the chain.
  public func updateSettings(_ body: (inout DSPSettings) throws -> Void) rethrows {
    lock.lock()
    defer { lock.unlock() }
    try body(&sharedSettings)
  }

  /// The speed the last `process` call stretched at (output of one second carries `speed` seconds of media).
  /// Safe from any thread.
  public var speed: Double {
    lock.lock()
    defer { lock.unlock() }
    return publishedSpeed
  }

  /// Media seconds that went in but have not come out yet (time-stretch buffering; 0 at speed 1), as of the last
  /// `process` call. Safe from any thread.
  public var latency: Double {
    lock.lock()
    defer { lock.unlock() }
    return publishedLatency
  }

  /// The input position (frames since `reset`, fractional) that the end of the output so far stands for.
  public var consumedInputFrames: Double { baseConsumed + (stretcher?.consumedInputFrames ?? 0) }

  /// Stereo frames produced since `reset`.
  public var producedOutputFrames: Int { baseProduced + (stretcher?.outputFramesProduced ?? 0) }

  /// Processes `frames` interleaved frames of `input` in `layout` and appends the stereo frames that are ready to
  /// `output` (interleaved L R). At speed 1 that is all of them; otherwise about frames / speed, in steps of 15 ms.
  public func process(
    _ input: UnsafeBufferPointer<Float>, layout: ChannelLayout, frames: Int, into output: inout [Float]
  ) {
    let snapshot = settings
    configure(for: layout)
    apply(snapshot)
    guard let stretcher else { return }
    stretched.removeAll(keepingCapacity: true)
    stretcher.process(input, frames: frames, into: &stretched)
    finish(into: &output)
    publish()
  }

  /// Processes `frames` interleaved frames of `input` with `inputChannels` channels in FFmpeg's default layout
  /// for that count (1 mono, 2 stereo, 6 5.1, 8 7.1) and appends the stereo frames that are ready to `output`.
  public func process(
    _ input: UnsafeBufferPointer<Float>, inputChannels: Int, frames: Int, into output: inout [Float]
  ) {
    let known = layout.map { $0.count == inputChannels } ?? false
    process(input, layout: known ? layout! : .default(channels: inputChannels), frames: frames, into: &output)
  }

  /// Convenience: processes interleaved `samples` with `channels` channels and returns interleaved stereo.
  public func process(_ samples: [Float], channels: Int) -> [Float] {
    var output: [Float] = []
    output.reserveCapacity(samples.count / max(1, channels) * 2 * 4 + 4096)
    samples.withUnsafeBufferPointer {
      process($0, inputChannels: channels, frames: $0.count / channels, into: &output)
    }
    return output
  }

  /// End of stream: appends the audio the time-stretch still holds (stretched at the current speed) to `output`.
  public func flush(into output: inout [Float]) {
    guard let stretcher else { return }
    stretched.removeAll(keepingCapacity: true)
    stretcher.flush(into: &stretched)
    finish(into: &output)
    publish()
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
    stretcher?.reset()
    equalizer?.reset()
    night?.reset()
    volume.reset()
    fadingFrom = nil
    fadeRemaining = 0
    baseConsumed = 0
    baseProduced = 0
    publish()
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

  private func publish() {
    let speedNow = stretcher?.speed ?? applied?.speed ?? 1
    let held = (stretcher?.latencyInputFrames ?? 0) / Double(sampleRate)
    lock.lock()
    publishedSpeed = speedNow
    publishedLatency = held
    lock.unlock()
  }
}
