import OrbDecode

/// The HDR → SDR transform as the renderer applies it: `HDRToSDR` evaluated on a 64³ grid of source signals, held as
/// the encoded SDR signal and interpolated tetrahedrally. A software GPU then pays four texel fetches per pixel instead
/// of the whole tone- and gamut-mapping math and the encoding (lavapipe: 50 fps at 720p instead of 14–27).
/// shaders/hdrlut.frag fills the grid with colour.glsl, shaders/hdrlut.glsl samples it; this is their reference.
/// Both sides are perceptual (PQ in, BT.1886 out), so the interpolation costs little where the mapping bends
/// (`HDRToSDR` is the exact answer).
/// Thread-safety: Unsafe (grid points are computed on first use and kept); one per thread.
public final class HDRTable {
  /// Grid points per axis (GLSL `HDR_LUT_SIZE`).
  public static let size = 64

  public let params: ToneMapParams
  private var points: [Int: SIMD3<Double>] = [:]

  public init(params: ToneMapParams) { self.params = params }

  /// The encoded SDR signal at grid point (r, g, b) (GLSL hdrlut.frag).
  public func point(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Double> {
    let key = (b * Self.size + g) * Self.size + r
    if let known = points[key] { return known }
    let signal = SIMD3(Double(r), Double(g), Double(b)) / Double(Self.size - 1)
    let value = HDRToSDR.map(rgbSignal: signal, params: params)
    points[key] = value
    return value
  }

  /// Tetrahedral lookup of a source signal (GLSL `hdr_lut_sample`): the cell's diagonal is an edge of every
  /// tetrahedron, so a grey mixes only the two grey corners.
  public func sample(_ signal: SIMD3<Double>) -> SIMD3<Double> {
    let scaled = signal.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1)) * Double(Self.size - 1)
    let limit = Double(Self.size - 2)
    let base = SIMD3(
      min(scaled.x.rounded(.down), limit), min(scaled.y.rounded(.down), limit), min(scaled.z.rounded(.down), limit))
    let f = scaled - base
    let hi = f.max()
    let lo = f.min()
    let mid = f.sum() - hi - lo
    // A step along the largest fraction, then along all but the smallest (on a tie the vertex picked has weight 0).
    let first = SIMD3(f.x >= hi ? 1.0 : 0, f.y >= hi ? 1.0 : 0, f.z >= hi ? 1.0 : 0)
    let second = SIMD3(f.x <= lo ? 0.0 : 1, f.y <= lo ? 0.0 : 1, f.z <= lo ? 0.0 : 1)
    func at(_ p: SIMD3<Double>) -> SIMD3<Double> { point(Int(p.x), Int(p.y), Int(p.z)) }
    return (1 - hi) * at(base) + (hi - mid) * at(base + first) + (mid - lo) * at(base + second) + lo * at(base + 1)
  }

  /// Source R'G'B' signal → encoded SDR signal, through the grid: what the renderer draws, before dithering.
  public func map(rgbSignal: SIMD3<Double>) -> SIMD3<Double> { sample(rgbSignal) }
}
