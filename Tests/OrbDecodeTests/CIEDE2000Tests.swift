import OrbTestSupport
import XCTest

/// The colour-difference metric the HDR tests rely on, against Sharma, Wu and Dalal's published pairs.
final class CIEDE2000Tests: XCTestCase {
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
