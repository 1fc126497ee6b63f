import CFFmpeg

/// HDR10's static metadata as an HEVC stream carries it (x265 and most encoders): SEI messages in the stream, H.265
/// D.2.28 (the mastering display's colour volume) and D.2.35 (content light level), read from the NAL units of its
/// configuration and of its first packets up to its first key picture. FFmpeg's decoder attaches the same to each
/// picture; reading them from a decoded first picture took the 4K HDR10 clip about 200 ms on one thread before it
/// could open (half its time to the first picture), and that decoder's pool 70 MB.
/// Thread-safety: pure functions over bytes, and `read` over a format context its caller owns.
enum HEVCStaticMetadata {
  /// What the messages said: FFmpeg's units (chromaticities in 0.00002, luminance in 0.0001 cd/m²) as it converts them.
  struct Found {
    var mastering: HDRMetadata.Mastering?
    var light: (maxCLL: Int, maxFALL: Int)?

    var complete: Bool { mastering != nil && light != nil }
    /// As FFmpeg attaches it to a decoded picture (light levels 0 where the stream gave none).
    var metadata: HDRMetadata {
      HDRMetadata(mastering: mastering, maxCLL: light?.maxCLL ?? 0, maxFALL: light?.maxFALL ?? 0)
    }
  }

  /// Reads `stream`'s configuration and its packets from the start of `context` up to its first key picture (at most
  /// 200 packets), then seeks back to the start.
  static func read(context: UnsafeMutablePointer<AVFormatContext>, stream: StreamParameters) -> HDRMetadata {
    var found = Found()
    HEVCBitstream.firstUnits(context: context, stream: stream) { units in
      scan(units, into: &found)
      return found.complete
    }
    return found.metadata
  }

  /// Takes the two messages from the prefix SEI units among `units` (a unit found later does not replace one found).
  static func scan(_ units: [ArraySlice<UInt8>], into found: inout Found) {
    HEVCBitstream.messages(in: units) { type, r in
      switch type {
      case 137 where found.mastering == nil:
        found.mastering = mastering(&r)
      case 144 where found.light == nil:
        guard let cll = r.bits(16), let fall = r.bits(16) else { return }
        found.light = (Int(cll), Int(fall))
      default:
        break
      }
    }
  }

  /// D.2.28: three primaries (x, y) in the order green, blue, red, the white point, then the display's peak and
  /// black luminance.
  private static func mastering(_ r: inout HEVCBitstream.BitReader) -> HDRMetadata.Mastering? {
    var v: [Double] = []
    for _ in 0..<8 {
      guard let x = r.bits(16) else { return nil }
      v.append(Double(x) / 50000)
    }
    guard let peak = r.bits(32), let black = r.bits(32) else { return nil }
    return HDRMetadata.Mastering(
      red: .init(x: v[4], y: v[5]), green: .init(x: v[0], y: v[1]), blue: .init(x: v[2], y: v[3]),
      whitePoint: .init(x: v[6], y: v[7]), minLuminance: Double(black) / 10000, maxLuminance: Double(peak) / 10000)
  }
}
