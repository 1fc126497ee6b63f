import COrbPixels
import Foundation
import OrbTestSupport
import XCTest

@testable import OrbDecode
@testable import OrbRender

/// HDR frames through the GPU: what the shader draws equals the Swift reference (HDRToSDR) within 1/255.
final class HDRRenderTests: XCTestCase {
  /// The source signal of the pixel of `frame` at (x, y): its 10-bit codes through YUVMatrix.
  static func signal(_ frame: VideoFrame, x: Int, y: Int) -> SIMD3<Double> {
    func code(_ plane: Int, _ px: Int, _ py: Int) -> Double {
      let p = frame.planes[plane]
      let word = p.base.load(fromByteOffset: py * p.stride + px * 2, as: UInt16.self)
      return Double(word) / Double((1 << frame.bitDepth) - 1)
    }
    let m = YUVMatrix(matrix: frame.color.matrix, range: frame.color.range, bitDepth: frame.bitDepth)
    return m.apply(y: code(0, x, y), cb: code(1, x / 2, y / 2), cr: code(2, x / 2, y / 2))
      .clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 1))
  }

  static func params(_ frame: VideoFrame, _ toneMapping: ToneMapping) -> ToneMapParams {
    ToneMapParams(
      color: frame.color, metadata: frame.hdr, curve: toneMapping.curve, targetPeak: toneMapping.targetPeak)!
  }

  static func rgb8(_ v: SIMD3<Double>) -> RGB {
    let out = v * 255
    return RGB(r: Int(out.x.rounded()), g: Int(out.y.rounded()), b: Int(out.z.rounded()))
  }

  /// The Swift reference of what the renderer draws: HDRTable over HDRToSDR (the same grid, the same interpolation).
  static func reference(_ frame: VideoFrame, x: Int, y: Int, toneMapping: ToneMapping) -> RGB {
    rgb8(HDRTable(params: params(frame, toneMapping)).map(rgbSignal: signal(frame, x: x, y: y)))
  }

  /// Patch centres of the pattern at `size`: where a 2x2 chroma block and its neighbours are one colour.
  private func assertMatchesReference(_ url: String, points: [(Int, Int)], curve: ToneMapCurve = .bt2390) throws {
    let source = try TestPatternSource(url: url + "?size=1280x720")
    let frame = try XCTUnwrap(source.nextFrame())
    let renderer = try Renderer()
    let target = try renderer.makeTarget(width: 1280, height: 720, readable: true)
    let toneMapping = ToneMapping(curve: curve)
    try renderer.render(frame, into: target, toneMapping: toneMapping)
    let pixels = Array(target.pixels!)
    for (x, y) in points {
      let p = (y * 1280 + x) * 4
      let gpu = RGB(r: Int(pixels[p]), g: Int(pixels[p + 1]), b: Int(pixels[p + 2]))
      let swift = Self.reference(frame, x: x, y: y, toneMapping: toneMapping)
      XCTAssertLessThanOrEqual(
        gpu.distance(to: swift), 1, "\(url) \(curve) at (\(x), \(y)): GPU \(gpu), Swift \(swift)")
    }
  }

  /// Where there is no GPU, PQ and HLG are tone-mapped on the CPU (`FrameDrawer` with no device, `CPUToneMapper`):
  /// once the full table is made, every patch of the patterns comes out as the shader draws it, within 2 codes, for
  /// every curve; the letterbox stays black. The swscale scaling and the shader's sampling may part by more only at
  /// the edges between patches. The stream's first picture, drawn with the quick 25³ table while the full one is
  /// made, is within 2 codes on nine pixels in ten.
  func testTheCPUToneMapsAsTheShaderDoes() throws {
    let renderer = try Renderer()
    for url in ["test://hdr10-ramp", "test://hdr10-bars", "test://hlg-bars"] {
      let source = try TestPatternSource(url: url + "?size=1280x720")
      let frame = try XCTUnwrap(source.nextFrame())
      for curve in ToneMapCurve.allCases {
        let toneMapping = ToneMapping(curve: curve)
        let drawer = try FrameDrawer(device: .whenNeeded, cpuConversion: true, memoryPixelOrder: .rgba)
        XCTAssertTrue(drawer.convertsOnCPU(frame, toneMapping: toneMapping))
        // Pillarboxed, so the letterbox is drawn too.
        let cpu = try drawer.makeTarget(width: 1440, height: 720, exportable: false, readable: true)
        let gpu = try renderer.makeTarget(width: 1440, height: 720, readable: true)
        try renderer.render(frame, into: gpu, toneMapping: toneMapping)
        let b = Array(gpu.pixels!)
        func far(_ a: [UInt8]) -> Int {
          stride(from: 0, to: a.count, by: 4).count { i in (0..<3).contains { abs(Int(a[i + $0]) - Int(b[i + $0])) > 2 }
          }
        }
        try drawer.render(frame, into: cpu, toneMapping: toneMapping)
        let quick = far(Array(cpu.pixels!))
        XCTAssertLessThan(quick, b.count / 4 / 10, "\(url) \(curve), quick table: \(quick) pixels more than 2 apart")
        drawer.finishTable()
        try drawer.render(frame, into: cpu, toneMapping: toneMapping)
        let a = Array(cpu.pixels!)
        XCTAssertLessThan(far(a), a.count / 4 / 100, "\(url) \(curve): \(far(a)) pixels more than 2 codes apart")
        XCTAssertEqual(Array(a[0..<4]), [0, 0, 0, 255], "\(url): the letterbox is opaque black")
        XCTAssertEqual(drawer.curvePeak ?? 0, renderer.curvePeak ?? -1, accuracy: 1e-9, "\(url): the same peak")
        XCTAssertEqual(drawer.deviceName, "none yet (swscale on the CPU)", "no Vulkan device was made")
      }
    }
  }

  /// A stream's first picture can be drawn ahead, on another thread, before the ring that shows it exists (while the
  /// window starts): the ring's first target of that size then already holds the very picture the drawer would have
  /// drawn there, and drawing that picture into it, or into another target, gives it again (copied); a picture drawn
  /// ahead at another size, or another picture, is drawn anew. HDR10 (tone-mapped on the CPU) and SDR alike.
  func testAPictureDrawnAheadIsThePictureTheDrawerWouldHaveDrawn() throws {
    let hdr = try XCTUnwrap(TestPatternSource(url: "test://hdr10-bars?size=640x360").nextFrame())
    let sdr = try XCTUnwrap(TestPatternSource(url: "test://bars?size=640x360").nextFrame())
    let toneMapping = ToneMapping()
    func drawer() throws -> FrameDrawer {
      try FrameDrawer(device: .whenNeeded, cpuConversion: true, memoryPixelOrder: .bgra)
    }
    func target(_ drawer: FrameDrawer, _ width: Int = 640, _ height: Int = 360) throws -> RenderTarget {
      try drawer.makeTarget(width: width, height: height, exportable: false, readable: true)
    }
    func pixels(_ target: RenderTarget) throws -> [UInt8] { Array(try XCTUnwrap(target.pixels)) }
    func drawn(_ frame: VideoFrame) throws -> [UInt8] {
      let own = try drawer()
      let into = try target(own)
      try own.render(frame, into: into, toneMapping: toneMapping)
      return try pixels(into)
    }
    for frame in [hdr, sdr] {
      let name = frame === hdr ? "HDR10" : "SDR"
      let own = try drawn(frame)
      XCTAssertNotEqual(Set(own).count, 1, "\(name): a picture, not a flat fill")

      let ahead = try drawer()
      ahead.drawAhead(frame, size: (640, 360), toneMapping: toneMapping)
      XCTAssertTrue(ahead.hasPictureAhead, name)
      let first = try target(ahead)
      XCTAssertEqual(try pixels(first), own, "\(name): the ring's first target holds the picture before it is drawn")
      let second = try target(ahead)
      XCTAssertEqual(Set(try pixels(second)), [0], "\(name): a target after it is a new one")
      try ahead.render(frame, into: first, toneMapping: toneMapping)
      XCTAssertEqual(try pixels(first), own, name)
      XCTAssertFalse(ahead.hasPictureAhead, "\(name): let go once drawn")

      let copied = try drawer()
      copied.drawAhead(frame, size: (640, 360), toneMapping: toneMapping)
      let elsewhere = try target(copied, 640, 360)
      let other = try target(copied, 640, 360)
      try copied.render(frame, into: other, toneMapping: toneMapping)
      XCTAssertEqual(try pixels(other), own, "\(name): copied into another target")
      _ = elsewhere

      let resized = try drawer()
      resized.drawAhead(frame, size: (320, 180), toneMapping: toneMapping)
      let full = try target(resized)
      XCTAssertEqual(Set(try pixels(full)), [0], "\(name): a target of another size is a new one")
      try resized.render(frame, into: full, toneMapping: toneMapping)
      XCTAssertEqual(try pixels(full), own, "\(name): drawn anew at the window's size")

      let unsized = try drawer()
      unsized.drawAhead(frame, size: nil, toneMapping: toneMapping)
      XCTAssertFalse(unsized.hasPictureAhead, "\(name): no size, no picture (only the HDR table)")
      let plain = try target(unsized)
      try unsized.render(frame, into: plain, toneMapping: toneMapping)
      XCTAssertEqual(try pixels(plain), own, name)
    }
    // The picture drawn ahead is only ever the first one drawn: another picture in its target is that picture.
    let ahead = try drawer()
    ahead.drawAhead(hdr, size: (640, 360), toneMapping: toneMapping)
    let first = try target(ahead)
    try ahead.render(sdr, into: first, toneMapping: toneMapping)
    XCTAssertEqual(try pixels(first), try drawn(sdr))
    XCTAssertFalse(ahead.hasPictureAhead)
    XCTAssertNil(ahead.curvePeak, "an SDR picture has no tone-mapping peak")
  }

  /// The CPU tone mapper's rows come out the same, byte for byte, whether the CPU runs them eight pixels at a time
  /// (AVX2) or one at a time (any other CPU): on noise, over the table's edges (samples of 0 and 65535, which clamp),
  /// for row lengths that leave 1 to 7 pixels after the last eight, in both byte orders. Without AVX2 both are the
  /// one-at-a-time loop.
  func testTheWideToneMappingRowsAreTheOneAtATimeRowsByteForByte() {
    var rng = SplitMix64(seed: "tone-map-rows")
    let size = 64
    let grid = (0..<size * size * size).map { _ in
      let code = { Double(rng.next() % 25_501) / 100 }  // 0...255
      return orb_table_point(code(), code(), code())
    }
    let width = 1283
    func plane() -> [UInt16] {
      (0..<width).map { i in i % 37 == 0 ? 0 : i % 41 == 0 ? 65535 : UInt16(truncatingIfNeeded: rng.next()) }
    }
    // BT.2020 10-bit limited range in grid units, as `CPUToneMapper` gives it, and a slightly larger one that clamps.
    let m = YUVMatrix(matrix: .bt2020nc, range: .limited, bitDepth: 10)
    let full = Double(1023 << 6)
    for (stretch, bgra) in [(1.0, false), (1.3, true)] {
      let matrix = m.rows.flatMap { r in
        [r.x, r.y, r.z].map { Float($0 * 63 * stretch / full) } + [Float(r.w * 63)]
      }
      let dither = (0..<8).map { Float(OrderedDither.offset(x: $0, y: 3)) + 0.5 }
      let (y, cb, cr) = (plane(), plane(), plane())
      for count in [1, 7, 8, 9, 15, 16, 1283] {
        var wide = [UInt32](repeating: 0, count: count)
        var portable = wide
        orb_tone_map_row(y, cb, cr, Int32(count), matrix, grid, Int32(size), dither, bgra ? 1 : 0, &wide)
        orb_tone_map_row_portable(y, cb, cr, Int32(count), matrix, grid, Int32(size), dither, bgra ? 1 : 0, &portable)
        let first = wide.indices.first { wide[$0] != portable[$0] }
        XCTAssertNil(first, "\(count) pixels, stretch \(stretch): pixel \(first ?? 0) differs")
        XCTAssertTrue(wide.allSatisfy { $0 >> 24 == 0xFF }, "opaque")
      }
    }
  }

  func testPQRampMatchesTheSwiftReference() throws {
    let steps = HDRTestPattern.rampNits.count
    let points = (0..<steps).map { i in (Int((Double(i) + 0.5) * 1280 / Double(steps)), 200) }
    for curve in ToneMapCurve.allCases {
      try assertMatchesReference("test://hdr10-ramp", points: points, curve: curve)
    }
  }

  func testPQBarsMatchTheSwiftReference() throws {
    // 40% grey, the seven 75% bars, the 100% row, the signal ramp.
    let bar = (1280 - 2 * 160) / 7
    let bars = (0..<7).map { i in (160 + bar * i + bar / 2, 200) }
    let full = (0..<7).map { i in (160 + bar * i + bar / 2, 450) }
    let ramp = (0...10).map { i in (Int((Double(i) + 0.5) * 1280 / 11), 650) }
    try assertMatchesReference("test://hdr10-bars", points: [(80, 200)] + bars + full + ramp)
  }

  /// What the table costs in accuracy against the exact math (`HDRToSDR`), on every patch of the PQ patterns: greys
  /// stay within 2 codes; saturated colours that the gamut mapping bends are within 12; on average under half a code.
  func testTheTableStaysCloseToTheExactMath() throws {
    for url in ["test://hdr10-ramp", "test://hdr10-bars"] {
      let source = try TestPatternSource(url: url + "?size=1280x720")
      let frame = try XCTUnwrap(source.nextFrame())
      for curve in ToneMapCurve.allCases where curve != .clip {
        let params = Self.params(frame, ToneMapping(curve: curve))
        let table = HDRTable(params: params)
        var total = 0
        var count = 0
        for y in stride(from: 40, to: 720, by: 80) {
          for x in stride(from: 20, to: 1280, by: 40) {
            let signal = Self.signal(frame, x: x, y: y)
            let exact = Self.rgb8(HDRToSDR.map(rgbSignal: signal, params: params))
            let tabled = Self.rgb8(table.map(rgbSignal: signal))
            let d = exact.distance(to: tabled)
            let grey = abs(signal.x - signal.y) < 1e-3 && abs(signal.y - signal.z) < 1e-3
            XCTAssertLessThanOrEqual(
              d, grey ? 2 : 12, "\(url) \(curve) at (\(x), \(y)): exact \(exact), table \(tabled)")
            total += d
            count += 1
          }
        }
        XCTAssertLessThan(Double(total) / Double(count), 0.5, "\(url) \(curve): mean difference")
      }
    }
  }

  func testHLGBarsMatchTheSwiftReference() throws {
    let bar = (1280 - 2 * 160) / 7
    let bars = (0..<7).map { i in (160 + bar * i + bar / 2, 200) }
    try assertMatchesReference("test://hlg-bars", points: [(80, 200)] + bars)
  }
}
