import Foundation
import OrbDecode

/// How bright one picture is, as libplacebo's peak detection measures it: max(R, G, B) of each pixel in linear light
/// (nits, after the HLG OOTF), its largest value and its geometric mean.
/// Thread-safety: a value type.
public struct FrameLight: Sendable, Equatable {
  public var peak: Double
  public var average: Double

  public init(peak: Double, average: Double) {
    self.peak = peak
    self.average = average
  }

  /// The darkest light the mean counts (libplacebo's 1e-3 of SDR white), nits.
  static let averageFloor = ToneMapParams.referenceWhiteNits / 1000
  /// Points measured at most: a grid over the picture (about 170×96 at 16:9), so the cost does not grow with its size
  /// (4K costs what 720p costs). Each point is a 2×2 block, its brightest luma with its chroma. A highlight smaller
  /// than the grid's spacing can be missed: it is then clipped at the display's peak, as libplacebo clips what lies
  /// above its measured peak.
  static let samples = 16_384

  /// Measures `frame` (a PQ or HLG picture) with the stream's parameters; nil for any other transfer.
  public static func measure(_ frame: VideoFrame, params: ToneMapParams) -> FrameLight? {
    guard ToneMapParams.Transfer(frame.color.transfer) != nil, frame.planes.count >= 2 else { return nil }
    let matrix = YUVMatrix(matrix: frame.color.matrix, range: frame.color.range, bitDepth: frame.bitDepth)
    let linear = LinearTable(params: params)
    let chromaW = (frame.width + 1) / 2
    let chromaH = (frame.height + 1) / 2
    let step = max(1, Int((Double(chromaW * chromaH) / Double(samples)).squareRoot().rounded(.up)))
    let wide = frame.bytesPerComponent == 2
    let unit = frame.sampleScale / (wide ? 65535 : 255)
    let y = frame.planes[0]
    func read(_ plane: VideoFrame.Plane, _ x: Int, _ row: Int, _ component: Int = 0) -> Double {
      let offset = row * plane.stride + (x * plane.components + component) * frame.bytesPerComponent
      let raw =
        wide
        ? Double(plane.base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
        : Double(plane.base.load(fromByteOffset: offset, as: UInt8.self))
      return raw * unit
    }
    var peak = 0.0
    var logSum = 0.0
    var count = 0
    for cy in stride(from: 0, to: chromaH, by: step) {
      for cx in stride(from: 0, to: chromaW, by: step) {
        var luma = 0.0
        for dy in 0..<2 where cy * 2 + dy < y.height {
          for dx in 0..<2 where cx * 2 + dx < y.width { luma = max(luma, read(y, cx * 2 + dx, cy * 2 + dy)) }
        }
        let (cb, cr): (Double, Double)
        if frame.layout == .semiPlanar420 {
          (cb, cr) = (read(frame.planes[1], cx, cy, 0), read(frame.planes[1], cx, cy, 1))
        } else {
          (cb, cr) = (read(frame.planes[1], cx, cy), read(frame.planes[2], cx, cy))
        }
        let rgb = matrix.apply(y: luma, cb: cb, cr: cr).clamped(
          lowerBound: .zero, upperBound: SIMD3(repeating: 1))
        let m = linear.maxChannel(rgb)
        peak = max(peak, m)
        logSum += log(max(m, averageFloor))
        count += 1
      }
    }
    guard count > 0 else { return nil }
    return FrameLight(peak: peak, average: exp(logSum / Double(count)))
  }
}

/// The signal → linear light step of `HDRToSDR.linearise` as a table over the signal, so that measuring a picture
/// costs a lookup per channel. For PQ it holds nits; for HLG the scene light after the black lift, which the OOTF
/// then takes to nits.
private struct LinearTable {
  static let size = 4096
  let params: ToneMapParams
  let values: [Double]
  let gamma: Double

  init(params: ToneMapParams) {
    self.params = params
    gamma = HLGTransfer.systemGamma(peakNits: params.contentPeak)
    let beta = sqrt(3 * pow(params.sourceBlack / params.contentPeak, 1 / gamma))
    values = (0...Self.size).map { i in
      let signal = Double(i) / Double(Self.size)
      return params.transfer == .pq
        ? PQTransfer.eotf(signal) : HLGTransfer.inverseOETF(signal * (1 - beta) + beta)
    }
  }

  func value(_ signal: Double) -> Double {
    let position = signal * Double(Self.size)
    let i = min(Int(position), Self.size - 1)
    let f = position - Double(i)
    return values[i] + f * (values[i + 1] - values[i])
  }

  /// max(R, G, B) in nits of an R'G'B' signal.
  func maxChannel(_ rgb: SIMD3<Double>) -> Double {
    if params.transfer == .pq { return value(rgb.max()) }
    let scene = SIMD3(value(rgb.x), value(rgb.y), value(rgb.z))
    let ys = (scene * HLGTransfer.lumaCoefficients).sum()
    return ys > 0 ? params.contentPeak * pow(ys, gamma - 1) * scene.max() : 0
  }
}

/// libplacebo's peak detection over time (v4.208, `pl_peak_detect_params` defaults): each picture's light is smoothed
/// with a first-order filter of 100 pictures, except across a scene change (the mean light moves by 5.5 dB or more:
/// fully at 10 dB), where it follows at once; the peak never falls below SDR white. The curve then maps from that peak
/// plus 5 %, within `lowestPeak` and the content's peak.
/// Thread-safety: a value type, owned by the render thread.
public struct PeakDetector: Sendable, Equatable {
  public static let smoothingPeriod = 100.0
  public static let sceneThresholdLow = 5.5
  public static let sceneThresholdHigh = 10.0
  public static let overshootMargin = 0.05
  /// The lowest peak measured, nits (libplacebo's `minimum_peak` 1.0: SDR white).
  public static let minimumPeak = ToneMapParams.referenceWhiteNits

  /// The smoothed light; nil before the first picture.
  public private(set) var state: FrameLight?

  public init() {}

  /// The filter's weight for a new picture: libplacebo's sqrt(a² + 2a) − a with a = 1 − cos(1/period).
  static var weight: Double {
    let a = 1 - cos(1 / smoothingPeriod)
    return (a * a + 2 * a).squareRoot() - a
  }

  /// Adds one picture's measurement.
  public mutating func add(_ light: FrameLight) {
    let current = FrameLight(peak: max(light.peak, Self.minimumPeak), average: light.average)
    var s = state ?? current
    let k = Self.weight
    s.peak += k * (current.peak - s.peak)
    s.average += k * (current.average - s.average)
    // A scene change: how far this picture's mean light lies from the smoothed one, in natural-log units of the
    // thresholds' decibels.
    let distance = abs(log(current.average / s.average))
    let low = Self.sceneThresholdLow / (10 / log(10.0))
    let high = Self.sceneThresholdHigh / (10 / log(10.0))
    let t = min(max((distance - low) / (high - low), 0), 1)
    let w = t * t * (3 - 2 * t)
    s.peak += w * (current.peak - s.peak)
    s.average += w * (current.average - s.average)
    state = s
  }

  /// Forgets the past (a seek, another stream): the next picture starts afresh.
  public mutating func reset() { state = nil }

  /// The peak the curve maps from for content whose metadata peak is `contentPeak`, nits: the smoothed peak with its
  /// margin, within `lowestPeak` and `contentPeak` (compared as square roots, as libplacebo's table is laid out).
  public func curvePeak(contentPeak: Double, targetPeak: Double) -> Double {
    guard let state, contentPeak > targetPeak else { return contentPeak }
    let lowest = Self.lowestPeak(contentPeak: contentPeak, targetPeak: targetPeak).squareRoot()
    let root = (state.peak * (1 + Self.overshootMargin)).squareRoot()
    let clamped = min(max(root, lowest), contentPeak.squareRoot())
    return clamped * clamped
  }

  /// The lowest peak the curve maps from, nits: 5 % of the way from the display's peak to the content's, in square
  /// roots (libplacebo's dynamic table range).
  public static func lowestPeak(contentPeak: Double, targetPeak: Double) -> Double {
    let root = targetPeak.squareRoot() + 0.05 * (contentPeak.squareRoot() - targetPeak.squareRoot())
    return root * root
  }
}
