import OrbDecode
import XCTest

@testable import OrbRender

final class YUVMatrixTests: XCTestCase {
  private func rgb8(_ m: YUVMatrix, _ y: Int, _ cb: Int, _ cr: Int, depth: Int = 8) -> [Int] {
    let max = Double((1 << depth) - 1)
    let v = m.apply(y: Double(y) / max, cb: Double(cb) / max, cr: Double(cr) / max)
    return [v.x, v.y, v.z].map { Int(($0 * 255).rounded()) }
  }

  func testLimitedRangeBlackAndWhiteLandOnTheEnds() {
    let m = YUVMatrix(matrix: .bt709, range: .limited)
    XCTAssertEqual(rgb8(m, 16, 128, 128), [0, 0, 0])
    XCTAssertEqual(rgb8(m, 235, 128, 128), [255, 255, 255])
    XCTAssertEqual(rgb8(m, 126, 128, 128), [128, 128, 128])
  }

  func testFullRangeUsesAllCodes() {
    let m = YUVMatrix(matrix: .bt709, range: .full)
    XCTAssertEqual(rgb8(m, 0, 128, 128), [0, 0, 0])
    XCTAssertEqual(rgb8(m, 255, 128, 128), [255, 255, 255])
  }

  /// Primaries encoded with each matrix (codes from ITU-R BT.709 / BT.601 tables) decode back to themselves.
  func testSaturatedPrimariesDecodePerMatrix() {
    let bt709 = YUVMatrix(matrix: .bt709, range: .limited)
    XCTAssertEqual(rgb8(bt709, 63, 102, 240), [255, 0, 0], accuracy: 2)
    XCTAssertEqual(rgb8(bt709, 173, 42, 26), [0, 255, 0], accuracy: 2)
    XCTAssertEqual(rgb8(bt709, 32, 240, 118), [0, 0, 255], accuracy: 2)
    let bt601 = YUVMatrix(matrix: .bt601, range: .limited)
    XCTAssertEqual(rgb8(bt601, 81, 90, 240), [255, 0, 0], accuracy: 2)
    XCTAssertEqual(rgb8(bt601, 145, 54, 34), [0, 255, 0], accuracy: 2)
    XCTAssertEqual(rgb8(bt601, 41, 240, 110), [0, 0, 255], accuracy: 2)
    // The same codes mean different colours under the other matrix: the choice matters.
    let misread = rgb8(bt601, 63, 102, 240)
    XCTAssertGreaterThan(zip(misread, [255, 0, 0]).map { abs($0 - $1) }.max()!, 8, "\(misread)")
  }

  func testTenBitLimitedRangeScalesTheOffsets() {
    let m = YUVMatrix(matrix: .bt2020nc, range: .limited, bitDepth: 10)
    XCTAssertEqual(rgb8(m, 64, 512, 512, depth: 10), [0, 0, 0])
    XCTAssertEqual(rgb8(m, 940, 512, 512, depth: 10), [255, 255, 255])
  }
}

final class VideoGeometryTests: XCTestCase {
  func testWidePictureIsLetterboxed() {
    let g = VideoGeometry(displayAspect: 2, rotation: 0, width: 640, height: 480)
    XCTAssertTrue(g.rect == (0, 80, 640, 400), "\(g.rect)")
    XCTAssertNil(g.sourceUV(x: 320, y: 10))
    XCTAssertNil(g.sourceUV(x: 320, y: 470))
  }

  func testTallPictureIsPillarboxed() {
    let g = VideoGeometry(displayAspect: 0.75, rotation: 0, width: 640, height: 480)
    XCTAssertTrue(g.rect == (140, 0, 500, 480), "\(g.rect)")
  }

  func testQuarterTurnMapsCorners() {
    // Turned 90° clockwise: the source's bottom-left corner shows at the top-left.
    let g = VideoGeometry(displayAspect: 1, rotation: 90, width: 100, height: 100)
    let topLeft = g.sourceUV(x: 0, y: 0)!
    XCTAssertEqual(topLeft.x, 0, accuracy: 0.01)
    XCTAssertEqual(topLeft.y, 1, accuracy: 0.01)
    let topRight = g.sourceUV(x: 99, y: 0)!
    XCTAssertEqual(topRight.x, 0, accuracy: 0.01)
    XCTAssertEqual(topRight.y, 0, accuracy: 0.01)
  }

  func testHalfTurnAndThreeQuarterTurn() {
    let half = VideoGeometry(displayAspect: 1, rotation: 180, width: 100, height: 100).sourceUV(x: 0, y: 0)!
    XCTAssertEqual(half.x, 1, accuracy: 0.01)
    XCTAssertEqual(half.y, 1, accuracy: 0.01)
    let threeQuarter = VideoGeometry(displayAspect: 1, rotation: 270, width: 100, height: 100).sourceUV(x: 0, y: 0)!
    XCTAssertEqual(threeQuarter.x, 1, accuracy: 0.01)
    XCTAssertEqual(threeQuarter.y, 0, accuracy: 0.01)
  }

  func testNaturalSizeAppliesPixelAspectThenRotation() {
    XCTAssertTrue(VideoGeometry.naturalSize(width: 320, height: 240, sampleAspect: 2, rotation: 0) == (640, 240))
    XCTAssertTrue(VideoGeometry.naturalSize(width: 320, height: 240, sampleAspect: 1, rotation: 90) == (240, 320))
  }
}

func XCTAssertEqual(
  _ a: [Int], _ b: [Int], accuracy: Int, file: StaticString = #filePath, line: UInt = #line
) {
  XCTAssertEqual(a.count, b.count, file: file, line: line)
  for (x, y) in zip(a, b) where abs(x - y) > accuracy {
    XCTFail("\(a) is not within \(accuracy) of \(b)", file: file, line: line)
    return
  }
}
