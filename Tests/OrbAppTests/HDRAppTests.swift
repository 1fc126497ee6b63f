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

  /// White (SDR 100%) and grey (0x76) written at 203-nit reference white in a 1000-nit master. With the peak
  /// measured (the default), the picture is no brighter than SDR white, so it is hardly compressed: white at 251 and
  /// grey at 110, where libplacebo puts them. From the metadata's peak (`--hdr-peak-detect=no`), BT.2390 from 1000
  /// nits with black points brings 203 nits to 134.65 nits (code 212) and the grey to 112.
  func testWhiteAndMidGreyPatchesLandOnTheirSDRValues() throws {
    let clip = try Self.hdrClip(
      "hdr10-white-grey.mkv",
      source: "color=c=white:s=320x240:r=24,format=rgb24[w];color=c=0x767676:s=320x240:r=24,format=rgb24[g];"
        + "[w][g]hstack")
    let image = try frame(["--frame-at", "0", clip])
    XCTAssertEqual(image.width, 640)
    assertPixel(image, x: 160, y: 120, approximately: RGB(r: 251, g: 251, b: 251), tolerance: 3, "white, peak measured")
    assertPixel(image, x: 480, y: 120, approximately: RGB(r: 110, g: 110, b: 110), tolerance: 3, "grey, peak measured")
    let fixed = try frame(["--frame-at", "0", "--hdr-peak-detect=no", clip])
    assertPixel(fixed, x: 160, y: 120, approximately: RGB(r: 212, g: 212, b: 212), tolerance: 3, "white, 1000-nit peak")
    assertPixel(fixed, x: 480, y: 120, approximately: RGB(r: 112, g: 112, b: 112), tolerance: 3, "grey, 1000-nit peak")
    // Clipping instead of the curve puts white at full scale: the option reaches the shader.
    let clipped = try frame(["--frame-at", "0", "--hdr-peak-detect=no", "--tone-mapping", "clip", clip])
    assertPixel(clipped, x: 160, y: 120, approximately: .white, tolerance: 6, "white with --tone-mapping clip")
    // A brighter display leaves more headroom: white is darker relative to a 400-nit peak.
    let bright = try frame(["--frame-at", "0", "--target-peak", "400", clip])
    XCTAssertLessThan(bright.pixel(x: 160, y: 120).g, 212, "white at --target-peak 400")
  }
}
