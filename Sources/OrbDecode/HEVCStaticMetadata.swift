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

  /// Reads `stream`'s packets from the start of `context` up to its first key picture (at most 200 packets), then
  /// seeks back to the start.
  static func read(context: UnsafeMutablePointer<AVFormatContext>, stream: StreamParameters) -> HDRMetadata {
    let par = stream.parameters.pointee
    let configuration =
      par.extradata != nil && par.extradata_size > 0
      ? Array(UnsafeBufferPointer(start: par.extradata, count: Int(par.extradata_size))) : []
    var found = Found()
    // An hvcC record (MP4, Matroska) holds parameter sets and may hold SEI; it says how long each unit's length is.
    let hvcC = configuration.count >= 23 && configuration[0] == 1
    if !configuration.isEmpty { scan(HEVCBitstream.nalUnits(configuration), into: &found) }
    let lengthSize = hvcC ? Int(configuration[21] & 3) + 1 : nil
    defer { avformat_seek_file(context, -1, Int64.min, 0, 0, 0) }
    var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    defer { av_packet_free(&packet) }
    guard let packet else { return found.metadata }
    for _ in 0..<200 where !found.complete {
      guard av_read_frame(context, packet) >= 0 else { break }
      defer { av_packet_unref(packet) }
      guard Int(packet.pointee.stream_index) == stream.index, let data = packet.pointee.data else { continue }
      let units = self.units(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)), lengthSize: lengthSize)
      scan(units, into: &found)
      // A key picture's SEI comes before its slices: past its packet, the stream has said what it will say.
      if units.contains(where: { $0.count >= 2 && (16...23).contains(($0[$0.startIndex] >> 1) & 0x3f) }) { break }
    }
    return found.metadata
  }

  /// The NAL units of one packet: each after a `lengthSize`-byte big-endian length, or between Annex B start codes.
  static func units(_ bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int?) -> [ArraySlice<UInt8>] {
    guard let lengthSize else { return HEVCBitstream.nalUnits(Array(bytes)) }
    var units: [ArraySlice<UInt8>] = []
    var at = 0
    while at + lengthSize <= bytes.count {
      var length = 0
      for i in 0..<lengthSize { length = length << 8 | Int(bytes[at + i]) }
      at += lengthSize
      guard length > 0, at + length <= bytes.count else { break }
      units.append(ArraySlice(bytes[at..<at + length]))
      at += length
    }
    return units
  }

  /// Takes the two messages from the prefix SEI units among `units` (a unit found later does not replace one found).
  static func scan(_ units: [ArraySlice<UInt8>], into found: inout Found) {
    for unit in units where unit.count > 2 && (unit[unit.startIndex] >> 1) & 0x3f == 39 {
      var r = HEVCBitstream.BitReader(Array(unit.dropFirst(2)))
      // sei_message()s until the RBSP's trailing bits (H.265 7.3.5).
      while r.bytesLeft > 1 {
        guard let type = number(&r), let size = number(&r) else { break }
        switch type {
        case 137 where size >= 24 && found.mastering == nil:
          found.mastering = mastering(&r)
          r.skip(8 * (size - 24))
        case 144 where size >= 4 && found.light == nil:
          guard let cll = r.bits(16), let fall = r.bits(16) else { return }
          found.light = (Int(cll), Int(fall))
          r.skip(8 * (size - 4))
        default:
          r.skip(8 * size)
        }
      }
    }
  }

  /// A payload type or size: 0xFF bytes adding up, then the last byte.
  private static func number(_ r: inout HEVCBitstream.BitReader) -> Int? {
    var value = 0
    while let byte = r.bits(8) {
      value += Int(byte)
      if byte != 0xFF { return value }
    }
    return nil
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
