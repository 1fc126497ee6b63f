import Foundation
import OrbDecode

/// The tone curves that map HDR luminance onto a dimmer display, as in libplacebo's table of named curves. Each maps
/// luminance in nits (source, 0...source peak) to nits (target, 0...target peak), rises monotonically, and is the
/// identity when the source peak is no brighter than the target peak. The raw value is the `--tone-mapping` name.
/// Thread-safety: a value type; `map` is a pure function.
public enum ToneMapCurve: String, Sendable, CaseIterable {
  /// ITU-R BT.2390 EETF (section 5.4): a Hermite spline in PQ space above a knee; the default.
  case bt2390
  /// John Hable's filmic curve ("Uncharted 2"), scaled so the source peak lands on the target peak.
  case hable
  /// Extended Reinhard, L(1 + L/Lp²)/(1 + L) in units of the target peak, so the source peak lands on the target peak.
  case reinhard
  /// Hard clip at the target peak.
  case clip

  /// The curve used unless one is asked for: BT.2390.
  public static let `default` = ToneMapCurve.bt2390

  /// The curve id the shader's `tone_map(curve, ...)` switches on (0 bt2390, 1 hable, 2 reinhard, 3 clip).
  public var shaderID: Int32 {
    switch self {
    case .bt2390: return 0
    case .hable: return 1
    case .reinhard: return 2
    case .clip: return 3
    }
  }

  /// BT.2390's knee offset: KS = (1 + offset)·maxLum − offset. ITU-R BT.2390's worked example uses 0.5; libplacebo
  /// and mpv default to 1.0, a lower knee that keeps more headroom for highlights. Orb follows the players people
  /// compare it with: against ffmpeg's libplacebo `bt.2390` on the same frame, mean CIEDE2000 is 1.9 with 1.0 and 3.6
  /// with 0.5 (HDRAppTests).
  public static let bt2390KneeOffset = 1.0

  /// Maps luminance `nits` of the source to nits on the target within `range`, black to black and peak to peak. For
  /// BT.2390 this is libplacebo's form (v4.208, its `bt2390`): the EETF in PQ relative to the source's black and peak,
  /// then its black-point adaptation, which lifts the source black onto the display's (BT.2390 section 5.4's
  /// b·(1 − E)^4 term, with the exponent min(1/minLum, 4) and a gain that keeps the peak). The other curves keep
  /// their black at 0 (`map(_:sourcePeak:targetPeak:)`). GLSL `tone_map_range`.
  public func map(_ nits: Double, range: ToneRange) -> Double {
    guard self == .bt2390, range.sourcePeak > range.targetPeak else {
      return map(nits, sourcePeak: range.sourcePeak, targetPeak: range.targetPeak)
    }
    let k = range.knee
    var x = k.relative(PQTransfer.inverseEOTF(min(max(nits, range.sourceBlack), range.sourcePeak)))
    if k.ks < 1 && x >= k.ks {
      let t = (x - k.ks) / (1 - k.ks)
      let t2 = t * t
      let t3 = t2 * t
      x = (2 * t3 - 3 * t2 + 1) * k.ks + (t3 - 2 * t2 + t) * (1 - k.ks) + (-2 * t3 + 3 * t2) * k.maxLum
    }
    if x < 1 {
      x += k.minLum * pow(1 - x, k.bp)
      x = k.gain * (x - k.minLum) + k.minLum
    }
    return PQTransfer.eotf(min(max(x * (k.i1 - k.i0) + k.i0, k.o0), k.o1))
  }

  /// Maps luminance `nits` of the source to nits on the target. Input above the source peak is taken as the peak;
  /// negative input as 0. When `sourcePeak <= targetPeak` every curve returns its input. GLSL `tone_map`.
  /// - Parameters:
  ///   - sourcePeak: the brightest luminance the source holds, nits (see `ToneMapParams.sourcePeak`).
  ///   - targetPeak: the display's peak, nits.
  public func map(_ nits: Double, sourcePeak: Double, targetPeak: Double) -> Double {
    guard sourcePeak > targetPeak else { return nits }
    let l = min(max(nits, 0), sourcePeak)
    switch self {
    case .bt2390: return Self.bt2390(l, sourcePeak: sourcePeak, targetPeak: targetPeak)
    case .hable: return targetPeak * Self.hable(l / targetPeak) / Self.hable(sourcePeak / targetPeak)
    case .reinhard:
      let x = l / targetPeak
      let p = sourcePeak / targetPeak
      return targetPeak * x * (1 + x / (p * p)) / (1 + x)
    case .clip: return min(l, targetPeak)
    }
  }

  /// The knee of the BT.2390 EETF in nits: luminance below it passes unchanged. Equal to `sourcePeak` when no tone
  /// mapping is needed.
  public static func bt2390Knee(sourcePeak: Double, targetPeak: Double) -> Double {
    guard sourcePeak > targetPeak else { return sourcePeak }
    let source = PQTransfer.inverseEOTF(sourcePeak)
    let maxLum = PQTransfer.inverseEOTF(targetPeak) / source
    let ks = (1 + bt2390KneeOffset) * maxLum - bt2390KneeOffset
    return PQTransfer.eotf(max(ks, 0) * source)
  }

  /// BT.2390 EETF. The source black (Lb) and the target black (Lmin) are both 0 nits, so E1 = PQ(L)/PQ(Lw) and the
  /// spec's black-level lift b·(1 − E2)^4 (b = minLum = 0) vanishes; it is left out.
  private static func bt2390(_ nits: Double, sourcePeak: Double, targetPeak: Double) -> Double {
    let source = PQTransfer.inverseEOTF(sourcePeak)
    let e1 = PQTransfer.inverseEOTF(nits) / source
    let maxLum = PQTransfer.inverseEOTF(targetPeak) / source
    let ks = (1 + bt2390KneeOffset) * maxLum - bt2390KneeOffset
    var e2 = e1
    if e1 >= ks {
      let t = (e1 - ks) / (1 - ks)
      let t2 = t * t
      let t3 = t2 * t
      e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * maxLum
    }
    return PQTransfer.eotf(e2 * source)
  }

  /// Hable's filmic curve with its published constants (A...F = 0.15, 0.50, 0.10, 0.20, 0.02, 0.30).
  static func hable(_ x: Double) -> Double {
    let (a, b, c, d, e, f) = (0.15, 0.50, 0.10, 0.20, 0.02, 0.30)
    return (x * (a * x + c * b) + d * e) / (x * (a * x + b) + d * f) - e / f
  }
}

/// The luminance range a tone curve maps from and to, nits.
/// Thread-safety: a value type.
public struct ToneRange: Sendable, Equatable {
  public let sourceBlack: Double
  public let sourcePeak: Double
  public let targetBlack: Double
  public let targetPeak: Double
  /// What BT.2390 (`ToneMapCurve.map(_:range:)`) takes from the range alone, made with it: each point took nine
  /// powers for it, four times a point in hybrid mode, about half of all the powers of making an HDR table.
  let knee: BT2390Knee

  public init(sourceBlack: Double, sourcePeak: Double, targetBlack: Double, targetPeak: Double) {
    self.sourceBlack = sourceBlack
    self.sourcePeak = sourcePeak
    self.targetBlack = targetBlack
    self.targetPeak = targetPeak
    knee = BT2390Knee(
      sourceBlack: sourceBlack, sourcePeak: sourcePeak, targetBlack: targetBlack, targetPeak: targetPeak)
  }
}

/// BT.2390's constants for one `ToneRange`: its ends in PQ, and the black and peak relative to the source's, the
/// knee, the black-point exponent and gain (libplacebo v4.208's `bt2390`).
/// Thread-safety: a value type.
struct BT2390Knee: Sendable, Equatable {
  let i0, i1, o0, o1: Double
  let minLum, maxLum, ks, bp, gain: Double

  init(sourceBlack: Double, sourcePeak: Double, targetBlack: Double, targetPeak: Double) {
    i0 = PQTransfer.inverseEOTF(sourceBlack)
    i1 = PQTransfer.inverseEOTF(sourcePeak)
    o0 = PQTransfer.inverseEOTF(targetBlack)
    o1 = PQTransfer.inverseEOTF(targetPeak)
    minLum = Self.relative(o0, i0, i1)
    maxLum = Self.relative(o1, i0, i1)
    ks = (1 + ToneMapCurve.bt2390KneeOffset) * maxLum - ToneMapCurve.bt2390KneeOffset
    bp = minLum > 0 ? min(1 / minLum, 4) : 4
    gain = maxLum < 1 ? 1 / (1 + minLum / maxLum * pow(1 - maxLum, bp)) : 1
  }

  /// PQ signal `v` relative to the source's black (`i0`, 0) and peak (`i1`, 1).
  private static func relative(_ v: Double, _ i0: Double, _ i1: Double) -> Double { (v - i0) / (i1 - i0) }

  /// PQ signal `v` relative to this range's source black (0) and peak (1).
  func relative(_ v: Double) -> Double { Self.relative(v, i0, i1) }
}
