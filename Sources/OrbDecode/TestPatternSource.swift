import Foundation
import Synchronization

/// Built-in sources for a first run with no media: `test://bars` is 75% colour bars that scroll, over a
/// running time code (HH:MM:SS:FF), so a window shows at a glance that playback is live. For HDR test viewing:
/// `test://hdr10-ramp`, `test://hdr10-bars` and `test://hlg-bars` (10-bit BT.2020, see `HDRTestPattern`).
/// Options as a query: `test://bars?size=1280x720&rate=30&duration=10` (no duration: endless).
/// Thread-safety: Safe; what changes (the frame number, closing, the HDR planes made once) is one value behind a
/// `Mutex`; the rest is immutable.
public final class TestPatternSource: FrameSource, Sendable {
  public let info: MediaInfo
  public let duration: Double?
  public let width: Int
  public let height: Int
  public let rate: Double

  private struct State {
    var index = 0
    var closed = false
    var hdrPlanes: (y: [UInt16], cb: [UInt16], cr: [UInt16])?
  }
  private let state = Mutex(State())
  private let color: ColorInfo
  private let hdrPattern: HDRTestPattern?

  /// 75% bars, left to right: white, yellow, cyan, green, magenta, red, blue, black (8-bit R'G'B').
  public static let barColors: [(Int, Int, Int)] = [
    (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0),
  ]

  public static func isTestURL(_ s: String) -> Bool { s.hasPrefix("test://") }

  /// - Throws: `MediaError` for an unknown pattern name or a malformed option.
  public init(url: String) throws {
    guard let components = URLComponents(string: url), components.scheme == "test" else {
      throw MediaError(.missing, source: url, reason: "not a test:// source")
    }
    let name = components.host ?? ""
    let names = ["bars"] + HDRTestPattern.allCases.map(\.rawValue)
    guard names.contains(name) else {
      throw MediaError(
        .missing, source: url,
        reason: "no built-in pattern '\(name)' (there are \(names.map { "test://\($0)" }.joined(separator: ", ")))")
    }
    hdrPattern = HDRTestPattern(rawValue: name)
    var width = 1280
    var height = 720
    var rate = 30.0
    var duration: Double?
    for item in components.queryItems ?? [] {
      let value = item.value ?? ""
      switch item.name {
      case "size":
        let parts = value.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 16, parts[1] >= 16, parts[0] <= 8192, parts[1] <= 8192 else {
          throw MediaError(.unplayable, source: url, reason: "size must be WIDTHxHEIGHT, e.g. 1280x720")
        }
        width = parts[0] & ~1
        height = parts[1] & ~1
      case "rate":
        guard let r = Double(value), r > 0, r <= 240 else {
          throw MediaError(.unplayable, source: url, reason: "rate must be frames per second, 1 to 240")
        }
        rate = r
      case "duration":
        guard let d = Double(value), d > 0, d <= 1e9 else {
          throw MediaError(.unplayable, source: url, reason: "duration must be seconds, above 0 and at most 1e9")
        }
        duration = d
      default:
        throw MediaError(.unplayable, source: url, reason: "unknown option '\(item.name)'")
      }
    }
    self.width = width
    self.height = height
    self.rate = rate
    self.duration = duration
    color = hdrPattern?.color ?? ColorInfo(matrix: .bt709, range: .limited)
    let hdr = hdrPattern?.hdr ?? HDRMetadata()
    let c = color
    var info = MediaInfo(source: url, container: "test", durationMs: duration.map(\.wholeMilliseconds))
    info.video = [
      VideoStreamInfo(
        index: 0, codec: "rawvideo", profile: nil, width: width, height: height, frameRate: rate,
        sampleAspectRatio: "1:1", rotation: 0, displayWidth: width, displayHeight: height,
        pixelFormat: hdrPattern == nil ? "yuv420p" : "yuv420p10le", bitDepth: hdrPattern == nil ? 8 : 10,
        colorPrimaries: c.primaries.rawValue, colorTransfer: c.transfer.rawValue, colorMatrix: c.matrix.rawValue,
        colorRange: "tv",
        effectiveColor: .init(
          matrix: c.matrix.rawValue, range: c.range.rawValue, primaries: c.primaries.rawValue,
          transfer: c.transfer.rawValue),
        mastering: hdr.mastering, maxCll: hdr.maxCLL > 0 ? hdr.maxCLL : nil,
        maxFall: hdr.maxFALL > 0 ? hdr.maxFALL : nil,
        frameCount: duration.map { Int64(($0 * rate).rounded()) }, isDefault: true)
    ]
    self.info = info
  }

  public func nextFrame() -> VideoFrame? {
    let n: Int? = state.withLock { s in
      if s.closed { return nil }
      if let duration, Double(s.index) / rate >= duration - 1e-9 { return nil }
      defer { s.index += 1 }
      return s.index
    }
    guard let n else { return nil }
    return makeFrame(n)
  }

  public func seek(to seconds: Double) {
    state.withLock { $0.index = max(0, Int((seconds * rate).rounded(.down))) }
  }

  public func close() { state.withLock { $0.closed = true } }

  /// Frame `n`: bars scrolled left by `n` × 1/240 of the width, time code below them; HDR patterns stand still.
  func makeFrame(_ n: Int) -> VideoFrame {
    if let hdrPattern { return makeHDRFrame(n, hdrPattern) }
    let w = width
    let h = height
    let cw = w / 2
    let barsHeight = h * 3 / 4
    let shift = (n * max(1, w / 240)) % w
    let ycc = Self.barColors.map { Self.ycbcr709($0) }
    let time = Double(n) / rate
    let code = Self.timeCode(frame: n, rate: rate)
    return VideoFrame(
      planar420Width: w, height: h, color: color, time: time, duration: 1 / rate, pixelFormatName: "yuv420p"
    ) { yPlane, cbPlane, crPlane in
      let y = yPlane.assumingMemoryBound(to: UInt8.self)
      let cb = cbPlane.assumingMemoryBound(to: UInt8.self)
      let cr = crPlane.assumingMemoryBound(to: UInt8.self)
      // One row of bars, then copies of it: cheap enough for a debug build at 30 fps.
      for x in 0..<w {
        let bar = ((x + shift) % w) * 8 / w
        y[x] = ycc[bar].0
      }
      for x in 0..<cw {
        let bar = ((x * 2 + shift) % w) * 8 / w
        cb[x] = ycc[bar].1
        cr[x] = ycc[bar].2
      }
      for row in 1..<barsHeight { (y + row * w).update(from: y, count: w) }
      for row in 1..<(barsHeight / 2) {
        (cb + row * cw).update(from: cb, count: cw)
        (cr + row * cw).update(from: cr, count: cw)
      }
      // Below the bars: black, with the time code in white.
      (y + barsHeight * w).update(repeating: 16, count: (h - barsHeight) * w)
      (cb + barsHeight / 2 * cw).update(repeating: 128, count: (h / 2 - barsHeight / 2) * cw)
      (cr + barsHeight / 2 * cw).update(repeating: 128, count: (h / 2 - barsHeight / 2) * cw)
      let scale = max(1, (h - barsHeight) / 14)
      let textWidth = code.count * 6 * scale
      let x0 = max(0, (w - textWidth) / 2)
      let y0 = barsHeight + ((h - barsHeight) - 7 * scale) / 2
      for (i, ch) in code.enumerated() {
        guard let glyph = Self.font[ch] else { continue }
        for gy in 0..<7 {
          let bits = glyph[gy]
          for gx in 0..<5 where bits & (1 << (4 - gx)) != 0 {
            for sy in 0..<scale {
              let py = y0 + gy * scale + sy
              guard py < h else { continue }
              let px = x0 + (i * 6 + gx) * scale
              guard px + scale <= w else { continue }
              (y + py * w + px).update(repeating: 235, count: scale)
            }
          }
        }
      }
    }
  }

  private func makeHDRFrame(_ n: Int, _ pattern: HDRTestPattern) -> VideoFrame {
    let planes = state.withLock { s in
      if s.hdrPlanes == nil { s.hdrPlanes = pattern.planes(width: width, height: height) }
      return s.hdrPlanes!
    }
    return VideoFrame(
      planar420Width: width, height: height, bitDepth: 10, color: color, hdr: pattern.hdr, time: Double(n) / rate,
      duration: 1 / rate, pixelFormatName: "yuv420p10le"
    ) { y, cb, cr in
      planes.y.withUnsafeBytes { y.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
      planes.cb.withUnsafeBytes { cb.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
      planes.cr.withUnsafeBytes { cr.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
  }

  /// "HH:MM:SS:FF" for frame `n`.
  static func timeCode(frame n: Int, rate: Double) -> String {
    let fps = max(1, Int(rate.rounded()))
    let totalSeconds = n / fps
    let f = n % fps
    return String(
      format: "%02d:%02d:%02d:%02d", totalSeconds / 3600, (totalSeconds / 60) % 60, totalSeconds % 60, f)
  }

  /// 8-bit R'G'B' to BT.709 limited-range Y'CbCr.
  static func ycbcr709(_ rgb: (Int, Int, Int)) -> (UInt8, UInt8, UInt8) {
    let r = Double(rgb.0) / 255
    let g = Double(rgb.1) / 255
    let b = Double(rgb.2) / 255
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    let cb = (b - y) / 1.8556
    let cr = (r - y) / 1.5748
    func code(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
    return (code(16 + 219 * y), code(128 + 224 * cb), code(128 + 224 * cr))
  }

  /// A 5x7 font for the time code: each row's bits, most significant bit leftmost.
  static let font: [Character: [UInt8]] = [
    "0": [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E], "1": [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
    "2": [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F], "3": [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
    "4": [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02], "5": [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
    "6": [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E], "7": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
    "8": [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E], "9": [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
    ":": [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00], ".": [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
  ]
}
