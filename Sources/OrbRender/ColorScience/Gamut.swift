import OrbDecode

/// A 3×3 matrix on linear RGB or XYZ column vectors, stored as rows: out.x = dot(rows.0, v), and so on.
/// In GLSL (column-major) the same matrix is `transpose(mat3(row0, row1, row2))`.
/// Thread-safety: a value type.
public struct ColorMatrix: Sendable, Equatable {
  public var rows: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)

  public init(_ row0: SIMD3<Double>, _ row1: SIMD3<Double>, _ row2: SIMD3<Double>) {
    rows = (row0, row1, row2)
  }

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

  public static func * (m: ColorMatrix, v: SIMD3<Double>) -> SIMD3<Double> {
    SIMD3((m.rows.0 * v).sum(), (m.rows.1 * v).sum(), (m.rows.2 * v).sum())
  }

  public static func * (m: ColorMatrix, n: ColorMatrix) -> ColorMatrix {
    let c = n.columns
    func row(_ r: SIMD3<Double>) -> SIMD3<Double> { SIMD3((r * c.0).sum(), (r * c.1).sum(), (r * c.2).sum()) }
    return ColorMatrix(row(m.rows.0), row(m.rows.1), row(m.rows.2))
  }

  public static func == (m: ColorMatrix, n: ColorMatrix) -> Bool {
    m.rows.0 == n.rows.0 && m.rows.1 == n.rows.1 && m.rows.2 == n.rows.2
  }
}

/// The CIE 1931 xy chromaticities of an RGB colour space's primaries and white point.
/// Thread-safety: a value type.
public struct ColorPrimaries: Sendable, Equatable {
  public typealias Chromaticity = HDRMetadata.Chromaticity
  public var red: Chromaticity
  public var green: Chromaticity
  public var blue: Chromaticity
  public var white: Chromaticity

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

/// Gamut mapping of linear RGB that a conversion left outside 0...1, without hue shifts.
/// Thread-safety: Safe; pure functions.
public enum GamutMapping {
  /// BT.2020 → BT.709 in linear light, derived from the primaries. The GLSL constant `BT2020_TO_BT709` holds it.
  public static let bt2020ToBT709 = ColorPrimaries.bt2020.conversion(to: .bt709)

  /// Maps relative linear RGB into 0...1 by mixing it with the grey of its own luminance Y = dot(luma, rgb), as
  /// little as needed: Y is kept (clamped to 0...1), and since the mix is a straight line towards the white point
  /// in XYZ, the CIE xy hue angle is kept exactly. Colours already in 0...1 come back unchanged. GLSL `gamut_map`.
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
