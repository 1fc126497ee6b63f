import Foundation
import OrbTestSupport
import XCTest

/// HDR10 through the whole player: probe, tone-mapped frames, and the libplacebo reference.
final class HDRAppTests: XCTestCase {
  static let x265HDR10 =
    "hdr10=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:"
    + "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400:"
    + "log-level=error"
  /// SDR to PQ with SDR white at 203 nits (BT.2408).
  static let toPQ =
    "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le"

  static func hdrClip(_ name: String, source: String) throws -> String {
    try TestMedia.path(
      name,
      [
        "-f", "lavfi", "-i", source, "-frames:v", "12", "-vf", toPQ, "-c:v", "libx265", "-preset", "ultrafast",
        "-x265-params", x265HDR10,
      ])
  }

  private func frame(_ args: [String]) throws -> RGBImage {
    let png = NSTemporaryDirectory() + "orb-hdr-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let r = Orb.run(["--output", png] + args, timeout: 120)
    XCTAssertEqual(r.status, 0, r.stderr)
    return try RGBImage(png: png)
  }

  func testHDR10ClipProbesWithItsMetadata() throws {
    let clip = try Self.hdrClip("hdr10-testsrc2.mkv", source: "testsrc2=size=640x360:rate=24")
    let r = Orb.run(["--probe", clip])
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let video = try XCTUnwrap((json["video"] as? [[String: Any]])?.first)
    XCTAssertEqual(video["color_transfer"] as? String, "smpte2084")
    XCTAssertEqual(video["bit_depth"] as? Int, 10)
    XCTAssertEqual(video["max_cll"] as? Int, 1000)
    XCTAssertEqual(video["max_fall"] as? Int, 400)
    let mastering = try XCTUnwrap(video["mastering"] as? [String: Any])
    XCTAssertEqual(mastering["max_luminance"] as? Double ?? 0, 1000, accuracy: 0.01)
  }

  /// White (SDR 100%) and 18% grey written at 203-nit reference white come out where the Swift reference of
  /// BT.2390 (source peak = MaxCLL 1000 nits, target 203 nits) puts them: white at 215, not clipped; grey at the knee
  /// (36 nits), at the SDR code it started from.
  func testWhiteAndMidGreyPatchesLandOnTheirSDRValues() throws {
    let clip = try Self.hdrClip(
      "hdr10-white-grey.mkv",
      source: "color=c=white:s=320x240:r=24,format=rgb24[w];color=c=0x767676:s=320x240:r=24,format=rgb24[g];"
        + "[w][g]hstack")
    let image = try frame(["--frame-at", "0", clip])
    XCTAssertEqual(image.width, 640)
    // 203 nits through BT.2390 from 1000 nits: 134.2 nits of 203 → 0.661^(1/2.4) → code 215.
    assertPixel(image, x: 160, y: 120, approximately: RGB(r: 215, g: 215, b: 215), tolerance: 3, "white patch")
    // 0x76 = 118 in SDR is about 37 nits at 203-nit white, at the knee (36 nits): it stays at 118.
    assertPixel(image, x: 480, y: 120, approximately: RGB(r: 118, g: 118, b: 118), tolerance: 3, "grey patch")
    // Clipping instead of the curve puts white at full scale: the option reaches the shader. (The table interpolates
    // across clip's corner, which sits right at 203 nits, so it lands a few codes short: HDRTable's documented cost.)
    let clipped = try frame(["--frame-at", "0", "--tone-mapping", "clip", clip])
    assertPixel(clipped, x: 160, y: 120, approximately: .white, tolerance: 6, "white with --tone-mapping clip")
    // A brighter display leaves more headroom: white is darker relative to a 400-nit peak.
    let bright = try frame(["--frame-at", "0", "--target-peak", "400", clip])
    XCTAssertLessThan(bright.pixel(x: 160, y: 120).g, 215, "white at --target-peak 400")
  }

  /// Mean CIEDE2000 against ffmpeg's libplacebo filter (tonemapping=bt.2390, BT.709 output) on the same frame.
  func testMatchesTheLibplaceboReference() throws {
    let clip = try Self.hdrClip("hdr10-testsrc2.mkv", source: "testsrc2=size=640x360:rate=24")
    let reference = NSTemporaryDirectory() + "orb-placebo-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: reference) }
    let r = Tool.run(
      "ffmpeg",
      [
        "-v", "error", "-init_hw_device", "vulkan=vk:0", "-filter_hw_device", "vk", "-i", clip, "-frames:v", "1",
        "-vf",
        "hwupload,libplacebo=tonemapping=bt.2390:colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv:"
          + "format=yuv420p,hwdownload,format=yuv420p", "-update", "1", "-y", reference,
      ], timeout: 180)
    try Requirement.require(r.succeeded, "ffmpeg's libplacebo filter did not run (\(r.stderr))")
    let theirs = try RGBImage(png: reference)
    let ours = try frame(["--frame-at", "0", clip])
    XCTAssertEqual(ours.width, theirs.width)
    let mean = CIEDE2000.mean(ours, theirs, step: 2)
    print("mean CIEDE2000 against libplacebo bt.2390: \(mean)")
    XCTAssertLessThanOrEqual(mean, 3, "mean CIEDE2000 \(mean)")
  }
}
