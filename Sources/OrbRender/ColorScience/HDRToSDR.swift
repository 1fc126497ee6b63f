import Foundation
import OrbDecode

/// Everything the HDR → SDR conversion of one stream needs. The shader gets the same values: `curve.shaderID`,
/// `transfer.shaderID`, `sourcePeak`, `targetPeak`, `contentPeak`, `sourceBlack`, and the matrices of `primaries`.
/// Thread-safety: a value type.
public struct ToneMapParams: Sendable, Equatable {
  /// The HDR transfer the source signal is in.
  public enum Transfer: String, Sendable, CaseIterable {
    /// SMPTE ST 2084, absolute luminance.
    case pq
    /// ARIB STD-B67, relative; displayed through the BT.2100 OOTF at `contentPeak`.
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

  /// How the curve is applied to a colour (libplacebo's tone-mapping modes, chosen as its `auto` does).
  public enum Mode: Int32, Sendable {
    /// Each channel through the curve: only when nothing needs compressing.
    case perChannel = 0
    /// The luminance through the curve, the colour scaled with it (and desaturated a little more).
    case luma = 1
    /// Luminance in the shadows and mid-tones, per channel in the highlights: for sources far brighter than the
    /// display (more than 10×), where bright colours must move towards white to keep their brightness.
    case hybrid = 2
  }

  /// HDR reference white (diffuse white, ITU-R BT.2408), nits; also the default target peak, so that reference white
  /// and SDR white coincide (libplacebo's PL_COLOR_SDR_WHITE).
  public static let referenceWhiteNits = 203.0
  /// An HLG stream's nominal display peak, and the peak of a PQ stream that says nothing usable of its own, nits.
  public static let defaultHLGPeakNits = 1000.0
  public static let defaultPQPeakNits = PQTransfer.peakNits
  /// A source's black when its mastering display says nothing usable, nits.
  public static let defaultSourceBlackNits = 0.005
  /// The display's contrast: its black is its peak over this (BT.1886 with libplacebo's 1000:1).
  public static let targetContrast = 1000.0
  /// libplacebo's `tone_mapping_crosstalk`: each channel takes this much of the others before the curve.
  public static let crosstalk = 0.04

  /// The tone curve (`--tone-mapping`).
  public var curve: ToneMapCurve
  /// The peak the curve maps from, nits: `contentPeak`, or the peak measured in the picture (`PeakDetector`), which
  /// lies between `PeakDetector.lowestPeak(...)` and `contentPeak`.
  public var sourcePeak: Double { didSet { range = Self.range(sourceBlack, sourcePeak, targetPeak) } }
  /// The brightest the content can be by its metadata, nits: every channel is clamped to it, and it picks the mode.
  public var contentPeak: Double
  /// The source's black, nits.
  public var sourceBlack: Double { didSet { range = Self.range(sourceBlack, sourcePeak, targetPeak) } }
  /// The SDR display's peak (SDR signal 1.0), nits: `--target-peak`.
  public var targetPeak: Double { didSet { range = Self.range(sourceBlack, sourcePeak, targetPeak) } }
  public var transfer: Transfer
  /// The source's primaries; output is always BT.709.
  public var primaries: ColorInfo.Primaries

  /// Parameters given outright; the defaults are a 1000-nit PQ BT.2020 source on a 203-nit display with BT.2390.
  /// `contentPeak` defaults to `sourcePeak` (no peak detection).
  public init(
    curve: ToneMapCurve = .default, sourcePeak: Double = defaultHLGPeakNits,
    targetPeak: Double = referenceWhiteNits, transfer: Transfer = .pq, primaries: ColorInfo.Primaries = .bt2020,
    contentPeak: Double? = nil, sourceBlack: Double = defaultSourceBlackNits
  ) {
    self.curve = curve
    self.sourcePeak = sourcePeak
    self.contentPeak = contentPeak ?? sourcePeak
    self.sourceBlack = sourceBlack
    self.targetPeak = targetPeak
    self.transfer = transfer
    self.primaries = primaries
    range = Self.range(sourceBlack, sourcePeak, targetPeak)
  }

  /// The parameters for a stream: its transfer and primaries, and its peak and black from its metadata
  /// (`contentPeak(transfer:masteringMax:)`). Nil when the stream is not HDR (not PQ or HLG).
  public init?(
    color: ColorInfo, metadata: HDRMetadata, curve: ToneMapCurve = .default, targetPeak: Double = referenceWhiteNits
  ) {
    guard let transfer = Transfer(color.transfer) else { return nil }
    let peak = Self.contentPeak(transfer: transfer, masteringMax: metadata.mastering?.maxLuminance)
    self.init(
      curve: curve, sourcePeak: peak, targetPeak: targetPeak, transfer: transfer, primaries: color.primaries,
      sourceBlack: Self.sourceBlack(masteringMin: metadata.mastering?.minLuminance))
  }

  /// The content's peak in nits, as libplacebo (v4.208) and so mpv and ffmpeg's filter take it: the mastering
  /// display's maximum luminance when it is valid (1...10,000 nits), else 10,000 for PQ and 1000 for HLG. MaxCLL is
  /// not used: libplacebo ignores it, and Orb is compared with it. Thread-safety: Safe; a pure function.
  public static func contentPeak(transfer: Transfer, masteringMax: Double?) -> Double {
    if let masteringMax, masteringMax >= 1, masteringMax <= PQTransfer.peakNits { return masteringMax }
    return transfer == .pq ? defaultPQPeakNits : defaultHLGPeakNits
  }

  /// The source's black in nits: the mastering display's minimum when valid (above 0, at most 100), else 0.005.
  public static func sourceBlack(masteringMin: Double?) -> Double {
    if let masteringMin, masteringMin > 0, masteringMin <= 100 { return masteringMin }
    return defaultSourceBlackNits
  }

  /// The display's black, nits.
  public var targetBlack: Double { range.targetBlack }

  /// The range the curve maps: the source's black and (detected) peak onto the display's. Kept with the peaks it is
  /// made of, so that the tone mapping of each point (64³ of them a table) does not make it again.
  public private(set) var range: ToneRange

  private static func range(_ sourceBlack: Double, _ sourcePeak: Double, _ targetPeak: Double) -> ToneRange {
    ToneRange(
      sourceBlack: sourceBlack, sourcePeak: max(sourcePeak, targetPeak), targetBlack: targetPeak / targetContrast,
      targetPeak: targetPeak)
  }

  /// libplacebo's `auto` mode: per channel when nothing is compressed, hybrid above 10× the display, else luma. It
  /// goes by the metadata's peak, never the detected one.
  public var mode: Mode {
    if contentPeak <= targetPeak * (1 + 1e-6) { return .perChannel }
    return contentPeak / targetPeak > 10 ? .hybrid : .luma
  }

  /// Linear source RGB → linear BT.709 RGB.
  public var gamutMatrix: ColorMatrix { DerivedMatrices.toBT709(primaries) }

  /// Luminance coefficients of the source primaries: Y = dot(sourceLuma, rgb).
  public var sourceLuma: SIMD3<Double> { DerivedMatrices.luma(primaries) }

  /// Source RGB → (X/Xw − Y, Y, Z/Zw − Y): the space luma and hybrid modes scale colour in, and its inverse.
  public var lumaSpace: (ColorMatrix, ColorMatrix) { DerivedMatrices.lumaSpace(primaries) }
}

/// The HDR → SDR conversion of one pixel as libplacebo v4.208 does it by default (what mpv's gpu-next and ffmpeg's
/// `libplacebo` filter show; mean CIEDE2000 against the filter is in HDRAppTests), the Swift reference the table
/// shader mirrors (`colour_linearise`, `hdr_to_sdr` in shaders/colour.glsl):
/// 1. linearise: PQ EOTF, or HLG with the black lift, inverse OETF and BT.2100 OOTF at the content peak, in nits;
/// 2. clamp each channel to the source's black and the content peak;
/// 3. cross-talk: each channel takes 4 % of the others (so bright saturated colours move towards white);
/// 4. the curve, by `mode`: on (X/Xw − Y, Y, Z/Zw − Y) with the colour scaled by (Y'/Y)^1.06 and a little of X taken
///    from Y (luma), mixed with the curve per channel in the highlights (hybrid), or per channel;
/// 5. undo the cross-talk, convert to BT.709, and clip to the display's black…peak;
/// 6. encode with the BT.1886 inverse EOTF for a display of 1000:1.
/// Thread-safety: Safe; pure functions.
public enum HDRToSDR {
  /// BT.709 luminance coefficients (GLSL `BT709_LUMA`).
  public static let outputLuma = ColorPrimaries.bt709.lumaCoefficients
  /// libplacebo's luma-mode desaturation exponent: ln(1.1) / ln(1000 / 203).
  public static let lumaDesaturation = log(1.1) / log(1000 / 203)

  /// Source R'G'B' signal (0...1, after the YUV matrix) to linear display light in nits, in the source primaries.
  /// GLSL `colour_linearise`.
  public static func linearise(rgbSignal: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    combine(channelLight(rgbSignal, params: params), params: params)
  }

  /// `linearise`'s work on each channel alone: nits for PQ; for HLG the scene light after the BT.2100 black lift β
  /// (so that signal 0 shows the source's black), which `combine` takes to nits. A grid of signals needs it once a
  /// grid step, not once a point.
  public static func channelLight(_ signal: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    switch params.transfer {
    case .pq:
      return SIMD3(PQTransfer.eotf(signal.x), PQTransfer.eotf(signal.y), PQTransfer.eotf(signal.z))
    case .hlg:
      let gamma = HLGTransfer.systemGamma(peakNits: params.contentPeak)
      let beta = sqrt(3 * pow(params.sourceBlack / params.contentPeak, 1 / gamma))
      let lifted = signal * (1 - beta) + beta
      return SIMD3(
        HLGTransfer.inverseOETF(lifted.x), HLGTransfer.inverseOETF(lifted.y), HLGTransfer.inverseOETF(lifted.z))
    }
  }

  /// The three channels' `channelLight` to display light in nits: as they are for PQ, through the OOTF for HLG.
  public static func combine(_ light: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    switch params.transfer {
    case .pq: return light
    case .hlg: return HLGTransfer.ootf(light, peakNits: params.contentPeak)
    }
  }

  /// Tone mapping in the source primaries, nits to nits (steps 2–5 before the gamut). GLSL `tone_map_colour`.
  public static func toneMap(rgbLinearNits: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    let range = params.range
    let curve = params.curve
    var rgb = rgbLinearNits.clamped(
      lowerBound: SIMD3(repeating: params.sourceBlack), upperBound: SIMD3(repeating: params.contentPeak))
    let c = ToneMapParams.crosstalk
    rgb = (1 - 3 * c) * rgb + c * rgb.sum()
    func perChannel(_ v: SIMD3<Double>) -> SIMD3<Double> {
      SIMD3(curve.map(v.x, range: range), curve.map(v.y, range: range), curve.map(v.z, range: range))
    }
    switch params.mode {
    case .perChannel:
      rgb = perChannel(rgb)
    case .luma, .hybrid:
      let (toSpace, fromSpace) = params.lumaSpace
      var pyq = toSpace * rgb
      let y0 = max(pyq.y, range.targetBlack)
      var mapped = curve.map(pyq.y, range: range)
      let scale = pow(mapped / y0, 1 + lumaDesaturation)
      pyq.x *= scale
      pyq.z *= scale
      if params.contentPeak > params.targetPeak { mapped -= max(0.1 * pyq.x, 0) }
      pyq.y = mapped
      var out = fromSpace * pyq
      if params.mode == .hybrid {
        let coefficient = max(
          pow(range.targetBlack / mapped, 2.4), pow(mapped / range.targetPeak, 2.4))
        out += coefficient * (perChannel(rgb) - out)
      }
      rgb = out
    }
    return (rgb - c * rgb.sum()) / (1 - 3 * c)
  }

  /// Linear display light in nits (source primaries) to relative linear BT.709 light between the display's black
  /// (0.001) and 1 (its peak), before the encoding. GLSL `hdr_to_sdr_relative`.
  public static func relative(rgbLinearNits: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    let toned = toneMap(rgbLinearNits: rgbLinearNits, params: params) / params.targetPeak
    let black = 1 / ToneMapParams.targetContrast
    let inGamut = params.gamutMatrix * ((toned - black) / (1 - black))
    return inGamut.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1)) * (1 - black) + black
  }

  /// Relative linear light (1 = the display's peak) to the SDR signal: the BT.1886 inverse EOTF for a display whose
  /// black is 1/1000 of its peak, so the display's black is signal 0. GLSL `bt1886_inv_eotf_black`.
  public static func encode(_ relative: SIMD3<Double>) -> SIMD3<Double> {
    func one(_ l: Double) -> Double {
      min(max((BT1886Transfer.inverseEOTF(l) - lift) / (1 - lift), 0), 1)
    }
    return SIMD3(one(relative.x), one(relative.y), one(relative.z))
  }

  /// The signal `encode` gives the display's black, before it is moved to 0.
  private static let lift = pow(1 / ToneMapParams.targetContrast, 1 / BT1886Transfer.gamma)

  /// Linear display light in nits (source primaries) to the encoded SDR BT.709 signal, each channel 0...1, before
  /// dithering. GLSL `hdr_to_sdr`.
  public static func map(rgbLinearNits: SIMD3<Double>, params: ToneMapParams) -> SIMD3<Double> {
    encode(relative(rgbLinearNits: rgbLinearNits, params: params))
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

  // Each primaries' luma space, looked up by a switch: a dictionary of them hashed a key at each of a table's 64³
  // points.
  static let lumaSpaceBT709 = deriveLumaSpace(ColorPrimaries(.bt709))
  static let lumaSpaceBT2020 = deriveLumaSpace(ColorPrimaries(.bt2020))
  static let lumaSpaceBT601_625 = deriveLumaSpace(ColorPrimaries(.bt601_625))
  static let lumaSpaceBT601_525 = deriveLumaSpace(ColorPrimaries(.bt601_525))
  static let lumaSpaceDCIP3 = deriveLumaSpace(ColorPrimaries(.dciP3))

  /// RGB → XYZ with X and Z turned into differences from Y, relative to the white point (libplacebo's luma mode).
  static func deriveLumaSpace(_ p: ColorPrimaries) -> (ColorMatrix, ColorMatrix) {
    let xyz = p.rgbToXYZ
    let xw = p.white.x / p.white.y
    let zw = (1 - p.white.x - p.white.y) / p.white.y
    let m = ColorMatrix(xyz.rows.0 / xw - xyz.rows.1, xyz.rows.1, xyz.rows.2 / zw - xyz.rows.1)
    return (m, m.inverse)
  }

  static func lumaSpace(_ primaries: ColorInfo.Primaries) -> (ColorMatrix, ColorMatrix) {
    switch primaries {
    case .bt709, .unknown: return lumaSpaceBT709
    case .bt2020: return lumaSpaceBT2020
    case .bt601_625: return lumaSpaceBT601_625
    case .bt601_525: return lumaSpaceBT601_525
    case .dciP3: return lumaSpaceDCIP3
    }
  }
  static func luma(_ primaries: ColorInfo.Primaries) -> SIMD3<Double> { entry(primaries).1 }
}
