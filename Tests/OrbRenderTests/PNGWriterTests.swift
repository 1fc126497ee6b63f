import Foundation
import OrbTestSupport
import XCTest

@testable import OrbRender

final class PNGWriterTests: XCTestCase {
  func testFFmpegReadsBackEveryPixelExactly() throws {
    let w = 37
    let h = 300
    var rgba = [UInt8](repeating: 255, count: w * h * 4)
    for y in 0..<h {
      for x in 0..<w {
        let p = (y * w + x) * 4
        rgba[p] = UInt8((x * 7) & 0xFF)
        rgba[p + 1] = UInt8((y * 3) & 0xFF)
        rgba[p + 2] = UInt8((x + y) & 0xFF)
      }
    }
    let path = NSTemporaryDirectory() + "orb-png-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try rgba.withUnsafeBytes { try PNGWriter.write(rgba: $0, width: w, height: h, to: path) }
    let image = try RGBImage(png: path)
    XCTAssertEqual(image.width, w)
    XCTAssertEqual(image.height, h)
    for (x, y) in [(0, 0), (36, 0), (5, 150), (36, 299), (20, 77)] {
      XCTAssertEqual(image.pixel(x: x, y: y), RGB(r: (x * 7) & 0xFF, g: (y * 3) & 0xFF, b: (x + y) & 0xFF))
    }
  }

  /// A frame of real video compresses (the stored writer gave 3 bytes a pixel, 805 MB for 16384x16384).
  func testAFrameOfVideoIsCompressed() throws {
    let (w, h) = (640, 360)
    var rgba = [UInt8](repeating: 255, count: w * h * 4)
    for y in 0..<h {
      for x in 0..<w {
        let p = (y * w + x) * 4
        rgba[p] = UInt8(x * 255 / w)
        rgba[p + 1] = UInt8(y * 255 / h)
        rgba[p + 2] = (x / 40 + y / 40) % 2 == 0 ? 30 : 220
      }
    }
    let data = try rgba.withUnsafeBytes { try PNGWriter.encode(rgba: $0, width: w, height: h) }
    XCTAssertLessThan(data.count, w * h * 3 / 10, "a smooth picture compresses at least tenfold")
  }
}
