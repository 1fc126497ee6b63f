/// What HEVCStaticMetadata reads HEVC's bitstream with: the NAL units of a codec configuration (an hvcC record, as MP4
/// and Matroska store it, or Annex B start codes), and a reader of a unit's bits.
/// Thread-safety: pure functions over bytes; a `BitReader` is a value owned by its caller.
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

  /// Reads the RBSP of a NAL unit: emulation prevention bytes (00 00 03) dropped, bits from the most significant.
  struct BitReader {
    private var bytes: [UInt8] = []
    private var position = 0

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

    /// Bytes left, from the next whole byte.
    var bytesLeft: Int { bytes.count - (position + 7) / 8 }
  }
}
