/// The colour description of a video stream or frame, resolved so that nothing is "unspecified".
/// Thread-safety: a value type.
public struct ColorInfo: Sendable, Equatable {
  public enum Matrix: String, Sendable {
    case bt601, bt709, bt2020nc, rgb
  }
  public enum Range: String, Sendable {
    /// 16-235 (8-bit) luma, "tv".
    case limited
    /// 0-255, "pc"/JPEG.
    case full
  }
  public enum Primaries: String, Sendable {
    case bt709
    case bt601_625 = "bt470bg"
    case bt601_525 = "smpte170m"
    case bt2020
    case dciP3 = "smpte432"
    case unknown
  }
  public enum Transfer: String, Sendable {
    case bt1886 = "bt709"
    case srgb = "iec61966-2-1"
    case pq = "smpte2084"
    case hlg = "arib-std-b67"
    case linear, unknown

    /// PQ or HLG.
    public var isHDR: Bool { self == .pq || self == .hlg }
  }

  public var matrix: Matrix
  public var range: Range
  public var primaries: Primaries
  public var transfer: Transfer

  public init(matrix: Matrix, range: Range, primaries: Primaries = .bt709, transfer: Transfer = .bt1886) {
    self.matrix = matrix
    self.range = range
    self.primaries = primaries
    self.transfer = transfer
  }

  /// Whether the transfer is an HDR one (PQ or HLG).
  public var isHDR: Bool { transfer.isHDR }
}

/// HDR10 static metadata: SMPTE ST 2086 mastering display and CTA-861.3 content light level.
/// Chromaticities are CIE 1931 xy; luminances in nits (cd/m²).
public struct HDRMetadata: Sendable, Equatable, Encodable {
  /// A CIE 1931 xy chromaticity.
  public struct Chromaticity: Sendable, Equatable, Encodable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
      self.x = x
      self.y = y
    }
  }
  public struct Mastering: Sendable, Equatable, Encodable {
    public var red: Chromaticity
    public var green: Chromaticity
    public var blue: Chromaticity
    public var whitePoint: Chromaticity
    public var minLuminance: Double
    public var maxLuminance: Double

    public init(
      red: Chromaticity, green: Chromaticity, blue: Chromaticity, whitePoint: Chromaticity, minLuminance: Double,
      maxLuminance: Double
    ) {
      self.red = red
      self.green = green
      self.blue = blue
      self.whitePoint = whitePoint
      self.minLuminance = minLuminance
      self.maxLuminance = maxLuminance
    }
  }
  public var mastering: Mastering?
  /// Maximum content light level, nits; 0 when unknown.
  public var maxCLL: Int = 0
  /// Maximum frame-average light level, nits; 0 when unknown.
  public var maxFALL: Int = 0

  public init(mastering: Mastering? = nil, maxCLL: Int = 0, maxFALL: Int = 0) {
    self.mastering = mastering
    self.maxCLL = maxCLL
    self.maxFALL = maxFALL
  }

  public var isEmpty: Bool { mastering == nil && maxCLL == 0 && maxFALL == 0 }
}
