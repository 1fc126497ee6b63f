import Foundation
import OrbTestSupport
import XCTest

@testable import OrbDecode
@testable import OrbRender

/// shaders/colour.glsl mirrors the Swift colour science: it compiles as an include, holds the same constants, and,
/// compiled as C++ in single precision through a small GLSL shim, computes the same values on the CPU.
final class ColorScienceShaderTests: XCTestCase {
  /// The package root, from this file's place in it (Tests/OrbRenderTests/ColorScienceShaderTests.swift).
  private static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
  private static let shaderDirectory = packageRoot + "/shaders"
  private static let colourInclude = shaderDirectory + "/colour.glsl"

  private func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("orb-colour-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
    return dir
  }

  /// A fragment shader that includes colour.glsl and calls every function compiles with glslc, as the renderer's will.
  func testColourIncludeCompilesWithGlslc() throws {
    let dir = try temporaryDirectory()
    let shader = dir.appendingPathComponent("colour-check.frag")
    try Self.checkShader.write(to: shader, atomically: true, encoding: .utf8)
    let spirv = dir.appendingPathComponent("colour-check.spv").path
    let r = Tool.run(
      "glslc", ["-O", "--target-env=vulkan1.1", "-I", Self.shaderDirectory, "-o", spirv, shader.path], timeout: 60)
    XCTAssertEqual(r.status, 0, "glslc failed on shaders/colour.glsl:\n\(r.stderr)")
    XCTAssertTrue(FileManager.default.fileExists(atPath: spirv))
  }

  func testShaderConstantsMatchSwift() throws {
    let source = try String(contentsOfFile: Self.colourInclude, encoding: .utf8)
    let floats: [String: Double] = [
      "PQ_PEAK_NITS": PQTransfer.peakNits, "PQ_M1": PQTransfer.m1, "PQ_M2": PQTransfer.m2, "PQ_C1": PQTransfer.c1,
      "PQ_C2": PQTransfer.c2, "PQ_C3": PQTransfer.c3, "HLG_A": HLGTransfer.a, "HLG_B": HLGTransfer.b,
      "HLG_C": HLGTransfer.c, "HLG_REFERENCE_PEAK_NITS": HLGTransfer.referencePeakNits,
      "BT1886_GAMMA": BT1886Transfer.gamma, "BT2390_KNEE_OFFSET": ToneMapCurve.bt2390KneeOffset,
      "GAMUT_OVERSHOOT": GamutMapping.overshoot, "GAMUT_ANCHOR_CHROMA_WEIGHT": GamutMapping.anchorChromaWeight,
      "GAMUT_CLIP_HUE_TOLERANCE_DEGREES": GamutMapping.clipHueToleranceDegrees,
      "GAMUT_CLIP_CHROMA_FLOOR": GamutMapping.clipChromaFloor, "TONE_MAP_CROSSTALK": ToneMapParams.crosstalk,
      "TARGET_CONTRAST": ToneMapParams.targetContrast,
    ]
    for (name, value) in floats {
      let parsed = try XCTUnwrap(Self.numbers(in: source, after: "const float \(name) =").first, name)
      XCTAssertEqual(parsed, value, accuracy: 1e-9, name)
    }
    let desaturation = try XCTUnwrap(Self.numbers(in: source, after: "const float LUMA_DESATURATION =").first)
    XCTAssertEqual(desaturation, HDRToSDR.lumaDesaturation, accuracy: 1e-7)
    let ints: [String: Int32] = [
      "TONE_MAP_BT2390": ToneMapCurve.bt2390.shaderID, "TONE_MAP_HABLE": ToneMapCurve.hable.shaderID,
      "TONE_MAP_REINHARD": ToneMapCurve.reinhard.shaderID, "TONE_MAP_CLIP": ToneMapCurve.clip.shaderID,
      "TRANSFER_PQ": ToneMapParams.Transfer.pq.shaderID, "TRANSFER_HLG": ToneMapParams.Transfer.hlg.shaderID,
      "GAMUT_MAP_STEPS": Int32(GamutMapping.perceptualSteps),
    ]
    for (name, value) in ints {
      XCTAssertEqual(Self.numbers(in: source, after: "const int \(name) =").first, Double(value), name)
    }
    let vectors: [String: SIMD3<Double>] = [
      "HLG_LUMA": HLGTransfer.lumaCoefficients, "BT709_LUMA": HDRToSDR.outputLuma,
      "BT2020_LUMA": ColorPrimaries.bt2020.lumaCoefficients,
    ]
    for (name, value) in vectors {
      let parsed = Self.numbers(in: source, after: "const vec3 \(name) = vec3(")
      XCTAssertEqual(parsed.count, 3, name)
      for c in 0..<min(3, parsed.count) { XCTAssertEqual(parsed[c], value[c], accuracy: 1e-9, name) }
    }
    // mat3 takes columns.
    let matrices: [String: ColorMatrix] = [
      "OKLAB_BT709_TO_LMS": Oklab.bt709ToLMS, "OKLAB_LMS_TO_LAB": Oklab.lmsToLab,
      "OKLAB_LAB_TO_LMS": Oklab.labToLMS, "OKLAB_LMS_TO_BT709": Oklab.lmsToBT709,
      "BT2020_TO_BT709": GamutMapping.bt2020ToBT709,
      "BT2020_TO_LUMA_SPACE": ToneMapParams(primaries: .bt2020).lumaSpace.0,
      "LUMA_SPACE_TO_BT2020": ToneMapParams(primaries: .bt2020).lumaSpace.1,
      "BT709_TO_LUMA_SPACE": ToneMapParams(primaries: .bt709).lumaSpace.0,
      "LUMA_SPACE_TO_BT709": ToneMapParams(primaries: .bt709).lumaSpace.1,
    ]
    for (name, m) in matrices {
      let parsed = Self.numbers(in: source, after: "const mat3 \(name) = mat3(")
      XCTAssertEqual(parsed.count, 9, name)
      let columns = m.columns
      let expected = [columns.0, columns.1, columns.2].flatMap { [$0.x, $0.y, $0.z] }
      for (i, (a, b)) in zip(parsed, expected).enumerated() {
        XCTAssertEqual(a, b, accuracy: 1e-9, "\(name) column \(i / 3) row \(i % 3)")
      }
    }
  }

  /// colour.glsl compiled as C++ (float, as on the GPU) against the Swift reference (double), over the transfer
  /// functions, every curve, gamut mapping, the whole pipeline on a grid of PQ and HLG signals, and the dither.
  func testShaderFunctionsComputeWhatSwiftComputes() throws {
    let found = ["c++", "clang++", "g++"].lazy.compactMap({ Tool.find($0) }).first
    try Requirement.require(found != nil, "no C++ compiler to run colour.glsl on the CPU")
    let compiler = found!
    let dir = try temporaryDirectory()
    try Self.cppShim.write(to: dir.appendingPathComponent("glsl_shim.h"), atomically: true, encoding: .utf8)
    try Self.cppHarness.write(to: dir.appendingPathComponent("harness.cpp"), atomically: true, encoding: .utf8)
    let binary = dir.appendingPathComponent("harness").path
    let build = Tool.run(
      compiler,
      ["-std=c++17", "-O1", "-I", Self.shaderDirectory, "-I", dir.path, "-o", binary, dir.path + "/harness.cpp"],
      timeout: 120)
    XCTAssertEqual(build.status, 0, "shaders/colour.glsl does not compile as C++ through the shim:\n\(build.stderr)")
    guard build.succeeded else { return }
    let run = Tool.run(binary, [], timeout: 60)
    XCTAssertEqual(run.status, 0, run.stderr)

    var checked = 0
    var worstPipeline = 0.0
    var pipelineDifferences = [Double]()
    for line in run.stdout.split(separator: "\n") {
      let halves = line.split(separator: ":")
      guard halves.count == 2 else { continue }
      var input = halves[0].split(separator: " ").map(String.init)
      let name = input.removeFirst()
      let x = input.compactMap(Double.init)
      let gpu = halves[1].split(separator: " ").compactMap { Double($0) }
      func near(_ swift: Double, _ shader: Double, relative: Double, absolute: Double) {
        XCTAssertLessThanOrEqual(
          abs(swift - shader), max(absolute, relative * abs(swift)), "\(line): Swift says \(swift)")
      }
      switch name {
      case "pq_eotf": near(PQTransfer.eotf(x[0]), gpu[0], relative: 1e-4, absolute: 1e-4)
      case "pq_inv_eotf": near(PQTransfer.inverseEOTF(x[0]), gpu[0], relative: 1e-5, absolute: 1e-6)
      case "hlg_oetf": near(HLGTransfer.oetf(x[0]), gpu[0], relative: 1e-5, absolute: 1e-6)
      case "hlg_inverse_oetf": near(HLGTransfer.inverseOETF(x[0]), gpu[0], relative: 1e-5, absolute: 1e-6)
      case "hlg_system_gamma": near(HLGTransfer.systemGamma(peakNits: x[0]), gpu[0], relative: 1e-6, absolute: 1e-6)
      case "bt1886_eotf": near(BT1886Transfer.eotf(x[0]), gpu[0], relative: 1e-5, absolute: 1e-6)
      case "bt1886_inv_eotf": near(BT1886Transfer.inverseEOTF(x[0]), gpu[0], relative: 1e-5, absolute: 1e-6)
      case "srgb_eotf": near(SRGBTransfer.eotf(x[0]), gpu[0], relative: 1e-5, absolute: 1e-6)
      case "srgb_inv_eotf": near(SRGBTransfer.inverseEOTF(x[0]), gpu[0], relative: 1e-5, absolute: 1e-6)
      case "hlg_ootf":
        let swift = HLGTransfer.ootf(SIMD3(x[0], x[1], x[2]), peakNits: x[3])
        for c in 0..<3 { near(swift[c], gpu[c], relative: 1e-4, absolute: 1e-4) }
      case "tone_map":
        let curve = ToneMapCurve.allCases[Int(x[0])]
        near(curve.map(x[1], sourcePeak: x[2], targetPeak: x[3]), gpu[0], relative: 1e-4, absolute: 1e-3)
      case "tone_map_range":
        let curve = ToneMapCurve.allCases[Int(x[0])]
        let range = ToneRange(sourceBlack: 0.005, sourcePeak: x[2], targetBlack: x[3] / 1000, targetPeak: x[3])
        near(curve.map(x[1], range: range), gpu[0], relative: 1e-3, absolute: 1e-3)
      case "gamut_map":
        let swift = GamutMapping.perceptual(SIMD3(x[0], x[1], x[2]))
        for c in 0..<3 { near(swift[c], gpu[c], relative: 0, absolute: 2e-3) }
      case "gamut_desaturate":
        let swift = GamutMapping.desaturate(SIMD3(x[0], x[1], x[2]), luma: HDRToSDR.outputLuma)
        for c in 0..<3 { near(swift[c], gpu[c], relative: 0, absolute: 1e-5) }
      case "pipeline":
        let params = ToneMapParams(
          curve: ToneMapCurve.allCases[Int(x[1])], sourcePeak: x[5], targetPeak: x[6],
          transfer: x[0] == 0 ? .pq : .hlg, primaries: .bt2020)
        let swift = HDRToSDR.map(rgbSignal: SIMD3(x[2], x[3], x[4]), params: params)
        // Float against double; the worst case is a bright saturated colour whose boundary crossing is set by a
        // slowly changing channel (the gamut mapping is ill-conditioned there), about one 8-bit step.
        for c in 0..<3 {
          near(swift[c], gpu[c], relative: 0, absolute: 1.0 / 255)
          worstPipeline = max(worstPipeline, abs(swift[c] - gpu[c]))
          pipelineDifferences.append(abs(swift[c] - gpu[c]))
        }
      case "bayer8": XCTAssertEqual(OrderedDither.offset(x: Int(x[0]), y: Int(x[1])), gpu[0], "\(line)")
      default: XCTFail("unknown line \(line)")
      }
      checked += 1
    }
    XCTAssertGreaterThan(checked, 5000)
    var over = 0
    for d in pipelineDifferences where d > 0.25 / 255 { over += 1 }
    print(
      "colour.glsl vs Swift: \(checked) values; pipeline worst difference \(worstPipeline * 255) of an 8-bit step,"
        + " \(over) of \(pipelineDifferences.count) channels beyond a quarter step")
  }

  /// The numbers in `source` after `prefix`, up to the next ';'.
  private static func numbers(in source: String, after prefix: String) -> [Double] {
    guard let start = source.range(of: prefix) else { return [] }
    let rest = source[start.upperBound...]
    let body = rest[..<(rest.firstIndex(of: ";") ?? rest.endIndex)]
    let cleaned = body.replacingOccurrences(of: "vec3(", with: " ").replacingOccurrences(of: ")", with: " ")
    return cleaned.split(whereSeparator: { $0 == "," || $0.isWhitespace }).compactMap { Double($0) }
  }

  private static let checkShader = """
    #version 450
    #extension GL_GOOGLE_include_directive : require
    #include "colour.glsl"
    layout(location = 0) out vec4 outColor;
    layout(push_constant) uniform Params {
      vec4 signal;  // rgb, source peak
      ivec4 ids;    // curve, transfer
    } params;
    void main() {
      vec3 nits = colour_linearise(params.signal.rgb, params.ids.y, params.signal.w, 0.005);
      ToneParams p = ToneParams(params.ids.x, params.signal.w, params.signal.w, 0.005, 203.0, BT2020_TO_BT709,
                                BT2020_TO_LUMA_SPACE, LUMA_SPACE_TO_BT2020);
      vec3 sdr = hdr_to_sdr(nits, p);
      float sum = pq_eotf(0.5) + pq_inv_eotf(100.0) + hlg_oetf(0.5) + hlg_inverse_oetf(0.5) + hlg_system_gamma(400.0)
        + hlg_ootf(vec3(0.5), 1000.0).g + bt1886_eotf(0.5) + bt1886_inv_eotf(0.5) + srgb_eotf(0.5)
        + srgb_inv_eotf(0.5) + tone_map(TONE_MAP_HABLE, 500.0, 1000.0, 203.0) + tone_map_bt2390(500.0, 1000.0, 203.0)
        + tone_map_range(TONE_MAP_BT2390, 500.0, 0.005, 1000.0, 0.203, 203.0)
        + hable(1.0) + gamut_map(vec3(1.2, -0.1, 0.5)).r
        + gamut_desaturate(vec3(1.2, -0.1, 0.5), BT709_LUMA).r + pq_eotf(vec3(0.5)).r + hlg_oetf(vec3(0.1)).r
        + srgb_eotf(vec3(0.2)).r + srgb_inv_eotf(vec3(0.2)).r + bt1886_eotf(vec3(0.2)).r;
      outColor = vec4(dither8(sdr, gl_FragCoord.xy) + dither(vec3(sum) * 1e-9, gl_FragCoord.xy, 1023.0), 1.0);
    }
    """

  /// Just enough GLSL for colour.glsl to compile as C++ in single precision. Everything lives in namespace glsl so
  /// that the float overloads, not the C library's double ones, are found.
  private static let cppShim = #"""
    #include <cmath>
    #include <cstdint>
    namespace glsl {
    typedef uint32_t uint;
    struct bvec3 { bool x, y, z; };
    struct vec3 {
      float x, y, z;
      vec3() : x(0), y(0), z(0) {}
      explicit vec3(double s) : x(float(s)), y(float(s)), z(float(s)) {}
      vec3(double a, double b, double c) : x(float(a)), y(float(b)), z(float(c)) {}
      float &operator[](int i) { return i == 0 ? x : i == 1 ? y : z; }
    };
    struct vec2 { float x, y; vec2(double a, double b) : x(float(a)), y(float(b)) {} };
    struct uvec2 {
      uint x, y;
      explicit uvec2(vec2 v) : x(uint(v.x)), y(uint(v.y)) {}
      uvec2(uint a, uint b) : x(a), y(b) {}
    };
    struct mat3 { vec3 c[3]; mat3(vec3 a, vec3 b, vec3 d) : c{a, b, d} {} };
    #define ORB_VEC_OP(op) \
      inline vec3 operator op(vec3 a, vec3 b) { return vec3(a.x op b.x, a.y op b.y, a.z op b.z); } \
      inline vec3 operator op(vec3 a, float s) { return vec3(a.x op s, a.y op s, a.z op s); } \
      inline vec3 operator op(float s, vec3 a) { return vec3(s op a.x, s op a.y, s op a.z); }
    ORB_VEC_OP(+) ORB_VEC_OP(-) ORB_VEC_OP(*) ORB_VEC_OP(/)
    inline vec3 operator*(mat3 m, vec3 v) { return m.c[0] * v.x + m.c[1] * v.y + m.c[2] * v.z; }
    #define ORB_FN(name, fn) \
      inline float name(float a) { return fn(a); } \
      inline vec3 name(vec3 a) { return vec3(fn(a.x), fn(a.y), fn(a.z)); }
    ORB_FN(sqrt, sqrtf) ORB_FN(log, logf) ORB_FN(exp, expf) ORB_FN(log2, log2f) ORB_FN(abs, fabsf)
    inline float sign_of(float a) { return a > 0 ? 1.0f : (a < 0 ? -1.0f : 0.0f); }
    ORB_FN(sign, sign_of)
    inline float pow(float a, float b) { return powf(a, b); }
    inline vec3 pow(vec3 a, vec3 b) { return vec3(powf(a.x, b.x), powf(a.y, b.y), powf(a.z, b.z)); }
    inline float min(float a, float b) { return fminf(a, b); }
    inline float max(float a, float b) { return fmaxf(a, b); }
    inline vec3 max(vec3 a, float b) { return vec3(fmaxf(a.x, b), fmaxf(a.y, b), fmaxf(a.z, b)); }
    inline float clamp(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }
    inline vec3 clamp(vec3 v, float lo, float hi) { return vec3(clamp(v.x, lo, hi), clamp(v.y, lo, hi), clamp(v.z, lo, hi)); }
    inline float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
    inline bvec3 lessThanEqual(vec3 a, vec3 b) { return {a.x <= b.x, a.y <= b.y, a.z <= b.z}; }
    inline vec3 mix(vec3 a, vec3 b, bvec3 s) { return vec3(s.x ? b.x : a.x, s.y ? b.y : a.y, s.z ? b.z : a.z); }
    #include "colour.glsl"
    }
    """#

  /// Prints `name inputs : outputs` lines over grids of inputs.
  private static let cppHarness = #"""
    #include <cstdio>
    #include "glsl_shim.h"
    using namespace glsl;
    static void v3(const char *name, vec3 in, float extra, vec3 out) {
      printf("%s %.9g %.9g %.9g %.9g : %.9g %.9g %.9g\n", name, in.x, in.y, in.z, extra, out.x, out.y, out.z);
    }
    int main() {
      for (int i = 0; i <= 64; i++) {
        float s = i / 64.0f;
        printf("pq_eotf %.9g : %.9g\n", s, pq_eotf(s));
        printf("hlg_oetf %.9g : %.9g\n", s, hlg_oetf(s));
        printf("hlg_inverse_oetf %.9g : %.9g\n", s, hlg_inverse_oetf(s));
        printf("bt1886_eotf %.9g : %.9g\n", s, bt1886_eotf(s));
        printf("bt1886_inv_eotf %.9g : %.9g\n", s, bt1886_inv_eotf(s));
        printf("srgb_eotf %.9g : %.9g\n", s, srgb_eotf(s));
        printf("srgb_inv_eotf %.9g : %.9g\n", s, srgb_inv_eotf(s));
      }
      const float nits[] = {0, 0.005f, 0.1f, 1, 10, 48, 100, 203, 400, 1000, 4000, 10000};
      for (float n : nits) printf("pq_inv_eotf %.9g : %.9g\n", n, pq_inv_eotf(n));
      const float peaks[] = {400, 1000, 2000};
      const vec3 scenes[] = {vec3(1, 1, 1), vec3(0.5, 0.2, 0.1), vec3(0.265, 0.265, 0.265), vec3(0, 1, 0), vec3(0.0)};
      for (float p : peaks) {
        printf("hlg_system_gamma %.9g : %.9g\n", p, hlg_system_gamma(p));
        for (vec3 s : scenes) v3("hlg_ootf", s, p, hlg_ootf(s, p));
      }
      const float sources[] = {150, 1000, 4000, 10000};
      const float targets[] = {100, 203};
      for (int curve = 0; curve < 4; curve++)
        for (float source : sources)
          for (float target : targets)
            for (int i = 0; i <= 40; i++) {
              float n = source * i / 32.0f;
              printf("tone_map %d %.9g %.9g %.9g : %.9g\n", curve, n, source, target, tone_map(curve, n, source, target));
              printf("tone_map_range %d %.9g %.9g %.9g : %.9g\n", curve, n, source, target,
                     tone_map_range(curve, n, 0.005f, source, target / 1000, target));
            }
      const float g[] = {-0.6f, -0.05f, 0, 0.3f, 0.9f, 1, 1.2f, 3};
      for (float r : g)
        for (float gg : g)
          for (float b : g) {
            v3("gamut_map", vec3(r, gg, b), 203, gamut_map(vec3(r, gg, b)));
            v3("gamut_desaturate", vec3(r, gg, b), 0, gamut_desaturate(vec3(r, gg, b), BT709_LUMA));
          }
      const float levels[] = {0, 0.1f, 0.3f, 0.5f, 0.5806f, 0.65f, 0.75f, 0.9f, 1};
      for (int transfer = 0; transfer < 2; transfer++)
        for (int curve = 0; curve < 4; curve++)
          for (float r : levels)
            for (float gg : levels)
              for (float b : levels) {
                const float contents[] = {1000, 4000};
                for (float source : contents) {
                  float target = 203;
                  ToneParams p{curve, source, source, 0.005f, target, BT2020_TO_BT709, BT2020_TO_LUMA_SPACE,
                               LUMA_SPACE_TO_BT2020};
                  vec3 out = hdr_to_sdr(colour_linearise(vec3(r, gg, b), transfer, source, 0.005f), p);
                  printf("pipeline %d %d %.9g %.9g %.9g %.9g %.9g : %.9g %.9g %.9g\n", transfer, curve, r, gg, b,
                         source, target, out.x, out.y, out.z);
                }
              }
      for (uint y = 0; y < 16; y++)
        for (uint x = 0; x < 16; x++) printf("bayer8 %u %u : %.9g\n", x, y, bayer8(uvec2(x, y)));
      return 0;
    }
    """#
}
