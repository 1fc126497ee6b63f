import Foundation
import XCTest

@testable import OrbRender

/// Primaries → matrices, and gamut mapping that keeps hue.
final class ColorScienceGamutTests: XCTestCase {
  func testBT2020ToBT709MatchesThePublishedMatrix() {
    let published: [[Double]] = [
      [1.6605, -0.5876, -0.0728],
      [-0.1246, 1.1329, -0.0083],
      [-0.0182, -0.1006, 1.1187],
    ]
    let m = GamutMapping.bt2020ToBT709
    for r in 0..<3 {
      for c in 0..<3 {
        XCTAssertEqual(m[r, c], published[r][c], accuracy: 0.000_06, "element \(r),\(c)")
      }
    }
  }

  func testLuminanceCoefficientsFollowFromThePrimaries() {
    let bt2020 = ColorPrimaries.bt2020.lumaCoefficients
    XCTAssertEqual(bt2020.x, 0.2627, accuracy: 0.000_05)
    XCTAssertEqual(bt2020.y, 0.6780, accuracy: 0.000_05)
    XCTAssertEqual(bt2020.z, 0.0593, accuracy: 0.000_05)
    let bt709 = ColorPrimaries.bt709.lumaCoefficients
    XCTAssertEqual(bt709.x, 0.2126, accuracy: 0.000_05)
    XCTAssertEqual(bt709.y, 0.7152, accuracy: 0.000_05)
    XCTAssertEqual(bt709.z, 0.0722, accuracy: 0.000_05)
  }

  func testWhiteStaysWhiteAndTheInverseUndoes() {
    for primaries in [ColorPrimaries.bt2020, .dciP3, .bt601_525, .bt601_625] {
      let m = primaries.conversion(to: .bt709)
      let white = m * SIMD3(1, 1, 1)
      for c in 0..<3 { XCTAssertEqual(white[c], 1, accuracy: 1e-12) }
      let product = m * m.inverse
      for r in 0..<3 {
        for c in 0..<3 { XCTAssertEqual(product[r, c], r == c ? 1 : 0, accuracy: 1e-12) }
      }
    }
    XCTAssertEqual(ToneMapParams(primaries: .bt709).gamutMatrix, .identity)
  }

  func testColoursInsideTheGamutAreUnchanged() {
    let luma = ColorPrimaries.bt709.lumaCoefficients
    let levels = [0.0, 0.05, 0.3, 0.5, 0.8, 1.0]
    for r in levels {
      for g in levels {
        for b in levels {
          let rgb = SIMD3(r, g, b)
          let mapped = GamutMapping.desaturate(rgb, luma: luma)
          for c in 0..<3 { XCTAssertEqual(mapped[c], rgb[c], accuracy: 1e-12, "\(rgb)") }
        }
      }
    }
  }

  /// BT.2020 primaries and secondaries (the saturated green first), at a few levels, converted to BT.709: they fall
  /// outside 0...1, and mapping brings them inside with the same luminance and hue.
  func testSaturatedBT2020ColoursMapIntoBT709KeepingHue() {
    let luma709 = ColorPrimaries.bt709.lumaCoefficients
    let toXYZ709 = ColorPrimaries.bt709.rgbToXYZ
    let to2020 = GamutMapping.bt2020ToBT709.inverse
    let colours: [SIMD3<Double>] = [
      SIMD3(0, 1, 0), SIMD3(1, 0, 0), SIMD3(0, 0, 1), SIMD3(0, 1, 1), SIMD3(1, 0, 1), SIMD3(1, 1, 0),
      SIMD3(0.2, 1, 0.1),
    ]
    for colour in colours {
      for level in [0.3, 0.7, 1.0] {
        let source = colour * level
        let converted = GamutMapping.bt2020ToBT709 * source
        let mapped = GamutMapping.desaturate(converted, luma: luma709)
        for c in 0..<3 {
          XCTAssertGreaterThanOrEqual(mapped[c], 0, "\(source)")
          XCTAssertLessThanOrEqual(mapped[c], 1, "\(source)")
        }
        XCTAssertEqual((mapped * luma709).sum(), min((converted * luma709).sum(), 1), accuracy: 1e-9)
        // CIE xy hue angle around D65: exact by construction.
        let before = xyHue(toXYZ709 * converted)
        let after = xyHue(toXYZ709 * mapped)
        XCTAssertLessThan(angleBetween(before, after), 0.01, "xy hue of \(source): \(before)° → \(after)°")
        // ICtCp hue (perceptual): within a few degrees.
        let i0 = ictcpHue(source, nits: 203)
        let i1 = ictcpHue(to2020 * mapped, nits: 203)
        XCTAssertLessThan(angleBetween(i0, i1), 6, "ICtCp hue of \(source): \(i0)° → \(i1)°")
      }
    }
  }

  func testMappingNeverLeavesTheRange() {
    let luma = ColorPrimaries.bt709.lumaCoefficients
    for rgb in [SIMD3(3, 0.5, -1), SIMD3(-2, -2, -2), SIMD3(5, 5, 5), SIMD3(0.2, -0.1, 2), SIMD3(1.5, 1.2, 1.1)] {
      let mapped = GamutMapping.desaturate(rgb, luma: luma)
      XCTAssertEqual(mapped, mapped.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1)), "\(rgb)")
    }
    XCTAssertEqual(GamutMapping.desaturate(SIMD3(5, 5, 5), luma: luma), SIMD3(1, 1, 1))
    XCTAssertEqual(GamutMapping.desaturate(SIMD3(-1, -1, -1), luma: luma), SIMD3(0, 0, 0))
  }

  // MARK: helpers

  private func xyHue(_ xyz: SIMD3<Double>) -> Double {
    let sum = xyz.sum()
    let white = ColorPrimaries.d65
    return atan2(xyz.y / sum - white.y, xyz.x / sum - white.x) * 180 / .pi
  }

  /// ICtCp (ITU-R BT.2100) hue angle of linear BT.2020 RGB, scaled so that 1.0 is `nits`.
  private func ictcpHue(_ rgb: SIMD3<Double>, nits: Double) -> Double {
    let lms = ColorMatrix(
      SIMD3(1688, 2146, 262) / 4096, SIMD3(683, 2951, 462) / 4096, SIMD3(99, 309, 3688) / 4096)
    let l = lms * (rgb * nits)
    let p = SIMD3(PQTransfer.inverseEOTF(l.x), PQTransfer.inverseEOTF(l.y), PQTransfer.inverseEOTF(l.z))
    let ct = (6610 * p.x - 13_613 * p.y + 7003 * p.z) / 4096
    let cp = (17_933 * p.x - 17_390 * p.y - 543 * p.z) / 4096
    return atan2(cp, ct) * 180 / .pi
  }

  private func angleBetween(_ a: Double, _ b: Double) -> Double {
    let d = abs(a - b).truncatingRemainder(dividingBy: 360)
    return min(d, 360 - d)
  }
}
