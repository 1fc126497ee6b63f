import Foundation
import XCTest

@testable import OrbDecode
@testable import OrbRender

/// Anchor values of PQ, HLG, BT.1886 and sRGB from their standards (and BT.2408 for the operating levels).
final class ColorScienceTransferTests: XCTestCase {
  func testPQCode0_5081Is100Nits() {
    XCTAssertEqual(PQTransfer.eotf(0.5081), 100, accuracy: 0.5)
  }

  func testPQOfReferenceWhiteIs0_5806() {
    XCTAssertEqual(PQTransfer.inverseEOTF(203), 0.5806, accuracy: 0.0001)
  }

  func testPQEndsAreZeroAndTenThousandNits() {
    XCTAssertEqual(PQTransfer.eotf(0), 0)
    XCTAssertEqual(PQTransfer.eotf(1), 10_000, accuracy: 1e-9)
    XCTAssertEqual(PQTransfer.inverseEOTF(10_000), 1, accuracy: 1e-12)
  }

  func testPQRoundTripsWithinAMillionth() {
    var nits = [Double]()
    for i in 0...1000 { nits.append(Double(i) * 10) }
    for e in stride(from: -4.0, through: 4.0, by: 0.01) { nits.append(pow(10, e)) }
    for l in nits {
      let back = PQTransfer.eotf(PQTransfer.inverseEOTF(l))
      XCTAssertLessThan(abs(back - l) / PQTransfer.peakNits, 1e-6, "\(l) nits came back as \(back)")
      XCTAssertLessThan(abs(back - l), max(l, 1) * 1e-6, "\(l) nits came back as \(back)")
    }
    for i in 0...1000 {
      let s = Double(i) / 1000
      XCTAssertEqual(PQTransfer.inverseEOTF(PQTransfer.eotf(s)), s, accuracy: 1e-6)
    }
  }

  /// A 203-nit white written as 10-bit limited-range PQ has luma code 573 (572.7).
  func testReferenceWhiteIsCode573InTenBitLimitedRange() {
    let code = 64 + 876 * PQTransfer.inverseEOTF(203)
    XCTAssertEqual(code, 572.7, accuracy: 0.05)
    XCTAssertEqual(Int(code.rounded()), 573)
  }

  func testHLGOETFAnchors() {
    XCTAssertEqual(HLGTransfer.oetf(1.0 / 12.0), 0.5, accuracy: 1e-12)
    XCTAssertEqual(HLGTransfer.oetf(1), 1, accuracy: 1e-6)
    XCTAssertEqual(HLGTransfer.oetf(0), 0)
    XCTAssertEqual(HLGTransfer.b, 0.284_668_92, accuracy: 1e-8)
    XCTAssertEqual(HLGTransfer.c, 0.559_910_73, accuracy: 1e-8)
  }

  func testHLGRoundTrips() {
    for i in 0...1000 {
      let e = Double(i) / 1000
      XCTAssertEqual(HLGTransfer.inverseOETF(HLGTransfer.oetf(e)), e, accuracy: 1e-9)
      XCTAssertEqual(HLGTransfer.oetf(HLGTransfer.inverseOETF(e)), e, accuracy: 1e-9)
    }
  }

  func testHLGSystemGammaPerBT2100() {
    XCTAssertEqual(HLGTransfer.systemGamma(peakNits: 1000), 1.2, accuracy: 1e-12)
    XCTAssertEqual(HLGTransfer.systemGamma(peakNits: 2000), 1.2 + 0.42 * log10(2), accuracy: 1e-12)
    XCTAssertEqual(HLGTransfer.systemGamma(peakNits: 400), 1.2 + 0.42 * log10(0.4), accuracy: 1e-12)
  }

  /// BT.2100: on a 1000-nit display, scene white (E = 1 in all channels) is shown at 1000 nits.
  func testHLGOOTFShowsSceneWhiteAtTheDisplayPeak() {
    let white = HLGTransfer.ootf(SIMD3(1, 1, 1), peakNits: 1000)
    for c in 0..<3 { XCTAssertEqual(white[c], 1000, accuracy: 1e-9) }
    let brighter = HLGTransfer.ootf(SIMD3(1, 1, 1), peakNits: 2000)
    for c in 0..<3 { XCTAssertEqual(brighter[c], 2000, accuracy: 1e-9) }
  }

  /// BT.2408: HLG 75% is HDR reference white (203 nits) and HLG 38% is the 18% grey card (26 nits) on a 1000-nit
  /// display.
  func testHLGOperatingLevelsPerBT2408() {
    func displayed(_ signal: Double) -> Double {
      let e = HLGTransfer.inverseOETF(signal)
      return HLGTransfer.ootf(SIMD3(repeating: e), peakNits: 1000).y
    }
    XCTAssertEqual(displayed(0.75), 203, accuracy: 203 * 0.05)
    XCTAssertEqual(displayed(0.38), 26, accuracy: 26 * 0.05)
  }

  /// The OOTF scales RGB by a function of Y_s, so chromaticity is kept.
  func testHLGOOTFKeepsChannelRatios() {
    let scene = SIMD3(0.5, 0.2, 0.1)
    let display = HLGTransfer.ootf(scene, peakNits: 1000)
    XCTAssertEqual(display.x / display.y, 2.5, accuracy: 1e-12)
    XCTAssertEqual(display.z / display.y, 0.5, accuracy: 1e-12)
  }

  func testBT1886IsAPure2_4Power() {
    XCTAssertEqual(BT1886Transfer.eotf(0.5), pow(0.5, 2.4), accuracy: 1e-15)
    XCTAssertEqual(BT1886Transfer.eotf(0), 0)
    XCTAssertEqual(BT1886Transfer.eotf(1), 1)
    for i in 0...100 {
      let v = Double(i) / 100
      XCTAssertEqual(BT1886Transfer.inverseEOTF(BT1886Transfer.eotf(v)), v, accuracy: 1e-12)
    }
  }

  func testSRGBPiecewiseJoinsAndRoundTrips() {
    XCTAssertEqual(SRGBTransfer.eotf(0.040_45), 0.040_45 / 12.92, accuracy: 1e-7)
    XCTAssertEqual(SRGBTransfer.eotf(0.040_46), 0.040_46 / 12.92, accuracy: 1e-6)
    XCTAssertEqual(SRGBTransfer.eotf(0.5), 0.214_041, accuracy: 1e-6)
    XCTAssertEqual(SRGBTransfer.eotf(1), 1, accuracy: 1e-12)
    for i in 0...100 {
      let v = Double(i) / 100
      XCTAssertEqual(SRGBTransfer.inverseEOTF(SRGBTransfer.eotf(v)), v, accuracy: 1e-12)
    }
  }

  func testTransfersRise() {
    var last = (pq: -1.0, hlg: -1.0, bt: -1.0, srgb: -1.0)
    for i in 0...2000 {
      let v = Double(i) / 2000
      let now = (
        pq: PQTransfer.eotf(v), hlg: HLGTransfer.inverseOETF(v), bt: BT1886Transfer.eotf(v), srgb: SRGBTransfer.eotf(v)
      )
      XCTAssertGreaterThanOrEqual(now.pq, last.pq)
      XCTAssertGreaterThanOrEqual(now.hlg, last.hlg)
      XCTAssertGreaterThanOrEqual(now.bt, last.bt)
      XCTAssertGreaterThanOrEqual(now.srgb, last.srgb)
      last = now
    }
  }
}
