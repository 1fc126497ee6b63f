import Foundation
import XCTest

/// An 8-bit RGB colour.
public struct RGB: Sendable, Equatable, CustomStringConvertible {
  public var r: Int
  public var g: Int
  public var b: Int

  public init(r: Int, g: Int, b: Int) {
    self.r = r
    self.g = g
    self.b = b
  }

  public static let black = RGB(r: 0, g: 0, b: 0)
  public static let white = RGB(r: 255, g: 255, b: 255)
  public static let red = RGB(r: 255, g: 0, b: 0)
  public static let green = RGB(r: 0, g: 255, b: 0)
  public static let blue = RGB(r: 0, g: 0, b: 255)
  public static let yellow = RGB(r: 255, g: 255, b: 0)
  public static let cyan = RGB(r: 0, g: 255, b: 255)
  public static let magenta = RGB(r: 255, g: 0, b: 255)

  /// The largest difference of any one channel.
  public func distance(to other: RGB) -> Int {
    max(abs(r - other.r), abs(g - other.g), abs(b - other.b))
  }

  public var description: String { "rgb(\(r), \(g), \(b))" }
}

/// A picture read through ffmpeg (any format it decodes: PNG, a video's first frame) as packed RGB24.
/// Thread-safety: immutable; safe to share.
public struct RGBImage: Sendable {
  public let width: Int
  public let height: Int
  /// Rows top to bottom, 3 bytes a pixel, no padding.
  public let bytes: [UInt8]

  /// Decodes the first picture of `path`. The size comes from ffprobe, the pixels from
  /// `ffmpeg -i path -frames:v 1 -f rawvideo -pix_fmt rgb24 -`. A video whose display matrix turns it a quarter
  /// is read the way ffmpeg shows it (turned, so width and height swap) unless `ffmpegInputOptions`
  /// holds `-noautorotate`.
  /// - Parameter ffmpegInputOptions: options placed before `-i`.
  public init(png path: String, ffmpegInputOptions: [String] = []) throws {
    let decoded = Tool.run(
      "ffmpeg",
      ["-hide_banner", "-loglevel", "error"] + ffmpegInputOptions
        + ["-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
    guard decoded.succeeded else { throw TestMediaError("ffmpeg cannot decode \(path): \(decoded.stderr)") }
    let probe = Tool.run(
      "ffprobe",
      ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0:s=x", path])
    let parts = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "x").compactMap {
      Int($0)
    }
    guard probe.succeeded, parts.count == 2 else {
      throw TestMediaError("ffprobe cannot size \(path): \(probe.stderr)")
    }
    var (w, h) = (parts[0], parts[1])
    if !ffmpegInputOptions.contains("-noautorotate"), let rotation = FFprobe.rotation(path), rotation % 180 != 0 {
      swap(&w, &h)
    }
    guard decoded.stdoutData.count == w * h * 3 else {
      throw TestMediaError("\(path): \(decoded.stdoutData.count) bytes of RGB, expected \(w)x\(h)x3")
    }
    width = w
    height = h
    bytes = [UInt8](decoded.stdoutData)
  }

  /// The pixel at column `x`, row `y` (0,0 is top left).
  public func pixel(x: Int, y: Int) -> RGB {
    precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
    let i = (y * width + x) * 3
    return RGB(r: Int(bytes[i]), g: Int(bytes[i + 1]), b: Int(bytes[i + 2]))
  }
}

/// Fails the test when the pixel at (x, y) is further than `tolerance` (per channel) from `expected`,
/// saying where, what was there and how far off it was.
public func assertPixel(
  _ image: RGBImage, x: Int, y: Int, approximately expected: RGB, tolerance: Int = 8, _ message: String = "",
  file: StaticString = #filePath, line: UInt = #line
) {
  guard x >= 0 && x < image.width && y >= 0 && y < image.height else {
    XCTFail(
      "pixel (\(x), \(y)) is outside the \(image.width)x\(image.height) image. \(message)", file: file, line: line)
    return
  }
  let actual = image.pixel(x: x, y: y)
  let distance = actual.distance(to: expected)
  XCTAssertLessThanOrEqual(
    distance, tolerance,
    "pixel (\(x), \(y)) is \(actual), expected \(expected) ± \(tolerance) (off by \(distance)). \(message)",
    file: file, line: line)
}
