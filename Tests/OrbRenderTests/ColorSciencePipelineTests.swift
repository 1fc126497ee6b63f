import Foundation
import XCTest

@testable import OrbDecode
@testable import OrbRender

/// The whole HDR → SDR path of one pixel, and dithering.
final class ColorSciencePipelineTests: XCTestCase {
  private func code8(_ signal: SIMD3<Double>) -> [Double] { [signal.x * 255, signal.y * 255, signal.z * 255] }

  private func pqGrey(_ nits: Double) -> SIMD3<Double> { SIMD3(repeating: PQTransfer.inverseEOTF(nits)) }

  /// With nothing to compress (clip, or a source no brighter than the 203-nit target), HDR reference white is SDR
  /// white.
  func testReferenceWhiteIsSDRWhiteWhenNothingCompressesIt() {
    let clip = ToneMapParams(curve: .clip, sourcePeak: 1000, targetPeak: 203)
    for c in code8(HDRToSDR.map(rgbSignal: pqGrey(203), params: clip)) { XCTAssertEqual(c, 255, accuracy: 2) }
    let sdrInPQ = ToneMapParams(curve: .bt2390, sourcePeak: 203, targetPeak: 203)
    for c in code8(HDRToSDR.map(rgbSignal: pqGrey(203), params: sdrInPQ)) { XCTAssertEqual(c, 255, accuracy: 2) }
    // A brighter display keeps reference white at its absolute 203 nits.
    let bright = ToneMapParams(curve: .bt2390, sourcePeak: 1000, targetPeak: 1000)
    let lift = pow(0.001, 1 / 2.4)  // the display's black, 1000:1
    let expected = 255 * (pow(203.0 / 1000, 1 / 2.4) - lift) / (1 - lift)
    for c in code8(HDRToSDR.map(rgbSignal: pqGrey(203), params: bright)) { XCTAssertEqual(c, expected, accuracy: 0.5) }
  }

  /// PQ decode → BT.2390 as libplacebo has it (1000-nit source with black 0.005 nits, 203-nit target of 1000:1) →
  /// BT.2020 → BT.709 → BT.1886 encode for that display, against values worked out from libplacebo's formulas apart
  /// from this code: 203 nits is compressed to 134.65 nits (code 212.5), 100 nits to 87.54 (175.1), 50 nits to
  /// 50.38 (136.0); the source's black is the display's (code 0).
  func testGreysThroughBT2390FromAThousandNitSource() {
    let params = ToneMapParams(curve: .bt2390, sourcePeak: 1000, targetPeak: 203, transfer: .pq, primaries: .bt2020)
    let expected: [(nits: Double, code: Double)] = [(203, 212.52), (100, 175.12), (50, 135.99), (1000, 255), (0, 0)]
    for (nits, code) in expected {
      let out = code8(HDRToSDR.map(rgbSignal: pqGrey(nits), params: params))
      for c in out { XCTAssertEqual(c, code, accuracy: 0.5, "\(nits) nits came out at \(out)") }
    }
  }

  /// HLG 75% on a 1000-nit nominal display is 203 nits, so it lands where PQ 203 nits does.
  func testHLGReferenceWhiteLandsWithPQReferenceWhite() {
    let hlg = ToneMapParams(curve: .bt2390, sourcePeak: 1000, targetPeak: 203, transfer: .hlg)
    let pq = ToneMapParams(curve: .bt2390, sourcePeak: 1000, targetPeak: 203, transfer: .pq)
    let fromHLG = HDRToSDR.map(rgbSignal: SIMD3(repeating: 0.75), params: hlg)
    let fromPQ = HDRToSDR.map(rgbSignal: pqGrey(203), params: pq)
    for c in 0..<3 { XCTAssertEqual(fromHLG[c] * 255, fromPQ[c] * 255, accuracy: 1.5) }
    let peak = HDRToSDR.map(rgbSignal: SIMD3(repeating: 1), params: hlg)
    for c in 0..<3 { XCTAssertEqual(peak[c], 1, accuracy: 1e-9) }
  }

  func testGreysStayNeutralAndRise() {
    for transfer in ToneMapParams.Transfer.allCases {
      for curve in ToneMapCurve.allCases {
        let params = ToneMapParams(curve: curve, sourcePeak: 1000, targetPeak: 203, transfer: transfer)
        var last = -1.0
        for i in 0...256 {
          let out = HDRToSDR.map(rgbSignal: SIMD3(repeating: Double(i) / 256), params: params)
          XCTAssertEqual(out.x, out.y, accuracy: 1e-9)
          XCTAssertEqual(out.z, out.y, accuracy: 1e-9)
          XCTAssertGreaterThanOrEqual(out.y, last - 1e-12, "\(curve) \(transfer) at \(i)")
          last = out.y
        }
      }
    }
  }

  func testEveryOutputIsInRange() {
    let levels = [0.0, 0.2, 0.5, 0.58, 0.7, 0.85, 1.0]
    for transfer in ToneMapParams.Transfer.allCases {
      for curve in ToneMapCurve.allCases {
        let params = ToneMapParams(curve: curve, sourcePeak: 4000, targetPeak: 203, transfer: transfer)
        for r in levels {
          for g in levels {
            for b in levels {
              let out = HDRToSDR.map(rgbSignal: SIMD3(r, g, b), params: params)
              XCTAssertEqual(out, out.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1)))
            }
          }
        }
      }
    }
  }

  /// A dim BT.709 red, carried in BT.2020, comes out as BT.709 red at about its level: the matrix is right, and the
  /// cross-talk and the curve's black point move it only slightly.
  func testDimBT709ColourComesOutNearlyAsItWas() {
    let params = ToneMapParams(curve: .bt2390, sourcePeak: 1000, targetPeak: 203)
    let red709 = SIMD3(40.0, 0, 0)  // nits in BT.709 primaries, Y ≈ 8.5 nits
    let in2020 = GamutMapping.bt2020ToBT709.inverse * red709
    let out = HDRToSDR.map(rgbLinearNits: in2020, params: params)
    XCTAssertEqual(out.x, pow(40.0 / 203, 1 / 2.4), accuracy: 0.01)
    XCTAssertLessThan(out.y, 0.03)
    XCTAssertLessThan(out.z, 0.03)
  }

  func testBayerMatrixIsTheClassicEightByEight() {
    let rows = (0..<8).map { y in (0..<8).map { x in OrderedDither.bayerIndex(x: x, y: y) } }
    XCTAssertEqual(rows[0], [0, 32, 8, 40, 2, 34, 10, 42])
    XCTAssertEqual(rows[1], [48, 16, 56, 24, 50, 18, 58, 26])
    XCTAssertEqual(rows[2], [12, 44, 4, 36, 14, 46, 6, 38])
    XCTAssertEqual(Set(rows.joined()), Set(0..<64))
    XCTAssertEqual(OrderedDither.bayerIndex(x: 9, y: 10), OrderedDither.bayerIndex(x: 1, y: 2))
  }

  func testDitherOffsetsStayWithinHalfAnLSBAndAverageToZero() {
    var sum = 0.0
    for y in 0..<8 {
      for x in 0..<8 {
        let o = OrderedDither.offset(x: x, y: y)
        XCTAssertLessThan(abs(o), 0.5)
        sum += o
      }
    }
    XCTAssertEqual(sum, 0, accuracy: 1e-12)
  }

  /// A level between two 8-bit codes, dithered and rounded over a tile, averages to the level.
  func testDitheredQuantisationKeepsTheMeanLevel() {
    for level in [100.25, 17.5, 200.875, 3.1] {
      var total = 0.0
      for y in 0..<8 {
        for x in 0..<8 {
          total += (OrderedDither.apply(level / 255, x: x, y: y) * 255).rounded()
        }
      }
      XCTAssertEqual(total / 64, level, accuracy: 1.0 / 64 + 1e-9, "level \(level)")
    }
  }
}
