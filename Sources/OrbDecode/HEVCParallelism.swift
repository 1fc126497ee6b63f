/// Whether an HEVC stream's pictures are coded in wavefront rows (the PPS's `entropy_coding_sync_enabled_flag`), read
/// from the picture parameter sets in its codec configuration (an hvcC record, as MP4 and Matroska store it, or
/// Annex B start codes). FFmpeg's HEVC decoder shares one picture among threads only for such streams, and then
/// needs no picture more per thread, where frame threading holds one more picture each (24 MB at 4K HDR). x265
/// codes wavefront rows unless told not to.
/// Thread-safety: pure functions over bytes.
enum HEVCParallelism {
  /// True when every PPS present codes wavefront rows; false when one does not; nil when there is no PPS to read.
  static func wavefront(configuration bytes: [UInt8]) -> Bool? {
    let sets = parameterSets(bytes).filter { $0.count > 2 && ($0[0] >> 1) & 0x3f == 34 }  // PPS NAL units
    guard !sets.isEmpty else { return nil }
    var all = true
    for pps in sets {
      guard let flag = entropyCodingSync(pps) else { return nil }
      all = all && flag
    }
    return all
  }

  /// The NAL units of an hvcC record (byte 0 is its version, 1) or of Annex B bytes.
  static func parameterSets(_ b: [UInt8]) -> [ArraySlice<UInt8>] {
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

  /// Reads a PPS (with its 2-byte NAL header) up to `entropy_coding_sync_enabled_flag` (H.265 7.3.2.3.1).
  static func entropyCodingSync(_ unit: ArraySlice<UInt8>) -> Bool? {
    var r = BitReader(Array(unit.dropFirst(2)))
    guard r.ue() != nil, r.ue() != nil else { return nil }  // pps_pic_parameter_set_id, pps_seq_parameter_set_id
    r.skip(1 + 1 + 3 + 1 + 1)  // dependent slices, output flag, extra slice header bits, sign hiding, cabac init
    guard r.ue() != nil, r.ue() != nil, r.se() != nil else { return nil }  // ref idx l0, l1 defaults; init_qp
    r.skip(1 + 1)  // constrained intra pred, transform skip
    guard let cuQPDelta = r.bit() else { return nil }
    if cuQPDelta, r.ue() == nil { return nil }  // diff_cu_qp_delta_depth
    guard r.se() != nil, r.se() != nil else { return nil }  // cb and cr qp offsets
    r.skip(1 + 1 + 1 + 1 + 1)  // chroma qp offsets present, weighted pred, bipred, transquant bypass, tiles
    return r.bit()
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

    /// Unsigned Exp-Golomb.
    mutating func ue() -> UInt32? {
      var zeros = 0
      while true {
        guard let b = bit() else { return nil }
        if b { break }
        zeros += 1
        if zeros > 31 { return nil }
      }
      var value: UInt32 = 0
      for _ in 0..<zeros {
        guard let b = bit() else { return nil }
        value = value << 1 | (b ? 1 : 0)
      }
      return (1 << UInt32(zeros)) - 1 + value
    }

    /// Signed Exp-Golomb.
    mutating func se() -> Int32? {
      guard let k = ue() else { return nil }
      return k % 2 == 1 ? Int32((k + 1) / 2) : -Int32(k / 2)
    }
  }
}
