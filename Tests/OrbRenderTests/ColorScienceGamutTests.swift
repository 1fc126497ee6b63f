import Foundation
import XCTest

@testable import OrbDecode
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

  /// BT.2020 primaries and secondaries (the saturated green first) and P3 colours, at a few levels, converted to
  /// BT.709: they fall outside 0...1, and the perceptual mapping (what SDR video with BT.2020 primaries gets; HDR is
  /// clipped as libplacebo clips it) brings them inside at the same perceived hue.
  func testSaturatedColoursMapIntoBT709KeepingPerceivedHue() {
    for source in outOfGamutSources {
      let converted = GamutMapping.bt2020ToBT709 * source
      XCTAssertFalse(converted.min() >= 0 && converted.max() <= 1, "\(source) is not a test of anything")
      let okBefore = Oklab.hue(Oklab.fromBT709(converted))
      // (Light below zero, as P3 red has a trace of in BT.2020, counts as none.)
      let mapped = GamutMapping.perceptual(GamutMapping.bt2020ToBT709 * pointwiseMax(source, .zero))
      XCTAssertEqual(mapped, mapped.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1)), "\(source)")
      // Pushed all the way to the gamut boundary: some channel at 0 or 1.
      XCTAssertTrue(mapped.min() < 0.01 || mapped.max() > 0.99, "\(source) → \(mapped)")
      // Constant perceived hue, in Oklab, the space it maps in (ICtCp's hue lines differ from Oklab's by up to ~9°
      // on BT.2020 reds and greens; Oklab's were fitted to perceived-hue data).
      let okAfter = Oklab.hue(Oklab.fromBT709(mapped))
      XCTAssertLessThanOrEqual(
        angleBetween(okBefore, okAfter), GamutMapping.clipHueToleranceDegrees + 0.01,
        "Oklab hue of \(source): \(okBefore)° → \(okAfter)°")
      // And the desaturation by grey-mixing in linear light that this replaces does turn the hue: the test sees it.
      let cheap = Oklab.hue(Oklab.fromBT709(GamutMapping.desaturate(converted, luma: HDRToSDR.outputLuma)))
      if source.x > 0.5 && source.y == 0 && source.z == 0 {
        XCTAssertGreaterThan(angleBetween(okBefore, cheap), 3, "grey-mixing keeps the hue of \(source)?")
      }
    }
  }

  /// The cheap alternative keeps luminance and the CIE xy hue exactly (but not the perceived hue).
  func testDesaturationKeepsLuminanceAndXYHue() {
    let luma709 = ColorPrimaries.bt709.lumaCoefficients
    let toXYZ709 = ColorPrimaries.bt709.rgbToXYZ
    for source in outOfGamutSources {
      let converted = GamutMapping.bt2020ToBT709 * source
      let mapped = GamutMapping.desaturate(converted, luma: luma709)
      XCTAssertEqual(mapped, mapped.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1)), "\(source)")
      XCTAssertEqual((mapped * luma709).sum(), min((converted * luma709).sum(), 1), accuracy: 1e-9)
      let before = xyHue(toXYZ709 * converted)
      let after = xyHue(toXYZ709 * mapped)
      XCTAssertLessThan(angleBetween(before, after), 0.01, "xy hue of \(source): \(before)° → \(after)°")
    }
  }

  func testPerceptualMappingLeavesColoursInsideTheGamutAlone() {
    let levels = [0.0, 0.05, 0.3, 0.5, 0.8, 1.0]
    for r in levels {
      for g in levels {
        for b in levels {
          XCTAssertEqual(GamutMapping.perceptual(SIMD3(r, g, b)), SIMD3(r, g, b))
        }
      }
    }
  }

  func testICtCpRoundTripsAndPutsGreyOnTheAxis() {
    let grey = ICtCp.fromBT709(nits: SIMD3(repeating: 100))
    XCTAssertEqual(grey.x, PQTransfer.inverseEOTF(100), accuracy: 1e-9)
    XCTAssertEqual(grey.y, 0, accuracy: 1e-9)
    XCTAssertEqual(grey.z, 0, accuracy: 1e-9)
    for rgb in [SIMD3(50.0, 10, 5), SIMD3(0.1, 300, 20), SIMD3(1, 2, 900)] {
      let back = ICtCp.toBT709(ICtCp.fromBT709(nits: rgb))
      for c in 0..<3 { XCTAssertEqual(back[c], rgb[c], accuracy: 1e-6 * max(1, rgb[c])) }
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

  /// Linear BT.2020 colours outside BT.709: primaries, secondaries, an orange and P3 primaries, at several levels.
  private var outOfGamutSources: [SIMD3<Double>] {
    let p3 = ColorPrimaries.dciP3.conversion(to: .bt2020)
    let colours: [SIMD3<Double>] = [
      SIMD3(0, 1, 0), SIMD3(1, 0, 0), SIMD3(0, 0, 1), SIMD3(0, 1, 1), SIMD3(1, 0, 1), SIMD3(1, 1, 0),
      SIMD3(1, 0.5, 0), SIMD3(0.2, 1, 0.1), p3 * SIMD3(1, 0, 0), p3 * SIMD3(0, 1, 0), p3 * SIMD3(1, 0.5, 0),
    ]
    return colours.flatMap { c in [0.3, 0.7, 1.0].map { c * $0 } }
  }

  private func xyHue(_ xyz: SIMD3<Double>) -> Double {
    let sum = xyz.sum()
    let white = ColorPrimaries.d65
    return atan2(xyz.y / sum - white.y, xyz.x / sum - white.x) * 180 / .pi
  }

  private func angleBetween(_ a: Double, _ b: Double) -> Double {
    let d = abs(a - b).truncatingRemainder(dividingBy: 360)
    return min(d, 360 - d)
  }
}
