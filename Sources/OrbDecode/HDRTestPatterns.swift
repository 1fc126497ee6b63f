import Foundation

/// The still HDR patterns of `test://`: 10-bit BT.2020 limited-range Y'CbCr built from R'G'B' signal values
/// whose light levels are computed, not guessed.
/// - `hdr10-ramp`: PQ steps from 0 to 10,000 nits, each labelled with its level in nits.
/// - `hdr10-bars`: BT.2111-style PQ bars: 40% grey sides, 75% colour bars, a 100% row, and a signal ramp.
/// - `hlg-bars`: the same layout in HLG.
enum HDRTestPattern: String, CaseIterable {
  case hdr10Ramp = "hdr10-ramp"
  case hdr10Bars = "hdr10-bars"
  case hlgBars = "hlg-bars"

  /// Levels of the ramp's steps, nits.
  static let rampNits: [Double] = [0, 0.05, 0.1, 0.5, 1, 5, 10, 50, 100, 203, 400, 600, 1000, 2000, 4000, 10000]

  var color: ColorInfo {
    ColorInfo(matrix: .bt2020nc, range: .limited, primaries: .bt2020, transfer: self == .hlgBars ? .hlg : .pq)
  }

  var hdr: HDRMetadata {
    let mastering = HDRMetadata.Mastering(
      red: .init(x: 0.708, y: 0.292), green: .init(x: 0.170, y: 0.797), blue: .init(x: 0.131, y: 0.046),
      whitePoint: .init(x: 0.3127, y: 0.3290), minLuminance: 0.0001, maxLuminance: 10000)
    return self == .hlgBars ? HDRMetadata() : HDRMetadata(mastering: mastering, maxCLL: 10000, maxFALL: 400)
  }

  /// One horizontal band of the picture: its share of the height, and patches (share of the width, R'G'B').
  struct Band {
    var height: Double
    var patches: [(width: Double, signal: SIMD3<Double>, label: String?)]
  }

  var bands: [Band] {
    func grey(_ s: Double) -> SIMD3<Double> { SIMD3(repeating: s) }
    switch self {
    case .hdr10Ramp:
      let steps: [(width: Double, signal: SIMD3<Double>, label: String?)] = Self.rampNits.map { nits in
        (1 / Double(Self.rampNits.count), grey(PQTransfer.inverseEOTF(nits)), Self.label(nits))
      }
      return [Band(height: 1, patches: steps)]
    case .hdr10Bars, .hlgBars:
      // BT.2111: 40% grey | 75% white, yellow, cyan, green, magenta, red, blue | 40% grey; then the 100% row.
      let colours: [SIMD3<Double>] = [
        [1, 1, 1], [1, 1, 0], [0, 1, 1], [0, 1, 0], [1, 0, 1], [1, 0, 0], [0, 0, 1],
      ]
      typealias Patch = (width: Double, signal: SIMD3<Double>, label: String?)
      let side = 1.0 / 8
      let bar = (1 - 2 * side) / 7
      let grey40: Patch = (side, grey(0.4), nil)
      let black: Patch = (side, grey(0), nil)
      let bars75: [Patch] = colours.map { (bar, $0 * 0.75, nil) }
      let bars100: [Patch] = colours.map { (bar, $0, nil) }
      let top: [Patch] = [grey40] + bars75 + [grey40]
      let full: [Patch] = [black] + bars100 + [black]
      let ramp: [Patch] = (0...10).map { i in (1.0 / 11, grey(Double(i) / 10), "\(i * 10)") }
      return [
        Band(height: 0.55, patches: top), Band(height: 0.15, patches: full), Band(height: 0.3, patches: ramp),
      ]
    }
  }

  static func label(_ nits: Double) -> String {
    nits >= 1 || nits == 0 ? String(Int(nits)) : String(format: "%g", nits)
  }

  /// 10-bit BT.2020 limited-range code values of an R'G'B' signal (0...1).
  static func ycbcr(_ rgb: SIMD3<Double>) -> (UInt16, UInt16, UInt16) {
    let y = 0.2627 * rgb.x + 0.6780 * rgb.y + 0.0593 * rgb.z
    let cb = (rgb.z - y) / 1.8814
    let cr = (rgb.x - y) / 1.4746
    func code(_ v: Double) -> UInt16 { UInt16(max(0, min(1023, v.rounded()))) }
    return (code(64 + 876 * y), code(512 + 896 * cb), code(512 + 896 * cr))
  }

  /// The picture's three planes, 16-bit words holding 10-bit codes.
  func planes(width w: Int, height h: Int) -> (y: [UInt16], cb: [UInt16], cr: [UInt16]) {
    var yPlane = [UInt16](repeating: 64, count: w * h)
    let cw = (w + 1) / 2
    let ch = (h + 1) / 2
    var cbPlane = [UInt16](repeating: 512, count: cw * ch)
    var crPlane = [UInt16](repeating: 512, count: cw * ch)
    var top = 0
    let list = bands
    for (bandIndex, band) in list.enumerated() {
      let bottom = bandIndex == list.count - 1 ? h : min(h, top + Int((band.height * Double(h)).rounded()))
      var left = 0
      // One text size per band, fitted to its longest label.
      let longest = band.patches.compactMap { $0.label?.count }.max() ?? 1
      let narrowest = band.patches.map { Int($0.width * Double(w)) }.min() ?? w
      let scale = max(1, min(narrowest / (longest * 6 + 2), h / 60))
      for (i, patch) in band.patches.enumerated() {
        let right = i == band.patches.count - 1 ? w : min(w, left + Int((patch.width * Double(w)).rounded()))
        let (yc, cb, cr) = Self.ycbcr(patch.signal)
        for row in top..<bottom {
          for x in left..<right { yPlane[row * w + x] = yc }
        }
        for row in (top / 2)..<min(ch, (bottom + 1) / 2) {
          for x in (left / 2)..<min(cw, (right + 1) / 2) {
            cbPlane[row * cw + x] = cb
            crPlane[row * cw + x] = cr
          }
        }
        if let label = patch.label {
          // Dark text on bright patches, bright on dark: readable at every level.
          let ink: UInt16 = patch.signal.y > 0.45 ? 64 : UInt16(64 + 876 * 0.58)
          TextStamp.draw(
            label, into: &yPlane, width: w, height: h, x: left + ((right - left) - label.count * 6 * scale) / 2,
            y: bottom - 12 * scale, scale: scale, value: ink)
        }
        left = right
      }
      top = bottom
    }
    return (yPlane, cbPlane, crPlane)
  }
}

/// Draws text in the 5x7 time-code font into a luma plane.
enum TextStamp {
  static func draw<T>(
    _ text: String, into plane: inout [T], width: Int, height: Int, x: Int, y: Int, scale: Int, value: T
  ) {
    for (i, ch) in text.enumerated() {
      guard let glyph = TestPatternSource.font[ch] else { continue }
      for gy in 0..<7 {
        for gx in 0..<5 where glyph[gy] & (1 << (4 - gx)) != 0 {
          for sy in 0..<scale {
            let py = y + gy * scale + sy
            guard py >= 0 && py < height else { continue }
            for sx in 0..<scale {
              let px = x + (i * 6 + gx) * scale + sx
              guard px >= 0 && px < width else { continue }
              plane[py * width + px] = value
            }
          }
        }
      }
    }
  }
}
