/// Volume and mute on interleaved Float32 audio, with a linear ramp (`rampMs`, 10 ms) to every new gain so a
/// change never clicks.
///
/// The gain is linear in percent: 50% halves the amplitude, 150% is ×1.5 (+3.5 dB). Above 100% full-scale input can
/// exceed 1.0; the output stage clamps, as PipeWire does when it converts to the device's format.
/// At 100% and not muted, settled, the stage is a bit-exact pass-through.
/// Thread-safety: Unsafe; use from one thread (the audio decode thread). Nothing is allocated while processing.
public final class Volume {
  /// The percentages it accepts; others are clamped into it.
  public static let percentRange: ClosedRange<Double> = 0...150
  /// Length of the ramp to a new gain (ms).
  public static let rampMs = 10

  /// Frames per second (Hz).
  public let sampleRate: Int
  /// Samples per frame.
  public let channels: Int
  private let rampFrames: Int

  /// Volume in percent of the input level (0...150, clamped).
  public var percent: Double {
    didSet {
      let range = Self.percentRange
      let clamped = percent.isFinite ? min(max(percent, range.lowerBound), range.upperBound) : 100
      if clamped != percent { percent = clamped }
      retarget()
    }
  }

  /// Silences the output (after the ramp) without forgetting `percent`.
  public var isMuted: Bool { didSet { retarget() } }

  /// The linear gain being ramped to.
  public var targetGain: Float { isMuted ? 0 : Float(percent / 100) }
  /// The linear gain applied to the last frame.
  public private(set) var currentGain: Float
  private var step: Float = 0
  private var rampRemaining = 0

  /// - Parameters:
  ///   - sampleRate: frames per second (Hz).
  ///   - channels: samples per interleaved frame.
  ///   - percent: the starting volume (no ramp to it).
  ///   - isMuted: whether it starts muted.
  public init(sampleRate: Int, channels: Int, percent: Double = 100, isMuted: Bool = false) {
    precondition(sampleRate > 0 && channels > 0, "volume needs a positive rate and channel count")
    self.sampleRate = sampleRate
    self.channels = channels
    rampFrames = max(1, sampleRate * Self.rampMs / 1000)
    let clamped = percent.isFinite ? min(max(percent, Self.percentRange.lowerBound), Self.percentRange.upperBound) : 100
    self.percent = clamped
    self.isMuted = isMuted
    currentGain = isMuted ? 0 : Float(clamped / 100)
  }

  /// Jumps to the target gain without a ramp (a seek: there is no sound before to click against).
  public func reset() {
    currentGain = targetGain
    rampRemaining = 0
  }

  /// Applies the gain to `frames` interleaved frames of `samples` in place.
  public func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int) {
    precondition(frames >= 0 && samples.count >= frames * channels, "buffer holds fewer than \(frames) frames")
    let channels = self.channels
    var index = 0
    var frame = 0
    while rampRemaining > 0 && frame < frames {
      rampRemaining -= 1
      currentGain = rampRemaining == 0 ? targetGain : currentGain + step
      for c in 0..<channels { samples[index + c] *= currentGain }
      index += channels
      frame += 1
    }
    let gain = currentGain
    guard frame < frames, gain != 1 else { return }
    for i in index..<(frames * channels) { samples[i] *= gain }
  }

  /// Convenience: returns `input` (interleaved) with the gain applied.
  public func process(_ input: [Float]) -> [Float] {
    var output = input
    output.withUnsafeMutableBufferPointer { process($0, frames: $0.count / channels) }
    return output
  }

  private func retarget() {
    let target = targetGain
    if target == currentGain && rampRemaining == 0 { return }
    step = (target - currentGain) / Float(rampFrames)
    rampRemaining = rampFrames
  }
}
