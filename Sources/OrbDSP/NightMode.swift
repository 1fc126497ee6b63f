import Foundation

/// Night mode: a downward compressor that evens out loud and quiet scenes, followed by a soft limiter, on
/// interleaved Float32 audio.
///
/// The detector is the RMS of all channels together (linked, so the stereo image does not move), averaged over
/// `rmsWindowMs`. Above `thresholdDB` the level is reduced by `ratio` (with a soft knee of `kneeDB`); the gain falls
/// with `attackMs` and recovers with `releaseMs` (one-pole smoothing in dB). `makeupDB` is then added, so quiet
/// passages (dialogue) come up and loud ones go down. The soft limiter is linear up to `limiterKneeLevel` and
/// bends smoothly (tanh) towards 1.0, so the output never exceeds 0 dBFS even on a transient the attack lets through.
///
/// Turning it on or off is smooth: the gain moves to or from 0 dB with the attack/release times, and the stage is
/// a bit-exact pass-through once off and settled.
/// Thread-safety: Unsafe; use from one thread (the audio decode thread). Nothing is allocated while processing.
public final class NightMode {
  /// The compressor's settings.
  /// Thread-safety: a value type.
  public struct Parameters: Sendable, Equatable {
    /// RMS level (dBFS) above which the level is reduced.
    public var thresholdDB: Double = -30
    /// Input dB over the threshold per output dB over it.
    public var ratio: Double = 4
    /// Width of the soft knee around the threshold (dB).
    public var kneeDB: Double = 6
    /// Time constant of the gain going down (ms).
    public var attackMs: Double = 10
    /// Time constant of the gain coming back up (ms).
    public var releaseMs: Double = 300
    /// Time constant of the RMS detector (ms).
    public var rmsWindowMs: Double = 10
    /// Gain added after compression (dB).
    public var makeupDB: Double = 10
    /// Level (linear, 0...1) below which the limiter leaves samples alone.
    public var limiterKneeLevel: Float = 0.9

    public init() {}
  }

  /// Frames per second (Hz).
  public let sampleRate: Int
  /// Samples per frame.
  public let channels: Int
  /// The compressor's settings.
  public let parameters: Parameters
  /// Whether it compresses; turning it off lets the gain return to 0 dB first.
  public var isEnabled: Bool

  /// The gain applied to the last frame (dB), before the limiter.
  public private(set) var currentGainDB: Double = 0
  private var meanSquare: Double = 0
  private let rmsCoefficient: Double
  private let attackCoefficient: Double
  private let releaseCoefficient: Double

  /// - Parameters:
  ///   - sampleRate: frames per second (Hz).
  ///   - channels: samples per interleaved frame.
  ///   - parameters: the compressor's settings.
  ///   - isEnabled: whether it starts compressing.
  public init(sampleRate: Int, channels: Int, parameters: Parameters = Parameters(), isEnabled: Bool = true) {
    precondition(sampleRate > 0 && channels > 0, "night mode needs a positive rate and channel count")
    self.sampleRate = sampleRate
    self.channels = channels
    self.parameters = parameters
    self.isEnabled = isEnabled
    func coefficient(_ ms: Double) -> Double { 1 - exp(-1000 / (max(ms, 0.01) * Double(sampleRate))) }
    rmsCoefficient = coefficient(parameters.rmsWindowMs)
    attackCoefficient = coefficient(parameters.attackMs)
    releaseCoefficient = coefficient(parameters.releaseMs)
  }

  /// Forgets the detector and gain (a seek): the next audio starts at 0 dB gain.
  public func reset() {
    meanSquare = 0
    currentGainDB = 0
  }

  /// The static gain (dB, without makeup) for an RMS level (dBFS): the compression curve with its soft knee.
  public func compressionGainDB(forLevelDB level: Double) -> Double {
    let over = level - parameters.thresholdDB
    let knee = parameters.kneeDB
    let slope = 1 / parameters.ratio - 1
    if 2 * over <= -knee { return 0 }
    if knee > 0 && 2 * abs(over) < knee {
      let x = over + knee / 2
      return slope * x * x / (2 * knee)
    }
    return slope * over
  }

  /// Compresses `frames` interleaved frames of `samples` in place.
  public func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int) {
    precondition(frames >= 0 && samples.count >= frames * channels, "buffer holds fewer than \(frames) frames")
    if !isEnabled && currentGainDB == 0 { return }
    let channels = self.channels
    let invChannels = 1 / Double(channels)
    let makeup = parameters.makeupDB
    var gainDB = currentGainDB
    var ms = meanSquare
    var index = 0
    for _ in 0..<frames {
      var sum = 0.0
      for c in 0..<channels {
        let x = Double(samples[index + c])
        sum += x * x
      }
      ms += rmsCoefficient * (sum * invChannels - ms)
      let target: Double
      if isEnabled {
        target = compressionGainDB(forLevelDB: 10 * log10(ms + 1e-20)) + makeup
      } else {
        target = 0
      }
      gainDB += (target < gainDB ? attackCoefficient : releaseCoefficient) * (target - gainDB)
      let gain = Float(pow(10, gainDB / 20))
      for c in 0..<channels {
        samples[index + c] = softLimit(samples[index + c] * gain)
      }
      index += channels
    }
    if !isEnabled && abs(gainDB) < 0.01 {
      // Settled back at unity: from here on the stage passes audio through untouched.
      gainDB = 0
      ms = 0
    }
    currentGainDB = gainDB
    meanSquare = ms
  }

  /// Convenience: returns `input` (interleaved) compressed.
  public func process(_ input: [Float]) -> [Float] {
    var output = input
    output.withUnsafeMutableBufferPointer { process($0, frames: $0.count / channels) }
    return output
  }

  /// Linear up to the knee, then a tanh curve that meets it with slope 1 and never passes ±1.
  @inline(__always)
  private func softLimit(_ x: Float) -> Float {
    let knee = parameters.limiterKneeLevel
    let magnitude = abs(x)
    guard magnitude > knee else { return x }
    let room = 1 - knee
    let limited = min(1, knee + room * tanh((magnitude - knee) / room))
    return x < 0 ? -limited : limited
  }
}
