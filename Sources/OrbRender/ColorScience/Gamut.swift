import Foundation
import OrbDecode

/// A 3×3 matrix on linear RGB or XYZ column vectors, stored as rows: out.x = dot(rows.0, v), and so on.
/// In GLSL (column-major) the same matrix is `transpose(mat3(row0, row1, row2))`.
/// Thread-safety: a value type.
public struct ColorMatrix: Sendable, Equatable {
  /// The three rows.
  public var rows: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)

  /// A matrix from its rows.
  public init(_ row0: SIMD3<Double>, _ row1: SIMD3<Double>, _ row2: SIMD3<Double>) {
    rows = (row0, row1, row2)
  }

  /// The identity.
  public static let identity = ColorMatrix(SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1))

  /// Columns of the matrix.
  public var columns: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>) {
    (
      SIMD3(rows.0.x, rows.1.x, rows.2.x), SIMD3(rows.0.y, rows.1.y, rows.2.y), SIMD3(rows.0.z, rows.1.z, rows.2.z)
    )
  }

  /// Element at `row`, `column` (0...2 each).
  public subscript(row: Int, column: Int) -> Double {
    let r = row == 0 ? rows.0 : row == 1 ? rows.1 : rows.2
    return r[column]
  }

  /// The inverse (the matrices here are colour-space conversions, always invertible).
  public var inverse: ColorMatrix {
    let (a, b, c) = rows
    // Rows of the inverse are the cross products of the columns' complements, over the determinant.
    let x = SIMD3(b.y * c.z - b.z * c.y, a.z * c.y - a.y * c.z, a.y * b.z - a.z * b.y)
    let y = SIMD3(b.z * c.x - b.x * c.z, a.x * c.z - a.z * c.x, a.z * b.x - a.x * b.z)
    let z = SIMD3(b.x * c.y - b.y * c.x, a.y * c.x - a.x * c.y, a.x * b.y - a.y * b.x)
    let det = a.x * x.x + a.y * y.x + a.z * z.x
    return ColorMatrix(x / det, y / det, z / det)
  }

  /// The matrix applied to a column vector.
  public static func * (m: ColorMatrix, v: SIMD3<Double>) -> SIMD3<Double> {
    SIMD3((m.rows.0 * v).sum(), (m.rows.1 * v).sum(), (m.rows.2 * v).sum())
  }

  /// The product: applying it is applying `n`, then `m`.
  public static func * (m: ColorMatrix, n: ColorMatrix) -> ColorMatrix {
    let c = n.columns
    func row(_ r: SIMD3<Double>) -> SIMD3<Double> { SIMD3((r * c.0).sum(), (r * c.1).sum(), (r * c.2).sum()) }
    return ColorMatrix(row(m.rows.0), row(m.rows.1), row(m.rows.2))
  }

  /// Element-wise equality.
  public static func == (m: ColorMatrix, n: ColorMatrix) -> Bool {
    m.rows.0 == n.rows.0 && m.rows.1 == n.rows.1 && m.rows.2 == n.rows.2
  }
}

/// The CIE 1931 xy chromaticities of an RGB colour space's primaries and white point.
/// Thread-safety: a value type.
public struct ColorPrimaries: Sendable, Equatable {
  /// A CIE 1931 xy chromaticity.
  public typealias Chromaticity = HDRMetadata.Chromaticity
  public var red: Chromaticity
  public var green: Chromaticity
  public var blue: Chromaticity
  public var white: Chromaticity

  /// Primaries from their chromaticities and the white point's.
  public init(red: Chromaticity, green: Chromaticity, blue: Chromaticity, white: Chromaticity) {
    self.red = red
    self.green = green
    self.blue = blue
    self.white = white
  }

  /// CIE D65 as ITU-R BT.709/BT.2020 round it.
  public static let d65 = Chromaticity(x: 0.3127, y: 0.3290)
  /// ITU-R BT.709 (and sRGB).
  public static let bt709 = ColorPrimaries(
    red: .init(x: 0.64, y: 0.33), green: .init(x: 0.30, y: 0.60), blue: .init(x: 0.15, y: 0.06), white: d65)
  /// ITU-R BT.2020 / BT.2100.
  public static let bt2020 = ColorPrimaries(
    red: .init(x: 0.708, y: 0.292), green: .init(x: 0.170, y: 0.797), blue: .init(x: 0.131, y: 0.046), white: d65)
  /// ITU-R BT.601 625-line (EBU).
  public static let bt601_625 = ColorPrimaries(
    red: .init(x: 0.64, y: 0.33), green: .init(x: 0.29, y: 0.60), blue: .init(x: 0.15, y: 0.06), white: d65)
  /// ITU-R BT.601 525-line (SMPTE C).
  public static let bt601_525 = ColorPrimaries(
    red: .init(x: 0.630, y: 0.340), green: .init(x: 0.310, y: 0.595), blue: .init(x: 0.155, y: 0.070), white: d65)
  /// SMPTE EG 432-1 (Display P3, D65).
  public static let dciP3 = ColorPrimaries(
    red: .init(x: 0.680, y: 0.320), green: .init(x: 0.265, y: 0.690), blue: .init(x: 0.150, y: 0.060), white: d65)

  /// The primaries a stream declares; unknown is read as BT.709.
  public init(_ primaries: ColorInfo.Primaries) {
    switch primaries {
    case .bt709, .unknown: self = .bt709
    case .bt2020: self = .bt2020
    case .bt601_625: self = .bt601_625
    case .bt601_525: self = .bt601_525
    case .dciP3: self = .dciP3
    }
  }

  /// Linear RGB (white = (1,1,1)) to CIE XYZ (white Y = 1): columns are the primaries' XYZ scaled so that they sum
  /// to the white point's XYZ.
  public var rgbToXYZ: ColorMatrix {
    func xyz(_ c: Chromaticity) -> SIMD3<Double> { SIMD3(c.x / c.y, 1, (1 - c.x - c.y) / c.y) }
    let (r, g, b) = (xyz(red), xyz(green), xyz(blue))
    let p = ColorMatrix(SIMD3(r.x, g.x, b.x), SIMD3(r.y, g.y, b.y), SIMD3(r.z, g.z, b.z))
    let s = p.inverse * xyz(white)
    return ColorMatrix(p.rows.0 * s, p.rows.1 * s, p.rows.2 * s)
  }

  /// Luma/luminance coefficients (the Y row of `rgbToXYZ`): Y = dot(coefficients, rgb).
  public var lumaCoefficients: SIMD3<Double> { rgbToXYZ.rows.1 }

  /// The linear-light matrix from these primaries to `target` (no chromatic adaptation: both are D65 here).
  public func conversion(to target: ColorPrimaries) -> ColorMatrix {
    target.rgbToXYZ.inverse * rgbToXYZ
  }
}

/// ITU-R BT.2100 ICtCp: a perceptual space on PQ-encoded LMS whose hue lines are close to constant perceived hue.
/// The renderer maps gamut in Oklab; the tests measure hue turns here, as an independent yardstick.
/// Thread-safety: Safe; pure functions.
public enum ICtCp {
  /// Linear BT.2020 RGB → LMS (BT.2100, integer coefficients over 4096).
  public static let bt2020ToLMS = ColorMatrix(
    SIMD3(1688, 2146, 262) / 4096, SIMD3(683, 2951, 462) / 4096, SIMD3(99, 309, 3688) / 4096)
  /// PQ-encoded L'M'S' → ICtCp (BT.2100).
  public static let lmsToICtCp = ColorMatrix(
    SIMD3(2048, 2048, 0) / 4096, SIMD3(6610, -13_613, 7003) / 4096, SIMD3(17_933, -17_390, -543) / 4096)
  /// ICtCp → PQ-encoded L'M'S'.
  public static let iCtCpToLMS = lmsToICtCp.inverse
  /// Linear BT.709 RGB → LMS, and back.
  public static let bt709ToLMS = bt2020ToLMS * GamutMapping.bt2020ToBT709.inverse
  public static let lmsToBT709 = bt709ToLMS.inverse

  /// Linear BT.709 RGB in nits → (I, Ct, Cp).
  public static func fromBT709(nits: SIMD3<Double>) -> SIMD3<Double> {
    let lms = bt709ToLMS * nits
    return lmsToICtCp
      * SIMD3(PQTransfer.inverseEOTF(lms.x), PQTransfer.inverseEOTF(lms.y), PQTransfer.inverseEOTF(lms.z))
  }

  /// (I, Ct, Cp) → linear BT.709 RGB in nits.
  public static func toBT709(_ ictcp: SIMD3<Double>) -> SIMD3<Double> {
    let p = iCtCpToLMS * ictcp
    return lmsToBT709 * SIMD3(PQTransfer.eotf(p.x), PQTransfer.eotf(p.y), PQTransfer.eotf(p.z))
  }

  /// The hue angle atan2(Cp, Ct) in degrees.
  public static func hue(_ ictcp: SIMD3<Double>) -> Double { atan2(ictcp.z, ictcp.y) * 180 / .pi }
}

/// Oklab (Björn Ottosson, 2020): a perceptual space on relative linear light, L (lightness, white = 1), a, b.
/// Thread-safety: Safe; pure functions.
public enum Oklab {
  /// Linear BT.709 (sRGB primaries) → LMS.
  public static let bt709ToLMS = ColorMatrix(
    SIMD3(0.412_221_470_8, 0.536_332_536_3, 0.051_445_992_9),
    SIMD3(0.211_903_498_2, 0.680_699_545_1, 0.107_396_956_6),
    SIMD3(0.088_302_461_9, 0.281_718_837_6, 0.629_978_700_5))
  /// Cube-rooted L'M'S' → Lab.
  public static let lmsToLab = ColorMatrix(
    SIMD3(0.210_454_255_3, 0.793_617_785_0, -0.004_072_046_8),
    SIMD3(1.977_998_495_1, -2.428_592_205_0, 0.450_593_709_9),
    SIMD3(0.025_904_037_1, 0.782_771_766_2, -0.808_675_766_0))
  /// Lab → L'M'S' and LMS → linear BT.709 as published (not inverted from the rounded forward matrices): with these,
  /// any L with a = b = 0 comes back as an exactly neutral grey, and L = 1 as exactly white.
  public static let labToLMS = ColorMatrix(
    SIMD3(1, 0.396_337_777_4, 0.215_803_757_3), SIMD3(1, -0.105_561_345_8, -0.063_854_172_8),
    SIMD3(1, -0.089_484_177_5, -1.291_485_548_0))
  public static let lmsToBT709 = ColorMatrix(
    SIMD3(4.076_741_662_1, -3.307_711_591_3, 0.230_969_929_2),
    SIMD3(-1.268_438_004_6, 2.609_757_401_1, -0.341_319_396_5),
    SIMD3(-0.004_196_086_3, -0.703_418_614_7, 1.707_614_701_0))

  /// Relative linear BT.709 RGB → (L, a, b).
  public static func fromBT709(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
    let lms = bt709ToLMS * rgb
    return lmsToLab * SIMD3(cbrt(lms.x), cbrt(lms.y), cbrt(lms.z))
  }

  /// (L, a, b) → relative linear BT.709 RGB.
  public static func toBT709(_ lab: SIMD3<Double>) -> SIMD3<Double> {
    let p = labToLMS * lab
    return lmsToBT709 * (p * p * p)
  }

  /// The hue angle atan2(b, a) in degrees.
  public static func hue(_ lab: SIMD3<Double>) -> Double { atan2(lab.z, lab.y) * 180 / .pi }
}

/// Gamut mapping of linear RGB that a conversion left outside 0...1, without hue shifts.
/// Thread-safety: Safe; pure functions.
public enum GamutMapping {
  /// BT.2020 → BT.709 in linear light, derived from the primaries. The GLSL constant `BT2020_TO_BT709` holds it.
  public static let bt2020ToBT709 = ColorPrimaries.bt2020.conversion(to: .bt709)
  /// How far outside 0...1 counts as rounding, not colour (GLSL `GAMUT_OVERSHOOT`).
  public static let overshoot = 1e-6
  /// Bisection steps of `perceptual` before its final linear step onto the boundary.
  public static let perceptualSteps = 8

  /// The largest hue turn (degrees, Oklab) that `perceptual` accepts from a plain per-channel clip.
  public static let clipHueToleranceDegrees = 2.0
  /// Below this Oklab chroma a colour is near enough to grey that its hue cannot be seen turning.
  public static let clipChromaFloor = 0.02

  /// Whether clipping `lab` to `clippedLab` keeps its hue within `clipHueToleranceDegrees` (or it is near grey).
  static func clipKeepsHue(_ lab: SIMD3<Double>, _ clippedLab: SIMD3<Double>) -> Bool {
    let c1 = (lab.y * lab.y + lab.z * lab.z).squareRoot()
    let c2 = (clippedLab.y * clippedLab.y + clippedLab.z * clippedLab.z).squareRoot()
    if c1 < clipChromaFloor || c2 < clipChromaFloor { return true }
    let cosine = (lab.y * clippedLab.y + lab.z * clippedLab.z) / (c1 * c2)
    return cosine >= cos(clipHueToleranceDegrees * .pi / 180)
  }

  /// How far towards mid-grey the anchor of `perceptual`'s line moves per unit of Oklab chroma (Ottosson's α).
  public static let anchorChromaWeight = 0.05

  /// The grey `perceptual` slides a colour towards: Ottosson's adaptive L0 (α = 0.05). A colour of little chroma
  /// keeps its lightness (greys map to themselves, clipped to black or white); a saturated one gives up some
  /// lightness instead of all its chroma, so a red slightly beyond BT.709 stays red rather than turning pink.
  public static func anchorLightness(_ lab: SIMD3<Double>) -> Double {
    let chroma = (lab.y * lab.y + lab.z * lab.z).squareRoot()
    let ld = lab.x - 0.5
    let e1 = 0.5 + abs(ld) + anchorChromaWeight * chroma
    let root = max(0, e1 * e1 - 2 * abs(ld)).squareRoot()
    return 0.5 * (1 + (ld < 0 ? -1 : 1) * (e1 - root))
  }

  /// Maps relative linear BT.709 RGB into 0...1 without turning its hue: a per-channel clip where that keeps the
  /// Oklab hue within `clipHueToleranceDegrees`, else a slide along the straight Oklab line from the colour to a grey
  /// (`anchorLightness`), keeping as much chroma as fits (bisection, then a linear step onto the boundary). Colours in
  /// 0...1 come back unchanged. This is what `HDRToSDR` uses. GLSL `gamut_map`.
  /// Oklab rather than ICtCp: its hue lines are as straight (within about 2° of ICtCp's on BT.2020 primaries), and a
  /// step costs a cube instead of four PQ powers, which keeps HDR playback real-time on a software GPU.
  public static func perceptual(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
    if rgb.min() >= 0 && rgb.max() <= 1 { return rgb }
    // Rounding overshoot (a tone curve landing a hair above its peak) is clipped, not hue-mapped.
    if rgb.min() >= -overshoot && rgb.max() <= 1 + overshoot {
      return rgb.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1))
    }
    let colour = Oklab.fromBT709(rgb)
    // Clipping each channel is what people expect (it keeps saturation) wherever it does not turn the hue: a colour
    // just past the edge from compression or rounding. Only where it would turn the hue is the mapping needed.
    let clipped = rgb.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1))
    if clipKeepsHue(colour, Oklab.fromBT709(clipped)) { return clipped }
    let greyL = anchorLightness(colour)
    func along(_ s: Double) -> SIMD3<Double> {
      Oklab.toBT709(SIMD3(greyL + s * (colour.x - greyL), s * colour.y, s * colour.z))
    }
    var inside = 0.0
    var outside = 1.0
    for _ in 0..<perceptualSteps {
      let mid = (inside + outside) / 2
      let v = along(mid)
      if v.min() >= 0 && v.max() <= 1 { inside = mid } else { outside = mid }
    }
    // Finish on the boundary itself, interpolating linearly between the last points inside and outside: the channel
    // that leaves 0...1 lands exactly on 0 or 1. Without this, a channel meant to be 0 keeps up to ~1e-4 of light,
    // which the SDR encoding (a 1/2.4 power) turns into several 8-bit codes.
    let vIn = along(inside)
    let vOut = along(outside)
    var f = 1.0
    for c in 0..<3 {
      if vOut[c] < 0 {
        f = min(f, vIn[c] / (vIn[c] - vOut[c]))
      } else if vOut[c] > 1 {
        f = min(f, (1 - vIn[c]) / (vOut[c] - vIn[c]))
      }
    }
    let boundary = vIn + min(max(f, 0), 1) * (vOut - vIn)
    return boundary.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1))
  }

  /// Maps relative linear RGB into 0...1 by mixing it with the grey of its own luminance Y = dot(luma, rgb), as
  /// little as needed: Y is kept (clamped to 0...1), and since the mix is a straight line towards the white point
  /// in XYZ, the CIE xy hue angle is kept exactly; perceived hue is not (BT.2020 reds turn up to ~19° in ICtCp), so
  /// `HDRToSDR` uses `perceptual`. Cheap: no iteration. Colours already in 0...1 come back unchanged.
  /// GLSL `gamut_desaturate`.
  /// - Parameter luma: the luminance coefficients of the space `rgb` is in (BT.709's for SDR output).
  public static func desaturate(_ rgb: SIMD3<Double>, luma: SIMD3<Double>) -> SIMD3<Double> {
    let y = min(max((rgb * luma).sum(), 0), 1)
    var t = 1.0
    for i in 0..<3 {
      let d = rgb[i] - y
      if rgb[i] > 1 {
        t = min(t, (1 - y) / d)
      } else if rgb[i] < 0 {
        t = min(t, -y / d)
      }
    }
    let mapped = SIMD3(repeating: y) + max(t, 0) * (rgb - SIMD3(repeating: y))
    // Rounding can leave a hair outside.
    return mapped.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1))
  }
}
