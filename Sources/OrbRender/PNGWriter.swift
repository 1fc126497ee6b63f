import Foundation

/// Writes RGBA8 pixels as an RGB PNG, exactly (no resampling, no colour change). The image data uses
/// stored (uncompressed) deflate blocks: bigger files, but no zlib dependency and nothing to get wrong.
public enum PNGWriter {
  /// - Parameter rgba: `width * height * 4` bytes, rows top first.
  public static func encode(rgba: UnsafeRawBufferPointer, width: Int, height: Int) -> Data {
    var raw = [UInt8]()
    raw.reserveCapacity((width * 3 + 1) * height)
    for y in 0..<height {
      raw.append(0)  // filter: none
      let row = y * width * 4
      for x in 0..<width {
        let p = row + x * 4
        raw.append(rgba[p])
        raw.append(rgba[p + 1])
        raw.append(rgba[p + 2])
      }
    }
    var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    var header = Data()
    header.appendBigEndian(UInt32(width))
    header.appendBigEndian(UInt32(height))
    header.append(contentsOf: [8, 2, 0, 0, 0])  // 8-bit, truecolour, deflate, no filter, no interlace
    png.appendChunk("IHDR", header)
    png.appendChunk("IDAT", zlibStored(raw))
    png.appendChunk("IEND", Data())
    return png
  }

  public static func write(rgba: UnsafeRawBufferPointer, width: Int, height: Int, to path: String) throws {
    try encode(rgba: rgba, width: width, height: height).write(to: URL(fileURLWithPath: path))
  }

  static func zlibStored(_ bytes: [UInt8]) -> Data {
    var out = Data([0x78, 0x01])
    var offset = 0
    repeat {
      let n = min(65535, bytes.count - offset)
      let last: UInt8 = offset + n == bytes.count ? 1 : 0
      out.append(last)
      out.append(UInt8(n & 0xFF))
      out.append(UInt8(n >> 8))
      out.append(UInt8(~n & 0xFF))
      out.append(UInt8((~n >> 8) & 0xFF))
      out.append(contentsOf: bytes[offset..<offset + n])
      offset += n
    } while offset < bytes.count
    out.appendBigEndian(adler32(bytes))
    return out
  }

  static func adler32(_ bytes: [UInt8]) -> UInt32 {
    var a: UInt32 = 1
    var b: UInt32 = 0
    var i = 0
    while i < bytes.count {
      // 5552 bytes keep the sums below 2^32 between reductions.
      let end = min(i + 5552, bytes.count)
      while i < end {
        a += UInt32(bytes[i])
        b += a
        i += 1
      }
      a %= 65521
      b %= 65521
    }
    return (b << 16) | a
  }

  static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
    var c = UInt32(n)
    for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
  }

  static func crc32<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
    var c: UInt32 = 0xFFFF_FFFF
    for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
    return c ^ 0xFFFF_FFFF
  }
}

extension Data {
  fileprivate mutating func appendBigEndian(_ v: UInt32) {
    append(contentsOf: [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)])
  }

  fileprivate mutating func appendChunk(_ type: String, _ body: Data) {
    appendBigEndian(UInt32(body.count))
    let typeBytes = Array(type.utf8)
    append(contentsOf: typeBytes)
    append(body)
    appendBigEndian(PNGWriter.crc32(typeBytes + Array(body)))
  }
}
