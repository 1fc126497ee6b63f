/// Ordered dithering with an 8×8 Bayer matrix before quantising to 8 bits: each pixel gets an offset of
/// (index + 0.5)/64 − 0.5 LSB (within ±0.5 LSB, mean 0 over a tile), the same on all three channels so it adds no
/// chroma noise. GLSL `bayer8` and `dither8` mirror it; the shader's pixel (x, y) is floor(gl_FragCoord.xy).
/// Thread-safety: Safe; pure functions.
public enum OrderedDither {
  /// The Bayer matrix entry 0...63 at pixel (x, y), from the bit interleaving of (x XOR y) and y, reversed.
  /// Row 0 reads 0 32 8 40 2 34 10 42.
  public static func bayerIndex(x: Int, y: Int) -> Int {
    let v = (x ^ y) & 7
    let w = y & 7
    return (v & 1) << 5 | (w & 1) << 4 | (v & 2) << 2 | (w & 2) << 1 | (v & 4) >> 1 | (w & 4) >> 2
  }

  /// The dither offset at pixel (x, y) in LSB of the output, −0.4921875...0.4921875.
  public static func offset(x: Int, y: Int) -> Double {
    (Double(bayerIndex(x: x, y: y)) + 0.5) / 64 - 0.5
  }

  /// A normalised signal (0...1) with the pixel's offset added, ready to be rounded to `bits` (the UNORM write).
  public static func apply(_ signal: Double, x: Int, y: Int, bits: Int = 8) -> Double {
    signal + offset(x: x, y: y) / Double((1 << bits) - 1)
  }
}
