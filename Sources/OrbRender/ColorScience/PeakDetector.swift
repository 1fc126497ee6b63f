import COrbPixels
import Foundation
import OrbDecode
import Synchronization

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
  /// Points measured at most: a grid over the picture (about 340×190 at 16:9), so the cost does not grow with its size
  /// (4K costs what 720p costs: about 1.5 ms a picture on this project's 2-core test machine, in COrbPixels'
  /// `orb_measure_light`). A quarter as many missed the brightest edges of testsrc2 and moved it from libplacebo's
  /// picture (mean CIEDE2000 1.14 instead of 0.96). Each point is a 2×2 block, its brightest luma with its chroma. A
  /// highlight smaller than the grid's spacing can be missed: it is then clipped at the display's peak, as libplacebo
  /// clips what lies above its measured peak.
  static let samples = 65_536

  /// spline36's weights halfway between two samples, for the pairs 0.5, 1.5 and 2.5 samples away (they sum to 1/2
  /// each side): the upsampler libplacebo uses for chroma.
  static let halfway: (Double, Double, Double) = {
    func spline36(_ d: Double) -> Double {
      let x = abs(d)
      if x < 1 { return ((13.0 / 11 * x - 453.0 / 209) * x - 3.0 / 209) * x + 1 }
      if x < 2 {
        let t = x - 1
        return ((-6.0 / 11 * t + 270.0 / 209) * t - 156.0 / 209) * t
      }
      let t = x - 2
      return ((1.0 / 11 * t - 45.0 / 209) * t + 26.0 / 209) * t
    }
    return (spline36(0.5), spline36(1.5), spline36(2.5))
  }()

  /// Measures `frame` (a PQ or HLG picture) with the stream's parameters; nil for any other transfer.
  public static func measure(_ frame: VideoFrame, params: ToneMapParams) -> FrameLight? {
    measure(frame, params: params, portable: false)
  }

  /// `measure`, one point at a time with `portable` (as on a CPU without AVX2; for tests).
  static func measure(_ frame: VideoFrame, params: ToneMapParams, portable: Bool) -> FrameLight? {
    guard ToneMapParams.Transfer(frame.color.transfer) != nil, frame.planes.count >= 2 else { return nil }
    let twoBytes = frame.bytesPerComponent == 2
    let unit = frame.sampleScale / (twoBytes ? 65535 : 255)
    let matrix = YUVMatrix(matrix: frame.color.matrix, range: frame.color.range, bitDepth: frame.bitDepth)
    let linear = LinearTable.for(params)
    let chromaW = (frame.width + 1) / 2
    let chromaH = (frame.height + 1) / 2
    let semiPlanar = frame.layout == .semiPlanar420
    func plane(_ p: VideoFrame.Plane) -> orb_light_plane {
      orb_light_plane(
        base: p.base.assumingMemoryBound(to: UInt8.self), stride: p.stride, width: Int32(p.width),
        height: Int32(p.height))
    }
    let luma = HLGTransfer.lumaCoefficients
    var job = orb_light_job()
    job.y = plane(frame.planes[0])
    job.cb = plane(frame.planes[1])
    job.cr = plane(semiPlanar ? frame.planes[1] : frame.planes[2])
    job.chroma_width = Int32(chromaW)
    job.chroma_height = Int32(chromaH)
    job.semi_planar = semiPlanar ? 1 : 0
    job.two_bytes = twoBytes ? 1 : 0
    job.step = Int32(max(1, Int((Double(chromaW * chromaH) / Double(samples)).squareRoot().rounded(.up))))
    // The rows take raw samples, scaled by `unit`; the offsets are the matrix's own.
    let (r, g, b) = (matrix.rows[0], matrix.rows[1], matrix.rows[2])
    job.rows = (
      r.x * unit, r.y * unit, r.z * unit, r.w, g.x * unit, g.y * unit, g.z * unit, g.w, b.x * unit, b.y * unit,
      b.z * unit, b.w
    )
    job.halfway = halfway
    job.table = UnsafePointer(linear.pairs.baseAddress)
    job.size = Int32(LinearTable.size)
    job.hlg = params.transfer == .pq ? 0 : 1
    job.gamma = linear.gamma
    job.content_peak = params.contentPeak
    job.luma = (luma.x, luma.y, luma.z)
    job.average_floor = averageFloor
    var peak = 0.0
    var logSum = 0.0
    let count = withExtendedLifetime(linear) {
      portable ? orb_measure_light_portable(&job, &peak, &logSum) : orb_measure_light(&job, &peak, &logSum)
    }
    guard count > 0 else { return nil }
    return FrameLight(peak: peak, average: exp(logSum / Double(count)))
  }
}

/// The signal → linear light step of `HDRToSDR.linearise` as a table over the signal, so that measuring a picture
/// costs a lookup per channel. For PQ it holds nits; for HLG the scene light after the black lift, which the OOTF
/// then takes to nits. Made once for a stream's parameters (`for`): made for every picture, its 4,097 EOTFs and logs
/// showed as `pow` under each measurement in `perf` of HDR playback.
/// Thread-safety: Safe; never written after `init`, so measurements on any thread share it.
private final class LinearTable: @unchecked Sendable {
  /// The table last made, kept for the next picture of the same stream.
  private static let last = Mutex<LinearTable?>(nil)

  /// The table for `params`: the last one when it was made for the same curve, else a new one.
  static func `for`(_ params: ToneMapParams) -> LinearTable {
    last.withLock { kept in
      if let kept, kept.params.transfer == params.transfer, kept.params.contentPeak == params.contentPeak,
        kept.params.sourceBlack == params.sourceBlack
      {
        return kept
      }
      let made = LinearTable(params: params)
      kept = made
      return made
    }
  }

  static let size = 4096
  let params: ToneMapParams
  /// At each of `size + 1` signal steps, the light and then its ln (PQ only), not below `FrameLight.averageFloor`
  /// (the mean's term without a log per point): side by side, so a point's two steps of both are one 32-byte load.
  let pairs: UnsafeMutableBufferPointer<Double>
  let gamma: Double

  init(params: ToneMapParams) {
    self.params = params
    gamma = HLGTransfer.systemGamma(peakNits: params.contentPeak)
    let beta = sqrt(3 * pow(params.sourceBlack / params.contentPeak, 1 / gamma))
    pairs = .allocate(capacity: 2 * (Self.size + 1))
    for i in 0...Self.size {
      let signal = Double(i) / Double(Self.size)
      let value =
        params.transfer == .pq ? PQTransfer.eotf(signal) : HLGTransfer.inverseOETF(signal * (1 - beta) + beta)
      pairs[2 * i] = value
      pairs[2 * i + 1] = log(max(value, FrameLight.averageFloor))
    }
  }

  deinit {
    pairs.deallocate()
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
