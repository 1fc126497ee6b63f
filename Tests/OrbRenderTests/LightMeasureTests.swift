import Foundation
import XCTest

@testable import OrbDecode
@testable import OrbRender

/// Peak detection's measurement of a picture (`FrameLight.measure`, COrbPixels' `orb_measure_light`): the light of
/// the brightest point and the mean, on pictures whose light is known.
final class LightMeasureTests: XCTestCase {
  static let hdr10 = ColorInfo(matrix: .bt2020nc, range: .limited, primaries: .bt2020, transfer: .pq)
  static let hlg = ColorInfo(matrix: .bt2020nc, range: .limited, primaries: .bt2020, transfer: .hlg)

  /// A 10-bit picture: grey at `base` (a luma code, neutral chroma) with busy noise of `noise` codes (a quarter of
  /// that in chroma), and the 2x2
  /// luma blocks in `bright` at code `peakCode` (neutral chroma there too).
  static func picture(
    width: Int, height: Int, color: ColorInfo, base: Int, noise: Int = 0, bright: [(Int, Int)] = [],
    peakCode: Int = 940, bitDepth: Int = 10
  ) -> VideoFrame {
    VideoFrame(
      planar420Width: width, height: height, bitDepth: bitDepth, color: color, time: 0, duration: 0.04,
      pixelFormatName: bitDepth > 8 ? "yuv420p10le" : "yuv420p"
    ) { y, cb, cr in
      var seed: UInt32 = 12345
      func next(_ noise: Int) -> Int {
        seed = seed &* 1_664_525 &+ 1_013_904_223
        return noise == 0 ? 0 : Int(seed >> 8) % (2 * noise + 1) - noise
      }
      let neutral = 1 << (bitDepth - 1)
      let (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
      func put(_ p: UnsafeMutableRawPointer, _ i: Int, _ v: Int) {
        let v = min(max(v, 0), (1 << bitDepth) - 1)
        if bitDepth > 8 {
          p.storeBytes(of: UInt16(v), toByteOffset: i * 2, as: UInt16.self)
        } else {
          p.storeBytes(of: UInt8(v), toByteOffset: i, as: UInt8.self)
        }
      }
      for i in 0..<(width * height) { put(y, i, base + next(noise)) }
      for i in 0..<(cw * ch) {
        put(cb, i, neutral + next(noise / 4))
        put(cr, i, neutral + next(noise / 4))
      }
      for (bx, by) in bright {
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] { put(y, (by + dy) * width + bx + dx, peakCode) }
        put(cb, (by / 2) * cw + bx / 2, neutral)
        put(cr, (by / 2) * cw + bx / 2, neutral)
      }
    }
  }

  /// The light of a neutral 10-bit limited-range luma code in nits, straight from the transfer function.
  static func nits(code: Int, params: ToneMapParams) -> Double {
    let signal = (Double(code) - 64) / 876
    let light = HDRToSDR.linearise(rgbSignal: SIMD3(repeating: signal), params: params)
    return light.max()
  }

  func testAFlatPictureMeasuresItsOwnLight() throws {
    for (color, code) in [(Self.hdr10, 700), (Self.hdr10, 300), (Self.hlg, 800)] {
      let params = ToneMapParams(color: color, metadata: HDRMetadata())!
      let frame = Self.picture(width: 640, height: 360, color: color, base: code)
      let light = try XCTUnwrap(FrameLight.measure(frame, params: params))
      let expected = Self.nits(code: code, params: params)
      XCTAssertEqual(light.peak, expected, accuracy: expected * 1e-3, "\(color.transfer) code \(code)")
      XCTAssertEqual(light.average, expected, accuracy: expected * 1e-3, "\(color.transfer) code \(code)")
    }
  }

  func testTheBrightestSpotOnTheGridIsThePeakAndBarelyMovesTheMean() throws {
    let params = ToneMapParams(color: Self.hdr10, metadata: HDRMetadata())!
    // 3840x2160: the grid is every 6th chroma sample, so (1200, 600) in luma (600, 300 in chroma) is on it.
    let frame = Self.picture(width: 3840, height: 2160, color: Self.hdr10, base: 400, bright: [(1200, 600)])
    let light = try XCTUnwrap(FrameLight.measure(frame, params: params))
    let peak = Self.nits(code: 940, params: params)
    XCTAssertEqual(light.peak, peak, accuracy: peak * 1e-3)
    let grey = Self.nits(code: 400, params: params)
    XCTAssertEqual(light.average, grey, accuracy: grey * 1e-3)
  }

  /// The AVX2 path (four points at a time) and the one-point loop give the same doubles, on busy pictures of every
  /// kind: PQ and HLG, 10 and 8 bits, a width the four-point step does not divide.
  func testTheWideMeasurementIsTheOneAtATimeMeasurementExactly() throws {
    for (color, bits, width) in [
      (Self.hdr10, 10, 1920), (Self.hdr10, 10, 1366), (Self.hlg, 10, 1280),
      (Self.hdr10, 8, 998),
    ] {
      let params = ToneMapParams(color: color, metadata: HDRMetadata())!
      let frame = Self.picture(
        width: width, height: 720, color: color, base: bits == 10 ? 500 : 120, noise: bits == 10 ? 200 : 50,
        bitDepth: bits)
      let wide = try XCTUnwrap(FrameLight.measure(frame, params: params, portable: false))
      let one = try XCTUnwrap(FrameLight.measure(frame, params: params, portable: true))
      XCTAssertEqual(wide.peak.bitPattern, one.peak.bitPattern, "\(color.transfer) \(bits)-bit \(width)")
      XCTAssertEqual(wide.average.bitPattern, one.average.bitPattern, "\(color.transfer) \(bits)-bit \(width)")
      XCTAssertLessThan(wide.peak, params.contentPeak, "a picture that clips says nothing of the peak")
    }
  }
}
