import OrbDecode

/// The affine map from normalised Y'CbCr code values (code / (2^depth - 1)) to R'G'B' in 0...1, for a
/// matrix, a range and a bit depth. The shader applies exactly these rows.
/// Thread-safety: a value type.
public struct YUVMatrix: Sendable, Equatable {
  /// R' = rows[0].x·Y + rows[0].y·Cb + rows[0].z·Cr + rows[0].w, and likewise for G', B'.
  public var rows: [SIMD4<Double>]

  /// Luma coefficients (Kr, Kb) of each matrix.
  public static func coefficients(_ matrix: ColorInfo.Matrix) -> (kr: Double, kb: Double) {
    switch matrix {
    case .bt601: return (0.299, 0.114)
    case .bt709, .rgb: return (0.2126, 0.0722)
    case .bt2020nc: return (0.2627, 0.0593)
    }
  }

  public init(matrix: ColorInfo.Matrix, range: ColorInfo.Range, bitDepth: Int = 8) {
    let maxCode = Double((1 << bitDepth) - 1)
    let step = Double(1 << (bitDepth - 8))
    // Limited range: black at 16, white at 235, chroma 16...240 around 128 (scaled to the bit depth).
    let yOffset: Double
    let yScale: Double
    let cScale: Double
    switch range {
    case .limited:
      yOffset = 16 * step / maxCode
      yScale = maxCode / (219 * step)
      cScale = maxCode / (224 * step)
    case .full:
      yOffset = 0
      yScale = 1
      cScale = 1
    }
    let cOffset = 128 * step / maxCode
    let (kr, kb) = Self.coefficients(matrix)
    let kg = 1 - kr - kb
    // R' = Y + 2(1-Kr)Cr; B' = Y + 2(1-Kb)Cb; G' = Y - (2Kb(1-Kb)/Kg)Cb - (2Kr(1-Kr)/Kg)Cr
    let rCr = 2 * (1 - kr)
    let bCb = 2 * (1 - kb)
    let gCb = -2 * kb * (1 - kb) / kg
    let gCr = -2 * kr * (1 - kr) / kg
    func row(_ cb: Double, _ cr: Double) -> SIMD4<Double> {
      let y = yScale
      let b = cb * cScale
      let r = cr * cScale
      return SIMD4(y, b, r, -yOffset * y - cOffset * (b + r))
    }
    rows = [row(0, rCr), row(gCb, gCr), row(bCb, 0)]
  }

  /// R'G'B' in 0...1 (unclamped) for normalised code values.
  public func apply(y: Double, cb: Double, cr: Double) -> SIMD3<Double> {
    let v = SIMD4(y, cb, cr, 1)
    return SIMD3((rows[0] * v).sum(), (rows[1] * v).sum(), (rows[2] * v).sum())
  }
}
