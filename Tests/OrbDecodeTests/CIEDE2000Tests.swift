import OrbTestSupport
import XCTest

/// The colour-difference metric the HDR tests rely on, against Sharma, Wu and Dalal's published pairs.
final class CIEDE2000Tests: XCTestCase {
  /// G. Sharma, W. Wu, E. N. Dalal, "The CIEDE2000 Color-Difference Formula: Implementation Notes, Supplementary Test
  /// Data, and Mathematical Observations", Color Research and Application 30(1), 2005, Table 1: L1 a1 b1, L2 a2 b2 and
  /// ΔE00, all 34 pairs. They exercise what implementations get wrong: blues where the rotation term acts, zero
  /// chroma, hue differences and means across the 180° and 360° discontinuities, and lightness far from 50.
  static let sharmaWuDalal: [[Double]] = [
    [50.0000, 2.6772, -79.7751, 50.0000, 0.0000, -82.7485, 2.0425],
    [50.0000, 3.1571, -77.2803, 50.0000, 0.0000, -82.7485, 2.8615],
    [50.0000, 2.8361, -74.0200, 50.0000, 0.0000, -82.7485, 3.4412],
    [50.0000, -1.3802, -84.2814, 50.0000, 0.0000, -82.7485, 1.0000],
    [50.0000, -1.1848, -84.8006, 50.0000, 0.0000, -82.7485, 1.0000],
    [50.0000, -0.9009, -85.5211, 50.0000, 0.0000, -82.7485, 1.0000],
    [50.0000, 0.0000, 0.0000, 50.0000, -1.0000, 2.0000, 2.3669],
    [50.0000, -1.0000, 2.0000, 50.0000, 0.0000, 0.0000, 2.3669],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0009, 7.1792],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0010, 7.1792],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0011, 7.2195],
    [50.0000, 2.4900, -0.0010, 50.0000, -2.4900, 0.0012, 7.2195],
    [50.0000, -0.0010, 2.4900, 50.0000, 0.0009, -2.4900, 4.8045],
    [50.0000, -0.0010, 2.4900, 50.0000, 0.0010, -2.4900, 4.8045],
    [50.0000, -0.0010, 2.4900, 50.0000, 0.0011, -2.4900, 4.7461],
    [50.0000, 2.5000, 0.0000, 50.0000, 0.0000, -2.5000, 4.3065],
    [50.0000, 2.5000, 0.0000, 73.0000, 25.0000, -18.0000, 27.1492],
    [50.0000, 2.5000, 0.0000, 61.0000, -5.0000, 29.0000, 22.8977],
    [50.0000, 2.5000, 0.0000, 56.0000, -27.0000, -3.0000, 31.9030],
    [50.0000, 2.5000, 0.0000, 58.0000, 24.0000, 15.0000, 19.4535],
    [50.0000, 2.5000, 0.0000, 50.0000, 3.1736, 0.5854, 1.0000],
    [50.0000, 2.5000, 0.0000, 50.0000, 3.2972, 0.0000, 1.0000],
    [50.0000, 2.5000, 0.0000, 50.0000, 1.8634, 0.5757, 1.0000],
    [50.0000, 2.5000, 0.0000, 50.0000, 3.2592, 0.3350, 1.0000],
    [60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644],
    [63.0109, -31.0961, -5.8663, 62.8187, -29.7946, -4.0864, 1.2630],
    [61.2901, 3.7196, -5.3901, 61.4292, 2.2480, -4.9620, 1.8731],
    [35.0831, -44.1164, 3.7933, 35.0232, -40.0716, 1.5901, 1.8645],
    [22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373],
    [36.4612, 47.8580, 18.3852, 36.2715, 50.5065, 21.2231, 1.4146],
    [90.8027, -2.0831, 1.4410, 91.1528, -1.6435, 0.0447, 1.4441],
    [90.9257, -0.5406, -0.9208, 88.6381, -0.8985, -0.7239, 1.5381],
    [6.7747, -0.2908, -2.4247, 5.8714, -0.0985, -2.2286, 0.6377],
    [2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082],
  ]

  func testSharmaWuAndDalalsPublishedPairs() {
    XCTAssertEqual(Self.sharmaWuDalal.count, 34)
    for (i, row) in Self.sharmaWuDalal.enumerated() {
      let p = (l: row[0], a: row[1], b: row[2])
      let q = (l: row[3], a: row[4], b: row[5])
      XCTAssertEqual(CIEDE2000.difference(lab: p, q), row[6], accuracy: 1e-4, "pair \(i + 1)")
      XCTAssertEqual(CIEDE2000.difference(lab: q, p), row[6], accuracy: 1e-4, "pair \(i + 1), reversed")
    }
  }

  func testIdenticalColoursDoNotDiffer() {
    XCTAssertEqual(CIEDE2000.difference(RGB(r: 12, g: 200, b: 99), RGB(r: 12, g: 200, b: 99)), 0)
  }

  func testLabOfWhiteAndKnownPrimaries() {
    let white = CIEDE2000.lab(.white)
    XCTAssertEqual(white.l, 100, accuracy: 0.01)
    XCTAssertEqual(white.a, 0, accuracy: 0.01)
    let red = CIEDE2000.lab(.red)
    XCTAssertEqual(red.l, 53.24, accuracy: 0.05)
    XCTAssertEqual(red.a, 80.09, accuracy: 0.1)
    XCTAssertEqual(red.b, 67.20, accuracy: 0.1)
  }

  func testSmallAndLargeDifferencesAreOrdered() {
    let grey = RGB(r: 128, g: 128, b: 128)
    let near = CIEDE2000.difference(grey, RGB(r: 129, g: 128, b: 128))
    let far = CIEDE2000.difference(.red, .green)
    XCTAssertLessThan(near, 1)
    XCTAssertGreaterThan(far, 60)
    XCTAssertEqual(CIEDE2000.difference(.black, .white), 100, accuracy: 0.5)
  }
}
