import CFFmpeg

/// What HEVCStaticMetadata and HEVCFields read HEVC's bitstream with: the NAL units of a codec configuration (an hvcC
/// record, as MP4 and Matroska store it, or Annex B start codes) and of a stream's first packets, its SEI messages, and
/// a reader of a unit's bits.
/// Thread-safety: pure functions over bytes, and `firstUnits` over a format context its caller owns; a `BitReader`
/// is a value owned by its caller.
enum HEVCBitstream {
  /// The NAL units of an hvcC record (byte 0 is its version, 1) or of Annex B bytes.
  static func nalUnits(_ b: [UInt8]) -> [ArraySlice<UInt8>] {
    var units: [ArraySlice<UInt8>] = []
    if b.count >= 23 && b[0] == 1 {
      var at = 23
      for _ in 0..<Int(b[22]) {
        guard at + 3 <= b.count else { break }
        let count = Int(b[at + 1]) << 8 | Int(b[at + 2])
        at += 3
        for _ in 0..<count {
          guard at + 2 <= b.count else { return units }
          let length = Int(b[at]) << 8 | Int(b[at + 1])
          at += 2
          guard at + length <= b.count else { return units }
          units.append(b[at..<at + length])
          at += length
        }
      }
      return units.map { ArraySlice(Array($0)) }
    }
    // Annex B: units start after 00 00 01 and end at the next start code.
    var starts: [Int] = []
    var i = 0
    while i + 3 <= b.count {
      if b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1 {
        starts.append(i + 3)
        i += 3
      } else {
        i += 1
      }
    }
    for (n, start) in starts.enumerated() {
      var end = n + 1 < starts.count ? starts[n + 1] - 3 : b.count
      while end > start && b[end - 1] == 0 { end -= 1 }  // the next start code's leading zero
      if end > start { units.append(ArraySlice(Array(b[start..<end]))) }
    }
    return units
  }

  /// Gives `take` the NAL units of `stream`'s configuration, then of each of its packets from the start of `context`
  /// up to its first key picture (at most 200 packets), until `take` says it has what it needs; then seeks back to
  /// the start.
  static func firstUnits(
    context: UnsafeMutablePointer<AVFormatContext>, stream: StreamParameters, _ take: ([ArraySlice<UInt8>]) -> Bool
  ) {
    let par = stream.parameters.pointee
    let configuration =
      par.extradata != nil && par.extradata_size > 0
      ? Array(UnsafeBufferPointer(start: par.extradata, count: Int(par.extradata_size))) : []
    // An hvcC record (MP4, Matroska) holds parameter sets and may hold SEI; it says how long each unit's length is.
    let hvcC = configuration.count >= 23 && configuration[0] == 1
    if !configuration.isEmpty && take(nalUnits(configuration)) { return }
    let lengthSize = hvcC ? Int(configuration[21] & 3) + 1 : nil
    defer { MediaSource.rewind(context) }
    var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    defer { av_packet_free(&packet) }
    guard let packet else { return }
    for _ in 0..<200 {
      guard av_read_frame(context, packet) >= 0 else { break }
      defer { av_packet_unref(packet) }
      guard Int(packet.pointee.stream_index) == stream.index, let data = packet.pointee.data else { continue }
      let units = Self.units(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)), lengthSize: lengthSize)
      if take(units) { break }
      // A key picture's SEI comes before its slices: past its packet, the stream has said what it will say.
      if units.contains(where: { $0.count >= 2 && (16...23).contains(($0[$0.startIndex] >> 1) & 0x3f) }) { break }
    }
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

  /// Each SEI message of the prefix SEI units among `units` (H.265 7.3.5, 7.3.2.4): its payload type, and a reader of
  /// its payload alone, in the order they come.
  static func messages(in units: [ArraySlice<UInt8>], _ body: (Int, inout BitReader) -> Void) {
    for unit in units where unit.count > 2 && (unit[unit.startIndex] >> 1) & 0x3f == 39 {
      var r = BitReader(Array(unit.dropFirst(2)))
      // sei_message()s until the RBSP's trailing bits.
      while r.bytesLeft > 1 {
        guard let type = r.seiNumber(), let size = r.seiNumber(), var payload = r.bytes(size) else { break }
        body(type, &payload)
      }
    }
  }

  /// Reads the RBSP of a NAL unit: emulation prevention bytes (00 00 03) dropped, bits from the most significant.
  struct BitReader {
    private var bytes: [UInt8] = []
    private var position = 0

    private init(rbsp: ArraySlice<UInt8>) { bytes = Array(rbsp) }

    /// The next `count` whole bytes (from a byte boundary) as a reader of their own; nil where fewer are left.
    mutating func bytes(_ count: Int) -> BitReader? {
      let start = (position + 7) / 8
      guard count >= 0, start + count <= bytes.count else { return nil }
      position = (start + count) * 8
      return BitReader(rbsp: bytes[start..<start + count])
    }

    /// An SEI payload type or size (7.3.5): 0xFF bytes adding up, then the last byte.
    mutating func seiNumber() -> Int? {
      var value = 0
      while let byte = bits(8) {
        value += Int(byte)
        if byte != 0xFF { return value }
      }
      return nil
    }

    init(_ payload: [UInt8]) {
      var zeros = 0
      for byte in payload {
        if zeros >= 2 && byte == 3 {
          zeros = 0
          continue
        }
        zeros = byte == 0 ? zeros + 1 : 0
        bytes.append(byte)
      }
    }

    mutating func bit() -> Bool? {
      guard position < bytes.count * 8 else { return nil }
      defer { position += 1 }
      return bytes[position / 8] & (0x80 >> UInt8(position % 8)) != 0
    }

    mutating func skip(_ bits: Int) { position += bits }

    /// `count` bits (at most 32) as an unsigned number, most significant first.
    mutating func bits(_ count: Int) -> UInt32? {
      guard count <= 32, position + count <= bytes.count * 8 else { return nil }
      var value: UInt32 = 0
      for _ in 0..<count { value = value << 1 | (bit()! ? 1 : 0) }
      return value
    }

    /// An unsigned Exp-Golomb number, ue(v) (H.265 9.2): n zero bits, a one, then n bits; nil past the end or beyond
    /// 32 bits.
    mutating func ue() -> UInt32? {
      var zeros = 0
      while true {
        guard let b = bit() else { return nil }
        if b { break }
        zeros += 1
        if zeros > 31 { return nil }
      }
      guard let rest = bits(zeros) else { return nil }
      return UInt32((UInt64(1) << zeros) - 1 + UInt64(rest))
    }

    /// A signed Exp-Golomb number, se(v): 1, -1, 2, -2 … for ue 1, 2, 3, 4 ….
    mutating func se() -> Int64? {
      guard let k = ue() else { return nil }
      return k % 2 == 1 ? Int64(k / 2) + 1 : -Int64(k / 2)
    }

    /// Bytes left, from the next whole byte.
    var bytesLeft: Int { bytes.count - (position + 7) / 8 }
  }
}
