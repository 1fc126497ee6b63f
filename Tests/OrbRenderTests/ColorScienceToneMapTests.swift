import OrbDecode
import XCTest

@testable import OrbRender

/// The tone curves, in the spirit of libplacebo's src/tests/tone_mapping.c: they only rise, land the source peak on
/// the target peak, and do nothing when there is nothing to do.
final class ColorScienceToneMapTests: XCTestCase {
  /// (source peak, target peak) pairs in nits that need tone mapping.
  private let ranges: [(Double, Double)] = [
    (1000, 203), (4000, 203), (10_000, 203), (10_000, 100), (1000, 100), (600, 400), (2000, 1000),
  ]

  func testEveryCurveRisesMonotonically() {
    for curve in ToneMapCurve.allCases {
      for (source, target) in ranges {
        var last = -1.0
        for i in 0...4000 {
          let nits = source * 1.1 * Double(i) / 4000
          let out = curve.map(nits, sourcePeak: source, targetPeak: target)
          XCTAssertGreaterThanOrEqual(
            out, last - 1e-9, "\(curve) falls at \(nits) nits (\(source) → \(target))")
          last = out
        }
      }
    }
  }

  func testEveryCurveMapsTheSourcePeakToTheTargetPeak() {
    for curve in ToneMapCurve.allCases {
      for (source, target) in ranges {
        let out = curve.map(source, sourcePeak: source, targetPeak: target)
        XCTAssertEqual(out, target, accuracy: target * 0.005, "\(curve): \(source) → \(target)")
        XCTAssertEqual(curve.map(0, sourcePeak: source, targetPeak: target), 0, accuracy: 1e-6, "\(curve) black")
      }
    }
  }

  /// Content brighter than its declared peak still lands on the target peak (clip clips everything there).
  func testInputAboveTheSourcePeakStaysAtTheTargetPeak() {
    for curve in ToneMapCurve.allCases {
      let out = curve.map(4000, sourcePeak: 1000, targetPeak: 203)
      XCTAssertEqual(out, 203, accuracy: 203 * 0.005, "\(curve)")
    }
    XCTAssertEqual(ToneMapCurve.clip.map(500, sourcePeak: 1000, targetPeak: 203), 203)
    XCTAssertEqual(ToneMapCurve.clip.map(150, sourcePeak: 1000, targetPeak: 203), 150)
  }

  func testBT2390LeavesLuminanceBelowItsKneeUnchanged() {
    for (source, target) in ranges {
      let knee = ToneMapCurve.bt2390Knee(sourcePeak: source, targetPeak: target)
      XCTAssertGreaterThan(knee, 0)
      XCTAssertLessThan(knee, target)
      for i in 0...200 {
        let nits = knee * 0.999 * Double(i) / 200
        let out = ToneMapCurve.bt2390.map(nits, sourcePeak: source, targetPeak: target)
        XCTAssertEqual(out, nits, accuracy: max(nits * 0.005, 1e-9), "\(nits) nits (\(source) → \(target))")
      }
      // Above the knee it compresses.
      let above = (knee + target) / 2
      XCTAssertLessThan(ToneMapCurve.bt2390.map(above, sourcePeak: source, targetPeak: target), above)
    }
  }

  /// Values of the BT.2390 EETF computed independently from ITU-R BT.2390 section 5.4 with the knee offset 1.0
  /// (KS = 2·maxLum − 1) for a 1000-nit source on a 203-nit target: the knee is at 36.01 nits.
  func testBT2390MatchesTheSpecificationAtKnownPoints() {
    XCTAssertEqual(ToneMapCurve.bt2390Knee(sourcePeak: 1000, targetPeak: 203), 36.011, accuracy: 0.01)
    XCTAssertEqual(ToneMapCurve.bt2390.map(203, sourcePeak: 1000, targetPeak: 203), 134.226, accuracy: 0.01)
    XCTAssertEqual(ToneMapCurve.bt2390.map(100, sourcePeak: 1000, targetPeak: 203), 86.763, accuracy: 0.01)
    XCTAssertEqual(ToneMapCurve.bt2390.map(30, sourcePeak: 1000, targetPeak: 203), 30, accuracy: 1e-9)
  }

  func testEveryCurveIsTheIdentityWhenTheSourceFitsTheTarget() {
    for curve in ToneMapCurve.allCases {
      for (source, target) in [(150.0, 203.0), (203.0, 203.0), (1000.0, 1000.0), (400.0, 1000.0)] {
        for i in 0...100 {
          let nits = source * Double(i) / 100
          XCTAssertEqual(curve.map(nits, sourcePeak: source, targetPeak: target), nits, "\(curve)")
        }
      }
    }
  }

  func testHableAndReinhardCompressHighlightsMoreThanShadows() {
    for curve in [ToneMapCurve.hable, .reinhard] {
      let dark = curve.map(10, sourcePeak: 1000, targetPeak: 203) / 10
      let bright = curve.map(800, sourcePeak: 1000, targetPeak: 203) / 800
      XCTAssertGreaterThan(dark, bright, "\(curve)")
    }
  }

  func testCurveNamesAndShaderIDs() {
    XCTAssertEqual(ToneMapCurve.default, .bt2390)
    XCTAssertEqual(ToneMapCurve.allCases.map(\.rawValue), ["bt2390", "hable", "reinhard", "clip"])
    XCTAssertEqual(ToneMapCurve.allCases.map(\.shaderID), [0, 1, 2, 3])
    XCTAssertEqual(ToneMapCurve(rawValue: "hable"), .hable)
  }

  /// The content's peak as libplacebo takes it: the mastering display's maximum (MaxCLL is not used), else the
  /// transfer's nominal peak; its black likewise.
  func testContentPeakPolicy() {
    XCTAssertEqual(ToneMapParams.contentPeak(transfer: .pq, masteringMax: 4000), 4000)
    XCTAssertEqual(ToneMapParams.contentPeak(transfer: .pq, masteringMax: 1), 1)
    XCTAssertEqual(ToneMapParams.contentPeak(transfer: .hlg, masteringMax: 600), 600)
    // Missing or out of range: 10,000 nits for PQ, 1000 for HLG.
    XCTAssertEqual(ToneMapParams.contentPeak(transfer: .pq, masteringMax: nil), 10_000)
    XCTAssertEqual(ToneMapParams.contentPeak(transfer: .pq, masteringMax: 0.5), 10_000)
    XCTAssertEqual(ToneMapParams.contentPeak(transfer: .pq, masteringMax: 50_000), 10_000)
    XCTAssertEqual(ToneMapParams.contentPeak(transfer: .hlg, masteringMax: nil), 1000)
    XCTAssertEqual(ToneMapParams.sourceBlack(masteringMin: 0.0001), 0.0001)
    XCTAssertEqual(ToneMapParams.sourceBlack(masteringMin: 0), 0.005)
    XCTAssertEqual(ToneMapParams.sourceBlack(masteringMin: 500), 0.005)
  }

  /// libplacebo's BT.2390 with black points, at the values worked out from its formulas for a 1000-nit master
  /// (black 0.005 nits) on a 203-nit display of 1000:1.
  func testBT2390WithBlackPointsMatchesLibplacebo() {
    let range = ToneRange(sourceBlack: 0.005, sourcePeak: 1000, targetBlack: 0.203, targetPeak: 203)
    let expected: [(Double, Double)] = [
      (0.005, 0.203), (0.1, 0.468), (1, 1.748), (5, 6.149), (10, 11.283), (50, 50.378), (100, 87.535),
      (203, 134.654), (300, 160.363), (500, 187.651), (1000, 203),
    ]
    for (input, output) in expected {
      XCTAssertEqual(ToneMapCurve.bt2390.map(input, range: range), output, accuracy: output * 2e-3, "\(input) nits")
    }
  }

  /// The detected peak: smoothed over 100 pictures, at once across a scene change, never under SDR white, with
  /// its 5 % margin, within the lowest peak and the content's.
  func testPeakDetectorSmoothsAndFollowsSceneChanges() {
    var detector = PeakDetector()
    XCTAssertEqual(detector.curvePeak(contentPeak: 4000, targetPeak: 203), 4000, "nothing measured yet")
    detector.add(FrameLight(peak: 1000, average: 50))
    XCTAssertEqual(detector.state?.peak ?? 0, 1000, accuracy: 1e-9, "the first picture is taken as it is")
    XCTAssertEqual(detector.curvePeak(contentPeak: 4000, targetPeak: 203), 1050, accuracy: 1e-6)
    // A brighter highlight in the same scene moves the peak by 1 % of the way per picture.
    detector.add(FrameLight(peak: 2000, average: 50))
    XCTAssertEqual(detector.state?.peak ?? 0, 1000 + 1000 * PeakDetector.weight, accuracy: 1e-6)
    XCTAssertEqual(PeakDetector.weight, 0.00995, accuracy: 1e-5)
    // A scene 20 dB brighter on average is followed at once.
    detector.add(FrameLight(peak: 3000, average: 5000))
    XCTAssertEqual(detector.state?.peak ?? 0, 3000, accuracy: 1e-6)
    // A dark scene: the peak stops at SDR white, and the curve's at the lowest peak.
    var dark = PeakDetector()
    dark.add(FrameLight(peak: 20, average: 5))
    XCTAssertEqual(dark.state?.peak, PeakDetector.minimumPeak)
    let lowest = PeakDetector.lowestPeak(contentPeak: 4000, targetPeak: 203)
    XCTAssertEqual(lowest, 278.8, accuracy: 0.5, "libplacebo's 1.3735 of SDR white for a 4000-nit master")
    XCTAssertEqual(dark.curvePeak(contentPeak: 4000, targetPeak: 203), lowest, accuracy: 1e-9)
    // Never above the content's peak.
    var bright = PeakDetector()
    bright.add(FrameLight(peak: 9000, average: 500))
    XCTAssertEqual(bright.curvePeak(contentPeak: 4000, targetPeak: 203), 4000, accuracy: 1e-9)
  }

  func testParamsFromAStream() {
    let d65 = HDRMetadata.Chromaticity(x: 0.3127, y: 0.329)
    let mastering = HDRMetadata.Mastering(
      red: .init(x: 0.68, y: 0.32), green: .init(x: 0.265, y: 0.69), blue: .init(x: 0.15, y: 0.06), whitePoint: d65,
      minLuminance: 0.0001, maxLuminance: 1000)
    let hdr10 = ColorInfo(matrix: .bt2020nc, range: .limited, primaries: .bt2020, transfer: .pq)
    let params = ToneMapParams(color: hdr10, metadata: HDRMetadata(mastering: mastering, maxCLL: 400, maxFALL: 100))
    XCTAssertEqual(params?.sourcePeak, 1000, "the mastering display's peak, not MaxCLL 400 (as libplacebo)")
    XCTAssertEqual(params?.contentPeak, 1000)
    XCTAssertEqual(params?.sourceBlack, 0.0001)
    XCTAssertEqual(params?.mode, .luma)
    XCTAssertEqual(params?.targetPeak, 203)
    XCTAssertEqual(params?.curve, .bt2390)
    XCTAssertEqual(params?.transfer, .pq)
    XCTAssertEqual(params?.primaries, .bt2020)
    let noCLL = ToneMapParams(color: hdr10, metadata: HDRMetadata(mastering: mastering), curve: .hable, targetPeak: 100)
    XCTAssertEqual(noCLL?.sourcePeak, 1000)
    XCTAssertEqual(noCLL?.curve, .hable)
    let hlg = ColorInfo(matrix: .bt2020nc, range: .limited, primaries: .bt2020, transfer: .hlg)
    XCTAssertEqual(ToneMapParams(color: hlg, metadata: HDRMetadata())?.transfer, .hlg)
    XCTAssertEqual(ToneMapParams(color: hlg, metadata: HDRMetadata())?.sourcePeak, 1000)
    let sdr = ColorInfo(matrix: .bt709, range: .limited)
    XCTAssertNil(ToneMapParams(color: sdr, metadata: HDRMetadata()))
  }
}
