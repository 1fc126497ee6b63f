import Foundation

/// A 10-band graphic equaliser on interleaved Float32 audio: one peaking biquad (RBJ audio-EQ cookbook) per band at
/// the ISO octave centres, in series.
///
/// Q is √2, a one-octave bandwidth: +6 dB at one centre gives +6.0 dB there, about +1.1 dB at the neighbouring
/// centres and +0.2 dB two octaves away (the RBJ peaking filter has unity gain far from its centre). Bands at 0 dB
/// are skipped, and so is a band whose centre is at or above 0.9 × Nyquist (at 32 kHz: the 16 kHz band), so all
/// bands at 0 dB is a bit-exact pass-through. Coefficients and state are Double (the 31 Hz band's poles sit close to
/// the unit circle), one state per band and channel; a band that becomes active starts from silence.
/// Thread-safety: Unsafe; use from one thread (the audio decode thread). Nothing is allocated while processing.
public final class Equalizer {
  /// Band centres (Hz), lowest first.
  public static let bandCentersHz: [Double] = [31.25, 62.5, 125, 250, 500, 1000, 2000, 4000, 8000, 16_000]
  /// The gains it accepts (dB); others are clamped into it.
  public static let gainRangeDB: ClosedRange<Double> = -12...12
  /// The Q of every band (one octave).
  public static let bandQ: Double = 2.0.squareRoot()

  /// Frames per second (Hz).
  public let sampleRate: Int
  /// Samples per frame.
  public let channels: Int
  /// The gain of each band (dB), in `bandCentersHz` order.
  public private(set) var gainsDB: [Double]

  private struct Coefficients {
    var b0 = 1.0
    var b1 = 0.0
    var b2 = 0.0
    var a1 = 0.0
    var a2 = 0.0
  }

  private var coefficients: [Coefficients]
  /// Transposed direct form II state, [band * channels + channel].
  private var z1: [Double]
  private var z2: [Double]
  /// Bands that are processed, in order.
  private var activeBands: [Int] = []

  /// - Parameters:
  ///   - sampleRate: frames per second (Hz).
  ///   - channels: samples per interleaved frame.
  public init(sampleRate: Int, channels: Int) {
    precondition(sampleRate > 0 && channels > 0, "an equaliser needs a positive rate and channel count")
    self.sampleRate = sampleRate
    self.channels = channels
    let bands = Self.bandCentersHz.count
    gainsDB = [Double](repeating: 0, count: bands)
    coefficients = [Coefficients](repeating: Coefficients(), count: bands)
    z1 = [Double](repeating: 0, count: bands * channels)
    z2 = [Double](repeating: 0, count: bands * channels)
    activeBands.reserveCapacity(bands)
  }

  /// Sets every band's gain (dB, clamped to ±12); `gains` has one value per band (missing ones are 0 dB).
  public func setGains(_ gains: [Double]) {
    for band in 0..<Self.bandCentersHz.count {
      setGain(band < gains.count ? gains[band] : 0, band: band)
    }
  }

  /// Sets one band's gain (dB, clamped to ±12); `band` indexes `bandCentersHz`.
  public func setGain(_ gainDB: Double, band: Int) {
    precondition(Self.bandCentersHz.indices.contains(band), "there is no band \(band)")
    let clamped = gainDB.isFinite ? min(max(gainDB, Self.gainRangeDB.lowerBound), Self.gainRangeDB.upperBound) : 0
    guard clamped != gainsDB[band] else { return }
    let wasActive = isActive(band)
    gainsDB[band] = clamped
    let active = isActive(band)
    if active {
      coefficients[band] = Self.peaking(
        centerHz: Self.bandCentersHz[band], gainDB: clamped, q: Self.bandQ, sampleRate: Double(sampleRate))
      if !wasActive { clearState(band) }
    }
    activeBands.removeAll(keepingCapacity: true)
    for b in 0..<Self.bandCentersHz.count where isActive(b) { activeBands.append(b) }
  }

  /// Whether `band` is processed: its gain is not 0 dB and its centre is below 0.9 × Nyquist.
  public func isActive(_ band: Int) -> Bool {
    gainsDB[band] != 0 && Self.bandCentersHz[band] < 0.45 * Double(sampleRate)
  }

  /// Forgets the filter state (a seek); the gains stay.
  public func reset() {
    for i in z1.indices {
      z1[i] = 0
      z2[i] = 0
    }
  }

  /// Filters `frames` interleaved frames of `samples` in place.
  public func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int) {
    precondition(frames >= 0 && samples.count >= frames * channels, "buffer holds fewer than \(frames) frames")
    let channels = self.channels
    for band in activeBands {
      let c = coefficients[band]
      for channel in 0..<channels {
        let slot = band * channels + channel
        var s1 = z1[slot]
        var s2 = z2[slot]
        var index = channel
        for _ in 0..<frames {
          let x = Double(samples[index])
          let y = c.b0 * x + s1
          s1 = c.b1 * x - c.a1 * y + s2
          s2 = c.b2 * x - c.a2 * y
          samples[index] = Float(y)
          index += channels
        }
        // Decaying state would end in denormals, which are slow; below any audible level it is silence.
        z1[slot] = abs(s1) < 1e-30 ? 0 : s1
        z2[slot] = abs(s2) < 1e-30 ? 0 : s2
      }
    }
  }

  /// Convenience: returns `input` (interleaved) filtered.
  public func process(_ input: [Float]) -> [Float] {
    var output = input
    output.withUnsafeMutableBufferPointer { process($0, frames: $0.count / channels) }
    return output
  }

  private func clearState(_ band: Int) {
    for channel in 0..<channels {
      z1[band * channels + channel] = 0
      z2[band * channels + channel] = 0
    }
  }

  /// The RBJ cookbook peaking EQ, normalised so a0 = 1.
  private static func peaking(centerHz: Double, gainDB: Double, q: Double, sampleRate: Double) -> Coefficients {
    let a = pow(10, gainDB / 40)
    let w0 = 2 * Double.pi * centerHz / sampleRate
    let alpha = sin(w0) / (2 * q)
    let cosW0 = cos(w0)
    let a0 = 1 + alpha / a
    return Coefficients(
      b0: (1 + alpha * a) / a0, b1: -2 * cosW0 / a0, b2: (1 - alpha * a) / a0,
      a1: -2 * cosW0 / a0, a2: (1 - alpha / a) / a0)
  }
}
