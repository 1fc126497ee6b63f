import Foundation
import XCTest

/// Test signals and measurements, generated in code.
enum Signals {
  static let rate = 48_000

  /// A sine of `amplitude` at `hz` on every channel of `channels` (or only on `onChannel`), interleaved.
  static func sine(
    hz: Double, amplitude: Float = 0.5, seconds: Double, channels: Int = 2, onChannel: Int? = nil, rate: Int = rate
  ) -> [Float] {
    let frames = Int(seconds * Double(rate))
    var out = [Float](repeating: 0, count: frames * channels)
    for i in 0..<frames {
      let x = amplitude * Float(sin(2 * Double.pi * hz * Double(i) / Double(rate)))
      for c in 0..<channels where onChannel == nil || onChannel == c { out[i * channels + c] = x }
    }
    return out
  }

  /// Deterministic white noise in −amplitude...amplitude.
  static func noise(frames: Int, channels: Int, amplitude: Float = 0.5, seed: UInt64 = 1) -> [Float] {
    var state = seed
    return (0..<(frames * channels)).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return amplitude * (Float(state >> 40) / Float(1 << 24) * 2 - 1)
    }
  }

  /// One channel out of interleaved samples.
  static func channel(_ samples: [Float], _ index: Int, of channels: Int) -> [Float] {
    stride(from: index, to: samples.count, by: channels).map { samples[$0] }
  }

  static func rms<C: Collection>(_ x: C) -> Double where C.Element == Float {
    guard !x.isEmpty else { return 0 }
    return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
  }

  static func dB(_ linear: Double) -> Double { 20 * log10(max(linear, 1e-12)) }

  /// Frequency (Hz) from the timing of rising zero crossings (linearly interpolated) of a mono signal.
  static func zeroCrossingFrequency<C: RandomAccessCollection>(_ x: C, rate: Int = rate) -> Double
  where C.Element == Float, C.Index == Int {
    var first: Double?
    var last = 0.0
    var count = 0
    var i = x.startIndex + 1
    while i < x.endIndex {
      let a = x[i - 1]
      let b = x[i]
      if a < 0 && b >= 0 {
        let t = Double(i - 1) + Double(-a / (b - a))
        if first == nil { first = t }
        last = t
        count += 1
      }
      i += 1
    }
    guard let first, count > 1 else { return 0 }
    return Double(count - 1) * Double(rate) / (last - first)
  }

  /// The largest sample-to-sample step of a mono signal.
  static func maxJump<C: RandomAccessCollection>(_ x: C) -> Float where C.Element == Float, C.Index == Int {
    var worst: Float = 0
    var i = x.startIndex + 1
    while i < x.endIndex {
      worst = max(worst, abs(x[i] - x[i - 1]))
      i += 1
    }
    return worst
  }

  /// Largest step of a 0.5-amplitude sine at `hz`: 2π·f/rate·A.
  static func sineStep(hz: Double, amplitude: Double = 0.5, rate: Int = rate) -> Float {
    Float(2 * Double.pi * hz / Double(rate) * amplitude)
  }
}
