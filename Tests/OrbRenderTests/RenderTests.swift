import Foundation
import OrbTestSupport
import XCTest

@testable import OrbDecode
@testable import OrbRender

/// The renderer on the Vulkan device this machine has (lavapipe here): pixels of drawn frames.
final class RenderTests: XCTestCase {
  /// Decodes the first frame of `path` and draws it at `width`x`height` (nil: natural size).
  static func draw(_ path: String, size: (Int, Int)? = nil, cpu: Bool = false) throws
    -> (pixels: [UInt8], width: Int, height: Int)
  {
    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    guard let frame = pipeline.nextFrame() else { throw TestMediaError("no frame in \(path)") }
    let (w, h) =
      size
      ?? VideoGeometry.naturalSize(
        width: frame.width, height: frame.height, sampleAspect: frame.sampleAspect, rotation: frame.rotation)
    return try draw(frame, width: w, height: h, cpu: cpu)
  }

  /// Draws `frame` (nil: nothing) at `width`x`height` and reads the pixels back; `cpu`: with swscale where the
  /// renderer would on a CPU device (`Renderer.convertsOnCPU`).
  static func draw(_ frame: VideoFrame?, width: Int, height: Int, cpu: Bool = false) throws
    -> (pixels: [UInt8], width: Int, height: Int)
  {
    let renderer = try Renderer()
    renderer.convertsOnCPU = cpu
    let target = try renderer.makeTarget(width: width, height: height, readable: true)
    try renderer.render(frame, into: target)
    XCTAssertEqual(renderer.drewOnCPU, cpu && frame != nil, "drawn with swscale")
    return (Array(target.pixels!), width, height)
  }

  /// Each of `Clips.bars` at its bar's centre, within ±3, on rows `rows` of a 640x240 drawing.
  static func assertShowsBars(
    _ drawn: (pixels: [UInt8], width: Int, height: Int), rows: [Int] = [60, 120, 180], _ label: String = "",
    file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(drawn.width, 640, file: file, line: line)
    XCTAssertEqual(drawn.height, 240, file: file, line: line)
    for (i, expected) in Clips.bars.enumerated() {
      for y in rows {
        let got = pixel(drawn, 40 + 80 * i, y)
        XCTAssertLessThanOrEqual(
          got.distance(to: expected), 3, "\(label) bar \(i) at y \(y): \(got), expected \(expected)", file: file,
          line: line)
      }
    }
  }

  static func pixel(_ drawn: (pixels: [UInt8], width: Int, height: Int), _ x: Int, _ y: Int) -> RGB {
    let p = (y * drawn.width + x) * 4
    return RGB(r: Int(drawn.pixels[p]), g: Int(drawn.pixels[p + 1]), b: Int(drawn.pixels[p + 2]))
  }

  private func assertBars(
    matrix: String, range: String, tag: String, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let drawn = try Self.draw(Clips.bars(matrix: matrix, range: range, tag: tag))
    Self.assertShowsBars(drawn, file: file, line: line)
  }

  func testBT709LimitedRangeBars() throws {
    try assertBars(matrix: "bt709", range: "tv", tag: "bt709")
  }

  func testBT601LimitedRangeBars() throws {
    try assertBars(matrix: "bt601", range: "tv", tag: "smpte170m")
  }

  func testBT709FullRangeBars() throws {
    try assertBars(matrix: "bt709", range: "pc", tag: "bt709")
  }

  func testAnamorphicPictureIsWidenedAndLetterboxed() throws {
    let clip = try Clips.halves("halves-sar2.mp4", filters: ",setsar=2")
    let natural = try Self.draw(clip)
    XCTAssertEqual(natural.width, 640)
    XCTAssertEqual(natural.height, 240)
    Self.assertLetterboxedHalves(try Self.draw(clip, size: (640, 480)))
  }

  /// The red and blue halves of an 8:3 picture in a 4:3 target: 120 px bars above and below.
  static func assertLetterboxedHalves(
    _ boxed: (pixels: [UInt8], width: Int, height: Int), file: StaticString = #filePath, line: UInt = #line
  ) {
    func near(_ x: Int, _ y: Int, _ colour: RGB, _ what: String) {
      XCTAssertLessThanOrEqual(pixel(boxed, x, y).distance(to: colour), 3, what, file: file, line: line)
    }
    near(320, 40, .black, "bar above")
    near(320, 440, .black, "bar below")
    near(160, 240, .red, "left half")
    near(480, 240, .blue, "right half")
    near(160, 116, .black, "bar ends at row 120")
    near(160, 124, .red, "picture starts at row 120")
    near(160, 356, .red, "picture ends at row 360")
    near(160, 364, .black, "bar starts at row 360")
  }

  func testRotatedPictureIsTurnedLikeFFmpegDoes() throws {
    let plain = try Clips.halves("halves.mp4")
    let rotated = try TestMedia.path(
      "halves-rot90.mp4", ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
    let drawn = try Self.draw(rotated)
    XCTAssertEqual(drawn.width, 240)
    XCTAssertEqual(drawn.height, 320)
    // ffmpeg's own autorotation is the reference for which way is up.
    let reference = NSTemporaryDirectory() + "orb-rot-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: reference) }
    XCTAssertTrue(Tool.run("ffmpeg", ["-v", "error", "-y", "-i", rotated, "-frames:v", "1", reference]).succeeded)
    let ref = try RGBImage(png: reference)
    XCTAssertEqual(ref.width, 240)
    for (x, y) in [(120, 60), (120, 260), (30, 30), (210, 290)] {
      let got = Self.pixel(drawn, x, y)
      XCTAssertLessThanOrEqual(got.distance(to: ref.pixel(x: x, y: y)), 4, "at (\(x), \(y)) got \(got)")
    }
    // `rotate=90` written by ffmpeg 5.1 is a counter-clockwise quarter turn (270° clockwise): the right half
    // (blue) ends up on top.
    XCTAssertLessThanOrEqual(Self.pixel(drawn, 120, 60).distance(to: .blue), 3)
    XCTAssertLessThanOrEqual(Self.pixel(drawn, 120, 260).distance(to: .red), 3)
  }

  func testTestPatternBarsAreSeventyFivePercentColours() throws {
    let pattern = try TestPatternSource(url: "test://bars?size=640x360")
    let drawn = try Self.draw(try XCTUnwrap(pattern.nextFrame()), width: 640, height: 360)
    for (i, c) in TestPatternSource.barColors.enumerated() {
      let got = Self.pixel(drawn, 40 + 80 * i, 100)
      XCTAssertLessThanOrEqual(got.distance(to: RGB(r: c.0, g: c.1, b: c.2)), 3, "bar \(i): \(got)")
    }
    XCTAssertEqual(TestPatternSource.timeCode(frame: 30 * 61 + 7, rate: 30), "00:01:01:07")
  }

  func testBlackWhenNoFrame() throws {
    XCTAssertEqual(Self.pixel(try Self.draw(nil, width: 64, height: 32), 10, 10), .black)
  }
}

/// Sources that are not 4:2:0: swscale turns them into the 4:2:0 the renderer takes, keeping matrix, range and
/// depth; the bars must come out as they went in.
final class OtherLayoutTests: XCTestCase {
  private func barsClip(_ name: String, pixelFormat: String, codec: [String]) throws -> String {
    let convert = pixelFormat.hasPrefix("yuv") ? "scale=out_color_matrix=bt709:out_range=tv," : ""
    return try TestMedia.path(
      name,
      ["-filter_complex", Clips.barsGraph(then: "\(convert)format=\(pixelFormat)"), "-frames:v", "3"] + codec
        + ["-colorspace", "bt709", "-color_range", "tv"])
  }

  private func assertBars(_ clip: String, file: StaticString = #filePath, line: UInt = #line) throws {
    RenderTests.assertShowsBars(try RenderTests.draw(clip), rows: [120], clip, file: file, line: line)
  }

  func testFourFourFourIsConverted() throws {
    try assertBars(
      barsClip("bars-444.mkv", pixelFormat: "yuv444p", codec: ["-c:v", "libx264", "-qp", "0", "-preset", "ultrafast"]))
  }

  func testTenBitFourTwoTwoKeepsItsDepth() throws {
    let clip = try barsClip(
      "bars-422p10.mkv", pixelFormat: "yuv422p10le", codec: ["-c:v", "libx264", "-qp", "0", "-preset", "ultrafast"])
    let pipeline = try MediaPipeline(source: clip)
    defer { pipeline.close() }
    let frame = try XCTUnwrap(pipeline.nextFrame())
    XCTAssertEqual(frame.bitDepth, 10, "converted to 8 bits: \(frame.pixelFormatName)")
    try assertBars(clip)
  }

  func testRGBSourceIsConverted() throws {
    try assertBars(barsClip("bars-rgb.mkv", pixelFormat: "rgb24", codec: ["-c:v", "png"]))
  }
}

/// A failed Vulkan call is reported with the result's name, as the specification spells it.
final class VulkanErrorTests: XCTestCase {
  func testResultsAreNamed() {
    XCTAssertEqual(
      VulkanError(call: "vkAllocateMemory", result: -2).description,
      "vkAllocateMemory failed (VK_ERROR_OUT_OF_DEVICE_MEMORY)")
    XCTAssertEqual(
      VulkanError(call: "vkCreateDevice", result: -4).description, "vkCreateDevice failed (VK_ERROR_DEVICE_LOST)")
    XCTAssertEqual(VulkanError(call: "x", result: -99).description, "x failed (VkResult -99)")
  }
}

/// swscale on the CPU, what playback uses for SDR on a CPU Vulkan device (lavapipe): the pictures the shader draws.
final class CPUConversionTests: XCTestCase {
  /// The same bars, matrices and ranges through swscale: the colours the shader draws.
  func testCPUConversionDrawsTheBarsOfEachMatrixAndRange() throws {
    for (matrix, range, tag) in [("bt709", "tv", "bt709"), ("bt601", "tv", "smpte170m"), ("bt709", "pc", "bt709")] {
      let drawn = try RenderTests.draw(Clips.bars(matrix: matrix, range: range, tag: tag), cpu: true)
      RenderTests.assertShowsBars(drawn, "swscale \(matrix) \(range)")
    }
  }

  /// Fitted and letterboxed as the shader does it: black bars where the picture is not.
  func testCPUConversionLetterboxes() throws {
    RenderTests.assertLetterboxedHalves(
      try RenderTests.draw(try Clips.halves("halves-sar2.mp4", filters: ",setsar=2"), size: (640, 480), cpu: true))
  }

  /// A detailed picture scaled down (640x360 into 480x270) comes out of swscale as out of the shader, give or take
  /// the two-tap filters' phase and rounding: mean difference under 3 codes per channel (a wrong matrix, range or
  /// place is tens).
  func testCPUConversionMatchesTheShaderOnADetailedPicture() throws {
    let clip = try Clips.moving(seconds: 1)
    let shader = try RenderTests.draw(clip, size: (480, 270))
    let cpu = try RenderTests.draw(clip, size: (480, 270), cpu: true)
    var total = 0
    var count = 0
    for i in stride(from: 0, to: shader.pixels.count, by: 4) {
      for c in 0..<3 { total += abs(Int(shader.pixels[i + c]) - Int(cpu.pixels[i + c])) }
      count += 3
    }
    let mean = Double(total) / Double(count)
    XCTAssertLessThan(mean, 3, "mean difference \(mean) codes")
    XCTAssertEqual(cpu.pixels[3], 255, "opaque")
  }

  /// HDR stays on the shader path: tone mapping lives there.
  func testHDRIsNotConvertedOnTheCPU() throws {
    let pattern = try TestPatternSource(url: "test://hdr10-bars?size=320x180")
    let frame = try XCTUnwrap(pattern.nextFrame())
    let renderer = try Renderer()
    renderer.convertsOnCPU = true
    XCTAssertFalse(renderer.convertsOnCPU(frame, toneMapping: ToneMapping()))
    let sdr = try XCTUnwrap(try TestPatternSource(url: "test://bars?size=320x180").nextFrame())
    XCTAssertTrue(renderer.convertsOnCPU(sdr, toneMapping: ToneMapping()))
  }
}
