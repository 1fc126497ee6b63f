import Foundation

// The transfer functions of HDR and SDR video, as plain functions on Doubles. shaders/colour.glsl mirrors each one
// with the same constants (a test compares them); the GLSL names are given on each function.

/// SMPTE ST 2084 (PQ), absolute: a normalised signal 0...1 stands for 0...10,000 nits of display light.
/// Thread-safety: Safe; pure functions.
public enum PQTransfer {
  /// Display luminance of signal 1.0, nits.
  public static let peakNits = 10_000.0
  /// The ST 2084 constants m1, m2, c1, c2, c3 (GLSL `PQ_M1` ... `PQ_C3`).
  public static let m1 = 2610.0 / 16384.0
  public static let m2 = 2523.0 / 4096.0 * 128.0
  public static let c1 = 3424.0 / 4096.0
  public static let c2 = 2413.0 / 4096.0 * 32.0
  public static let c3 = 2392.0 / 4096.0 * 32.0

  /// EOTF: normalised PQ signal (0...1, clamped) to display luminance in nits (0...10,000). GLSL `pq_eotf`.
  public static func eotf(_ signal: Double) -> Double {
    let p = pow(min(max(signal, 0), 1), 1 / m2)
    return peakNits * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
  }

  /// Inverse EOTF: display luminance in nits (0...10,000, clamped) to the normalised PQ signal. GLSL `pq_inv_eotf`.
  public static func inverseEOTF(_ nits: Double) -> Double {
    let y = pow(min(max(nits / peakNits, 0), 1), m1)
    return pow((c1 + c2 * y) / (1 + c3 * y), m2)
  }
}

/// ARIB STD-B67 / ITU-R BT.2100 hybrid log-gamma: OETF on normalised scene light, and the BT.2100 OOTF to display
/// light in nits. Black level lift (Lb) of the HLG EOTF is taken as 0.
/// Thread-safety: Safe; pure functions.
public enum HLGTransfer {
  /// The ARIB STD-B67 constants a, b = 1 − 4a, c = 0.5 − a·ln(4a) (GLSL `HLG_A`, `HLG_B`, `HLG_C`).
  public static let a = 0.178_832_77
  public static let b = 1 - 4 * a
  public static let c = 0.5 - a * log(4 * a)
  /// The nominal peak luminance at which the system gamma is 1.2, nits.
  public static let referencePeakNits = 1000.0
  /// BT.2100 luma coefficients of BT.2020 (R, G, B), used for Y_s in the OOTF.
  public static let lumaCoefficients = SIMD3<Double>(0.2627, 0.6780, 0.0593)

  /// OETF: normalised scene linear light E (0...1) to the HLG signal E' (0...1). GLSL `hlg_oetf`.
  public static func oetf(_ sceneLinear: Double) -> Double {
    let e = max(sceneLinear, 0)
    return e <= 1.0 / 12.0 ? (3 * e).squareRoot() : a * log(12 * e - b) + c
  }

  /// Inverse OETF: HLG signal E' (0...1, clamped) to normalised scene linear light E (0...1). GLSL `hlg_inverse_oetf`.
  public static func inverseOETF(_ signal: Double) -> Double {
    let e = min(max(signal, 0), 1)
    return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
  }

  /// BT.2100 system gamma for a display of nominal peak `peakNits`: 1.2 + 0.42·log10(Lw / 1000).
  /// GLSL `hlg_system_gamma`.
  public static func systemGamma(peakNits: Double) -> Double {
    1.2 + 0.42 * log10(peakNits / referencePeakNits)
  }

  /// BT.2100 OOTF: normalised scene linear RGB (BT.2020, 0...1) to display linear RGB in nits, applied on the scene
  /// luminance Y_s so hue is kept: F_D = Lw · Y_s^(γ−1) · E. GLSL `hlg_ootf`.
  public static func ootf(_ sceneLinear: SIMD3<Double>, peakNits: Double) -> SIMD3<Double> {
    let rgb = sceneLinear.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1))
    let ys = (rgb * lumaCoefficients).sum()
    guard ys > 0 else { return .zero }
    return rgb * (peakNits * pow(ys, systemGamma(peakNits: peakNits) - 1))
  }
}

/// ITU-R BT.1886 EOTF with a black level of 0: a pure 2.4 power between the normalised signal V (0...1) and
/// display light relative to white L (0...1).
/// Thread-safety: Safe; pure functions.
public enum BT1886Transfer {
  /// The exponent of the EOTF.
  public static let gamma = 2.4

  /// Signal V (0...1, clamped) to relative display light L = V^2.4. GLSL `bt1886_eotf`.
  public static func eotf(_ signal: Double) -> Double { pow(min(max(signal, 0), 1), gamma) }

  /// Relative display light L (0...1, clamped) to signal V = L^(1/2.4). GLSL `bt1886_inv_eotf`.
  public static func inverseEOTF(_ relative: Double) -> Double { pow(min(max(relative, 0), 1), 1 / gamma) }
}

/// IEC 61966-2-1 sRGB piecewise transfer between the normalised signal (0...1) and relative linear light (0...1).
/// Thread-safety: Safe; pure functions.
public enum SRGBTransfer {
  /// Signal (0...1, clamped) to relative linear light. GLSL `srgb_eotf`.
  public static func eotf(_ signal: Double) -> Double {
    let v = min(max(signal, 0), 1)
    return v <= 0.040_45 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
  }

  /// Relative linear light (0...1, clamped) to the signal. GLSL `srgb_inv_eotf`.
  public static func inverseEOTF(_ relative: Double) -> Double {
    let l = min(max(relative, 0), 1)
    return l <= 0.003_130_8 ? 12.92 * l : 1.055 * pow(l, 1 / 2.4) - 0.055
  }
}
