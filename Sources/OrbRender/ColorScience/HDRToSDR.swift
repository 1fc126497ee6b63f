import OrbDecode

/// Everything the HDR → SDR conversion of one stream needs. The shader gets the same values: `curve.shaderID`,
/// `transfer.shaderID`, `sourcePeak`, `targetPeak`, `gamutMatrix` and `sourceLuma`.
/// Thread-safety: a value type.
public struct ToneMapParams: Sendable, Equatable {
  /// The HDR transfer the source signal is in.
  public enum Transfer: String, Sendable, CaseIterable {
    /// SMPTE ST 2084, absolute luminance.
    case pq
    /// ARIB STD-B67, relative; displayed through the BT.2100 OOTF at `sourcePeak`.
    case hlg

    /// The id `colour_linearise(signal, transfer, ...)` switches on (0 pq, 1 hlg).
    public var shaderID: Int32 { self == .pq ? 0 : 1 }

    /// The HDR transfer of a stream, or nil when it is not PQ or HLG.
    public init?(_ transfer: ColorInfo.Transfer) {
      switch transfer {
      case .pq: self = .pq
      case .hlg: self = .hlg
      default: return nil
      }
    }
  }

  /// HDR reference white (diffuse white, ITU-R BT.2408), nits; also the default target peak, so that reference white
  /// and SDR white coincide.
  public static let referenceWhiteNits = 203.0
  /// The source peak assumed when the stream says nothing usable, nits.
  public static let defaultSourcePeakNits = 1000.0

  /// The tone curve (`--tone-mapping`).
  public var curve: ToneMapCurve
  /// The brightest luminance in the source, nits. For HLG, the nominal peak Lw of its OOTF.
  public var sourcePeak: Double
  /// The SDR display's peak (SDR signal 1.0), nits: `--target-peak`.
  public var targetPeak: Double
  public var transfer: Transfer
  /// The source's primaries; output is always BT.709.
  public var primaries: ColorInfo.Primaries

  /// Parameters given outright; the defaults are a 1000-nit PQ BT.2020 source on a 203-nit display with BT.2390.
  public init(
    curve: ToneMapCurve = .default, sourcePeak: Double = defaultSourcePeakNits,
    targetPeak: Double = referenceWhiteNits, transfer: Transfer = .pq, primaries: ColorInfo.Primaries = .bt2020
  ) {
    self.curve = curve
    self.sourcePeak = sourcePeak
    self.targetPeak = targetPeak
    self.transfer = transfer
    self.primaries = primaries
  }

  /// The parameters for a stream: its transfer and primaries, and the source peak chosen from its metadata by
  /// `sourcePeak(maxCLL:masteringMax:)`. Nil when the stream is not HDR (not PQ or HLG).
  public init?(
    color: ColorInfo, metadata: HDRMetadata, curve: ToneMapCurve = .default, targetPeak: Double = referenceWhiteNits
  ) {
    guard let transfer = Transfer(color.transfer) else { return nil }
    let peak = Self.sourcePeak(maxCLL: Double(metadata.maxCLL), masteringMax: metadata.mastering?.maxLuminance)
    self.init(curve: curve, sourcePeak: peak, targetPeak: targetPeak, transfer: transfer, primaries: color.primaries)
  }

  /// The source peak in nits: MaxCLL when valid (> 0 and ≤ 10,000 nits), else the mastering display's maximum
  /// luminance when valid, else 1000 nits. Thread-safety: Safe; a pure function.
  public static func sourcePeak(maxCLL: Double, masteringMax: Double?) -> Double {
    func valid(_ nits: Double?) -> Bool { nits.map { $0 > 0 && $0 <= PQTransfer.peakNits } ?? false }
    if valid(maxCLL) { return maxCLL }
    if let masteringMax, valid(masteringMax) { return masteringMax }
    return defaultSourcePeakNits
  }

  /// Linear source RGB → linear BT.709 RGB.
  public var gamutMatrix: ColorMatrix { DerivedMatrices.toBT709(primaries) }

  /// Luminance coefficients of the source primaries: Y = dot(sourceLuma, rgb).
  public var sourceLuma: SIMD3<Double> { DerivedMatrices.luma(primaries) }
}

/// The HDR → SDR conversion of one pixel, the Swift reference the fragment shader mirrors (`colour_linearise`,
/// `hdr_to_sdr` in shaders/colour.glsl):
/// 1. linearise: PQ EOTF, or HLG inverse OETF and BT.2100 OOTF at the source peak, to display light in nits;
/// 2. tone-map the luminance Y (of the source primaries) with the curve and scale RGB by Y'/Y, which keeps the
///    chromaticity exactly (max(RGB) would darken saturated colours, which have a small Y for their brightest channel);
/// 3. convert to BT.709 linear light and divide by the target peak;
/// 4. gamut-map what lies outside 0...1 at constant Oklab hue, towards the grey of its own intensity;
/// 5. encode with the BT.1886 inverse EOTF (black 0): SDR signal = (nits / targetPeak)^(1/2.4).
/// Thread-safety: Safe; pure functions.
public enum HDRToSDR {
  /// BT.709 luminance coefficients (GLSL `BT709_LUMA`).
  public static let outputLuma = ColorPrimaries.bt709.lumaCoefficients

  /// Source R'G'B' signal (0...1, after the YUV matrix) to linear display light in nits, in the source primaries.
  /// GLSL `colour_linearise`.
  public static func linearise(rgbSignal: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    switch params.transfer {
    case .pq:
      return SIMD3(PQTransfer.eotf(rgbSignal.x), PQTransfer.eotf(rgbSignal.y), PQTransfer.eotf(rgbSignal.z))
    case .hlg:
      let scene = SIMD3(
        HLGTransfer.inverseOETF(rgbSignal.x), HLGTransfer.inverseOETF(rgbSignal.y),
        HLGTransfer.inverseOETF(rgbSignal.z))
      return HLGTransfer.ootf(scene, peakNits: params.sourcePeak)
    }
  }

  /// Linear display light in nits (source primaries) to the encoded SDR BT.709 signal, each channel 0...1, before
  /// dithering. GLSL `hdr_to_sdr`.
  public static func map(rgbLinearNits: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    let inGamut = relative(rgbLinearNits: rgbLinearNits, params: params)
    return SIMD3(
      BT1886Transfer.inverseEOTF(inGamut.x), BT1886Transfer.inverseEOTF(inGamut.y),
      BT1886Transfer.inverseEOTF(inGamut.z))
  }

  /// `map` before the encoding: relative linear BT.709 light in 0...1 (1 = the target peak). GLSL
  /// `hdr_to_sdr_relative`.
  public static func relative(rgbLinearNits: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    let rgb = rgbLinearNits.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: .greatestFiniteMagnitude))
    let y = (rgb * params.sourceLuma).sum()
    let mappedY = params.curve.map(y, sourcePeak: params.sourcePeak, targetPeak: params.targetPeak)
    let toned = y > 0 ? rgb * (mappedY / y) : .zero
    return GamutMapping.perceptual(params.gamutMatrix * toned / params.targetPeak)
  }

  /// Source R'G'B' signal (0...1) straight to the encoded SDR signal (0...1): `linearise` then `map`.
  public static func map(rgbSignal: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    map(rgbLinearNits: linearise(rgbSignal: rgbSignal, params: params), params: params)
  }
}

/// Conversion matrices per declared primaries, derived once (static lets are initialised once, thread-safely).
private enum DerivedMatrices {
  static let bt709 = (ColorMatrix.identity, ColorPrimaries.bt709.lumaCoefficients)
  static let bt2020 = (GamutMapping.bt2020ToBT709, ColorPrimaries.bt2020.lumaCoefficients)
  static let bt601_625 = derive(.bt601_625)
  static let bt601_525 = derive(.bt601_525)
  static let dciP3 = derive(.dciP3)

  static func derive(_ p: ColorPrimaries) -> (ColorMatrix, SIMD3<Double>) {
    (p.conversion(to: .bt709), p.lumaCoefficients)
  }

  static func entry(_ primaries: ColorInfo.Primaries) -> (ColorMatrix, SIMD3<Double>) {
    switch primaries {
    case .bt709, .unknown: return bt709
    case .bt2020: return bt2020
    case .bt601_625: return bt601_625
    case .bt601_525: return bt601_525
    case .dciP3: return dciP3
    }
  }

  static func toBT709(_ primaries: ColorInfo.Primaries) -> ColorMatrix { entry(primaries).0 }
  static func luma(_ primaries: ColorInfo.Primaries) -> SIMD3<Double> { entry(primaries).1 }
}
