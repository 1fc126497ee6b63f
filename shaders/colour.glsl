// HDR -> SDR colour math: the GLSL mirror of Sources/OrbRender/ColorScience (TransferFunctions.swift,
// ToneMapCurve.swift, Gamut.swift, HDRToSDR.swift, OrderedDither.swift), same formulas, same constants
// (ColorScienceShaderTests compares the constants and compiles this file). Functions only, no main. Use with
//   #extension GL_GOOGLE_include_directive : require
//   #include "colour.glsl"
// and glslc -I shaders. Luminance is in nits (cd/m2); signals are normalised 0..1.
#ifndef ORB_COLOUR_GLSL
#define ORB_COLOUR_GLSL

// ---- SMPTE ST 2084 (PQ), absolute: signal 1.0 = 10000 nits. Swift: PQTransfer.
const float PQ_PEAK_NITS = 10000.0;
const float PQ_M1 = 0.1593017578125;  // 2610 / 16384
const float PQ_M2 = 78.84375;         // 2523 / 4096 * 128
const float PQ_C1 = 0.8359375;        // 3424 / 4096
const float PQ_C2 = 18.8515625;       // 2413 / 4096 * 32
const float PQ_C3 = 18.6875;          // 2392 / 4096 * 32

// PQ signal (clamped to 0..1) -> display luminance, nits.
vec3 pq_eotf(vec3 signal) {
  vec3 p = pow(clamp(signal, 0.0, 1.0), vec3(1.0 / PQ_M2));
  return PQ_PEAK_NITS * pow(max(p - PQ_C1, 0.0) / (PQ_C2 - PQ_C3 * p), vec3(1.0 / PQ_M1));
}
float pq_eotf(float signal) { return pq_eotf(vec3(signal)).x; }

// Display luminance in nits (clamped to 0..10000) -> PQ signal.
vec3 pq_inv_eotf(vec3 nits) {
  vec3 y = pow(clamp(nits / PQ_PEAK_NITS, 0.0, 1.0), vec3(PQ_M1));
  return pow((PQ_C1 + PQ_C2 * y) / (1.0 + PQ_C3 * y), vec3(PQ_M2));
}
float pq_inv_eotf(float nits) { return pq_inv_eotf(vec3(nits)).x; }

// ---- ARIB STD-B67 (HLG) and the BT.2100 OOTF (black level 0). Swift: HLGTransfer.
const float HLG_A = 0.17883277;
const float HLG_B = 0.28466892;             // 1 - 4a
const float HLG_C = 0.5599107295;           // 0.5 - a ln(4a)
const float HLG_REFERENCE_PEAK_NITS = 1000.0;  // system gamma 1.2 here
const vec3 HLG_LUMA = vec3(0.2627, 0.6780, 0.0593);  // BT.2100 Y_s coefficients

// Normalised scene linear light (0..1) -> HLG signal.
vec3 hlg_oetf(vec3 scene) {
  vec3 e = max(scene, 0.0);
  vec3 low = sqrt(3.0 * e);
  vec3 high = HLG_A * log(max(12.0 * e - HLG_B, 1e-6)) + HLG_C;
  return mix(high, low, lessThanEqual(e, vec3(1.0 / 12.0)));
}
float hlg_oetf(float scene) { return hlg_oetf(vec3(scene)).x; }

// HLG signal (clamped to 0..1) -> normalised scene linear light (0..1).
vec3 hlg_inverse_oetf(vec3 signal) {
  vec3 e = clamp(signal, 0.0, 1.0);
  vec3 low = e * e / 3.0;
  vec3 high = (exp((e - HLG_C) / HLG_A) + HLG_B) / 12.0;
  return mix(high, low, lessThanEqual(e, vec3(0.5)));
}
float hlg_inverse_oetf(float signal) { return hlg_inverse_oetf(vec3(signal)).x; }

// BT.2100 system gamma for nominal peak luminance peak_nits: 1.2 + 0.42 log10(Lw / 1000).
float hlg_system_gamma(float peak_nits) {
  return 1.2 + 0.42 * (log2(peak_nits / HLG_REFERENCE_PEAK_NITS) / log2(10.0));
}

// Normalised scene linear BT.2020 RGB (0..1) -> display linear RGB, nits: Lw * Y_s^(gamma - 1) * E.
vec3 hlg_ootf(vec3 scene, float peak_nits) {
  vec3 rgb = clamp(scene, 0.0, 1.0);
  float ys = dot(rgb, HLG_LUMA);
  if (ys <= 0.0) {
    return vec3(0.0);
  }
  return rgb * (peak_nits * pow(ys, hlg_system_gamma(peak_nits) - 1.0));
}

// ---- BT.1886 (black 0): relative light = signal^2.4. Swift: BT1886Transfer.
const float BT1886_GAMMA = 2.4;

vec3 bt1886_eotf(vec3 signal) { return pow(clamp(signal, 0.0, 1.0), vec3(BT1886_GAMMA)); }
float bt1886_eotf(float signal) { return bt1886_eotf(vec3(signal)).x; }
vec3 bt1886_inv_eotf(vec3 relative) { return pow(clamp(relative, 0.0, 1.0), vec3(1.0 / BT1886_GAMMA)); }
float bt1886_inv_eotf(float relative) { return bt1886_inv_eotf(vec3(relative)).x; }

// ---- sRGB (IEC 61966-2-1) piecewise. Swift: SRGBTransfer.
vec3 srgb_eotf(vec3 signal) {
  vec3 v = clamp(signal, 0.0, 1.0);
  return mix(pow((v + 0.055) / 1.055, vec3(2.4)), v / 12.92, lessThanEqual(v, vec3(0.04045)));
}
float srgb_eotf(float signal) { return srgb_eotf(vec3(signal)).x; }
vec3 srgb_inv_eotf(vec3 relative) {
  vec3 l = clamp(relative, 0.0, 1.0);
  return mix(1.055 * pow(l, vec3(1.0 / 2.4)) - 0.055, 12.92 * l, lessThanEqual(l, vec3(0.0031308)));
}
float srgb_inv_eotf(float relative) { return srgb_inv_eotf(vec3(relative)).x; }

// ---- Tone curves: luminance in nits (source) -> nits (target). Swift: ToneMapCurve.
const int TONE_MAP_BT2390 = 0;
const int TONE_MAP_HABLE = 1;
const int TONE_MAP_REINHARD = 2;
const int TONE_MAP_CLIP = 3;
const float BT2390_KNEE_OFFSET = 1.0;  // KS = 2 maxLum - 1, libplacebo's and mpv's default (the spec's example: 0.5)

// BT.2390 EETF with source and target black at 0 nits (the black-level lift term is then 0 and left out).
float tone_map_bt2390(float nits, float source_peak, float target_peak) {
  float source = pq_inv_eotf(source_peak);
  float e1 = pq_inv_eotf(nits) / source;
  float max_lum = pq_inv_eotf(target_peak) / source;
  float ks = (1.0 + BT2390_KNEE_OFFSET) * max_lum - BT2390_KNEE_OFFSET;
  float e2 = e1;
  if (e1 >= ks) {
    float t = (e1 - ks) / (1.0 - ks);
    float t2 = t * t;
    float t3 = t2 * t;
    e2 = (2.0 * t3 - 3.0 * t2 + 1.0) * ks + (t3 - 2.0 * t2 + t) * (1.0 - ks) + (-2.0 * t3 + 3.0 * t2) * max_lum;
  }
  return pq_eotf(e2 * source);
}

// Hable's filmic curve, A..F = 0.15, 0.50, 0.10, 0.20, 0.02, 0.30.
float hable(float x) {
  const float a = 0.15, b = 0.50, c = 0.10, d = 0.20, e = 0.02, f = 0.30;
  return (x * (a * x + c * b) + d * e) / (x * (a * x + b) + d * f) - e / f;
}

// Maps luminance (nits) with curve TONE_MAP_*; input above source_peak counts as the peak, negative as 0; the
// identity when source_peak <= target_peak.
float tone_map(int curve, float nits, float source_peak, float target_peak) {
  if (source_peak <= target_peak) {
    return nits;
  }
  float l = clamp(nits, 0.0, source_peak);
  if (curve == TONE_MAP_HABLE) {
    return target_peak * hable(l / target_peak) / hable(source_peak / target_peak);
  } else if (curve == TONE_MAP_REINHARD) {
    float x = l / target_peak;
    float p = source_peak / target_peak;
    return target_peak * x * (1.0 + x / (p * p)) / (1.0 + x);
  } else if (curve == TONE_MAP_CLIP) {
    return min(l, target_peak);
  }
  return tone_map_bt2390(l, source_peak, target_peak);
}

// Maps luminance (nits) within a range, black to black and peak to peak: BT.2390 in libplacebo's form (the EETF in PQ
// relative to the source's black and peak, then its black-point adaptation); the other curves as tone_map. Swift:
// ToneMapCurve.map(_:range:).
float tone_map_range(int curve, float nits, float source_black, float source_peak, float target_black,
                     float target_peak) {
  if (curve != TONE_MAP_BT2390 || source_peak <= target_peak) {
    return tone_map(curve, nits, source_peak, target_peak);
  }
  float i0 = pq_inv_eotf(source_black);
  float i1 = pq_inv_eotf(source_peak);
  float o0 = pq_inv_eotf(target_black);
  float o1 = pq_inv_eotf(target_peak);
  float min_lum = (o0 - i0) / (i1 - i0);
  float max_lum = (o1 - i0) / (i1 - i0);
  float ks = (1.0 + BT2390_KNEE_OFFSET) * max_lum - BT2390_KNEE_OFFSET;
  float bp = min_lum > 0.0 ? min(1.0 / min_lum, 4.0) : 4.0;
  float gain = max_lum < 1.0 ? 1.0 / (1.0 + min_lum / max_lum * pow(1.0 - max_lum, bp)) : 1.0;
  float x = (pq_inv_eotf(clamp(nits, source_black, source_peak)) - i0) / (i1 - i0);
  if (ks < 1.0 && x >= ks) {
    float t = (x - ks) / (1.0 - ks);
    float t2 = t * t;
    float t3 = t2 * t;
    x = (2.0 * t3 - 3.0 * t2 + 1.0) * ks + (t3 - 2.0 * t2 + t) * (1.0 - ks) + (-2.0 * t3 + 3.0 * t2) * max_lum;
  }
  if (x < 1.0) {
    x += min_lum * pow(1.0 - x, bp);
    x = gain * (x - min_lum) + min_lum;
  }
  return pq_eotf(clamp(x * (i1 - i0) + i0, o0, o1));
}

// ---- Gamut. Swift: GamutMapping, ColorPrimaries.
// BT.2020 -> BT.709 linear light, derived from the primaries and D65 (mat3 takes columns).
const mat3 BT2020_TO_BT709 = mat3(
  vec3(1.6604910021, -0.1245504745, -0.0181507634),
  vec3(-0.5876411388, 1.1328998971, -0.1005788980),
  vec3(-0.0728498633, -0.0083494226, 1.1187296614));
// Luminance coefficients derived from the primaries (the Y row of RGB -> XYZ).
const vec3 BT709_LUMA = vec3(0.2126390059, 0.7151686788, 0.0721923154);
const vec3 BT2020_LUMA = vec3(0.2627002120, 0.6779980715, 0.0593017165);
// RGB -> (X/Xw - Y, Y, Z/Zw - Y) and back: the space libplacebo's luma mode scales colour in. Swift:
// ToneMapParams.lumaSpace.
const mat3 BT2020_TO_LUMA_SPACE = mat3(
  vec3(0.4074603185, 0.2627002120, -0.2627002120),
  vec3(-0.5258427748, 0.6779980715, -0.6522210243),
  vec3(0.1183824563, 0.0593017165, 0.9149212363));
const mat3 LUMA_SPACE_TO_BT2020 = mat3(
  vec3(1.6316012963, -0.6336540937, 0.0167659071),
  vec3(1.0000000000, 1.0000000000, 1.0000000000),
  vec3(-0.2759305125, 0.0171728570, 1.0260047062));
const mat3 BT709_TO_LUMA_SPACE = mat3(
  vec3(0.2212483397, 0.2126390059, -0.1948889658),
  vec3(-0.3389446696, 0.7151686788, -0.6057210579),
  vec3(0.1176963299, 0.0721923154, 0.8006100237));
const mat3 LUMA_SPACE_TO_BT709 = mat3(
  vec3(3.0803990907, -0.9212233589, 0.0528739390),
  vec3(1.0000000000, 1.0000000000, 1.0000000000),
  vec3(-0.5430159131, 0.0452558574, 1.1511030199));

const int GAMUT_MAP_STEPS = 8;

bool in_unit_range(vec3 v) { return min(v.x, min(v.y, v.z)) >= 0.0 && max(v.x, max(v.y, v.z)) <= 1.0; }

// Oklab (Ottosson). Swift: Oklab. Relative linear BT.709 <-> LMS, and cube-rooted L'M'S' <-> Lab (mat3 takes columns).
const mat3 OKLAB_BT709_TO_LMS = mat3(
  vec3(0.4122214708, 0.2119034982, 0.0883024619),
  vec3(0.5363325363, 0.6806995451, 0.2817188376),
  vec3(0.0514459929, 0.1073969566, 0.6299787005));
const mat3 OKLAB_LMS_TO_LAB = mat3(
  vec3(0.2104542553, 1.9779984951, 0.0259040371),
  vec3(0.7936177850, -2.4285922050, 0.7827717662),
  vec3(-0.0040720468, 0.4505937099, -0.8086757660));

// The inverses as published: L with a = b = 0 comes back exactly neutral, L = 1 exactly white.
const mat3 OKLAB_LAB_TO_LMS = mat3(
  vec3(1.0, 1.0, 1.0),
  vec3(0.3963377774, -0.1055613458, -0.0894841775),
  vec3(0.2158037573, -0.0638541728, -1.2914855480));
const mat3 OKLAB_LMS_TO_BT709 = mat3(
  vec3(4.0767416621, -1.2684380046, -0.0041960863),
  vec3(-3.3077115913, 2.6097574011, -0.7034186147),
  vec3(0.2309699292, -0.3413193965, 1.7076147010));

vec3 oklab_from_bt709(vec3 rgb) {
  vec3 lms = OKLAB_BT709_TO_LMS * rgb;
  return OKLAB_LMS_TO_LAB * (sign(lms) * pow(abs(lms), vec3(1.0 / 3.0)));
}

vec3 oklab_to_bt709(vec3 lab) {
  vec3 p = OKLAB_LAB_TO_LMS * lab;
  return OKLAB_LMS_TO_BT709 * (p * p * p);
}

// Relative linear BT.709 RGB -> 0..1 without turning its hue: a per-channel clip where that keeps the Oklab hue
// within the tolerance, else bisection along the Oklab line from the colour to the grey of gamut_anchor_lightness, then a linear step onto the gamut boundary, keeping as much chroma as fits. Colours in 0..1 are returned unchanged. Swift: GamutMapping.perceptual.
const float GAMUT_OVERSHOOT = 1e-6;
const float GAMUT_ANCHOR_CHROMA_WEIGHT = 0.05;
const float GAMUT_CLIP_HUE_TOLERANCE_DEGREES = 2.0;
const float GAMUT_CLIP_CHROMA_FLOOR = 0.02;

// Whether clipping lab to clipped_lab keeps its hue within the tolerance (or it is near grey).
// Swift: GamutMapping.clipKeepsHue.
bool gamut_clip_keeps_hue(vec3 lab, vec3 clipped_lab) {
  float c1 = sqrt(lab.y * lab.y + lab.z * lab.z);
  float c2 = sqrt(clipped_lab.y * clipped_lab.y + clipped_lab.z * clipped_lab.z);
  if (c1 < GAMUT_CLIP_CHROMA_FLOOR || c2 < GAMUT_CLIP_CHROMA_FLOOR) {
    return true;
  }
  float cosine = (lab.y * clipped_lab.y + lab.z * clipped_lab.z) / (c1 * c2);
  return cosine >= cos(GAMUT_CLIP_HUE_TOLERANCE_DEGREES * 3.14159265358979 / 180.0);
}

// The grey gamut_map slides towards: Ottosson's adaptive L0. Swift: GamutMapping.anchorLightness.
float gamut_anchor_lightness(vec3 lab) {
  float chroma = sqrt(lab.y * lab.y + lab.z * lab.z);
  float ld = lab.x - 0.5;
  float e1 = 0.5 + abs(ld) + GAMUT_ANCHOR_CHROMA_WEIGHT * chroma;
  float root = sqrt(max(0.0, e1 * e1 - 2.0 * abs(ld)));
  return 0.5 * (1.0 + (ld < 0.0 ? -1.0 : 1.0) * (e1 - root));
}

vec3 gamut_map(vec3 rgb) {
  if (in_unit_range(rgb)) {
    return rgb;
  }
  // Rounding overshoot (a tone curve landing a hair above its peak) is clipped, not hue-mapped.
  if (min(rgb.x, min(rgb.y, rgb.z)) >= -GAMUT_OVERSHOOT && max(rgb.x, max(rgb.y, rgb.z)) <= 1.0 + GAMUT_OVERSHOOT) {
    return clamp(rgb, 0.0, 1.0);
  }
  vec3 colour = oklab_from_bt709(rgb);
  // A per-channel clip keeps saturation; it is used wherever it does not turn the hue.
  vec3 clipped = clamp(rgb, 0.0, 1.0);
  if (gamut_clip_keeps_hue(colour, oklab_from_bt709(clipped))) {
    return clipped;
  }
  float grey_l = gamut_anchor_lightness(colour);
  mat3 to_lms = OKLAB_LAB_TO_LMS;
  mat3 to_rgb = OKLAB_LMS_TO_BT709;
  float inside = 0.0;
  float outside = 1.0;
  for (int i = 0; i < GAMUT_MAP_STEPS; i++) {
    float mid = (inside + outside) / 2.0;
    vec3 p = to_lms * vec3(grey_l + mid * (colour.x - grey_l), mid * colour.y, mid * colour.z);
    vec3 v = to_rgb * (p * p * p);
    if (in_unit_range(v)) {
      inside = mid;
    } else {
      outside = mid;
    }
  }
  // Finish on the boundary: interpolate between the last points inside and outside so the channel that leaves
  // 0..1 lands exactly on 0 or 1 (a residue of ~1e-4 would become several 8-bit codes after encoding).
  vec3 p_in = to_lms * vec3(grey_l + inside * (colour.x - grey_l), inside * colour.y, inside * colour.z);
  vec3 p_out = to_lms * vec3(grey_l + outside * (colour.x - grey_l), outside * colour.y, outside * colour.z);
  vec3 v_in = to_rgb * (p_in * p_in * p_in);
  vec3 v_out = to_rgb * (p_out * p_out * p_out);
  float f = 1.0;
  for (int c = 0; c < 3; c++) {
    if (v_out[c] < 0.0) {
      f = min(f, v_in[c] / (v_in[c] - v_out[c]));
    } else if (v_out[c] > 1.0) {
      f = min(f, (1.0 - v_in[c]) / (v_out[c] - v_in[c]));
    }
  }
  return clamp(v_in + clamp(f, 0.0, 1.0) * (v_out - v_in), 0.0, 1.0);
}

// The cheap alternative (not used by hdr_to_sdr): mix with the grey of the colour's own luminance as little as needed;
// keeps Y and the CIE xy hue exactly, not the perceived hue. Swift: GamutMapping.desaturate.
vec3 gamut_desaturate(vec3 rgb, vec3 luma) {
  float y = clamp(dot(rgb, luma), 0.0, 1.0);
  float t = 1.0;
  for (int i = 0; i < 3; i++) {
    float d = rgb[i] - y;
    if (rgb[i] > 1.0) {
      t = min(t, (1.0 - y) / d);
    } else if (rgb[i] < 0.0) {
      t = min(t, -y / d);
    }
  }
  return clamp(vec3(y) + max(t, 0.0) * (rgb - vec3(y)), 0.0, 1.0);
}

// ---- The pipeline: libplacebo v4.208's default. Swift: HDRToSDR, ToneMapParams.
const int TRANSFER_PQ = 0;
const int TRANSFER_HLG = 1;
const float TONE_MAP_CROSSTALK = 0.04;
const float TARGET_CONTRAST = 1000.0;
const float LUMA_DESATURATION = 0.0597725;  // ln(1.1) / ln(1000 / 203)
const int TONE_MODE_PER_CHANNEL = 0;
const int TONE_MODE_LUMA = 1;
const int TONE_MODE_HYBRID = 2;

// What the tone mapping of one stream needs (nits). Swift: ToneMapParams.
struct ToneParams {
  int curve;
  float source_peak;   // the peak the curve maps from: the content's, or the detected one
  float content_peak;  // the metadata's: what channels are clamped to and what picks the mode
  float source_black;
  float target_peak;
  mat3 gamut;          // source -> BT.709 linear
  mat3 to_space;       // source -> luma space
  mat3 from_space;
};

// libplacebo's auto mode. Swift: ToneMapParams.mode.
int tone_mode(ToneParams p) {
  if (p.content_peak <= p.target_peak * (1.0 + 1e-6)) {
    return TONE_MODE_PER_CHANNEL;
  }
  return p.content_peak / p.target_peak > 10.0 ? TONE_MODE_HYBRID : TONE_MODE_LUMA;
}

// Source R'G'B' signal (0..1) -> linear display light in nits (source primaries). HLG: the BT.2100 black lift, the
// inverse OETF and the OOTF at content_peak. Swift: HDRToSDR.linearise.
vec3 colour_linearise(vec3 signal, int transfer, float content_peak, float source_black) {
  if (transfer == TRANSFER_HLG) {
    float gamma = hlg_system_gamma(content_peak);
    float beta = sqrt(3.0 * pow(source_black / content_peak, 1.0 / gamma));
    return hlg_ootf(hlg_inverse_oetf(signal * (1.0 - beta) + beta), content_peak);
  }
  return pq_eotf(signal);
}

float tone_curve(ToneParams p, float nits) {
  return tone_map_range(p.curve, nits, p.source_black, max(p.source_peak, p.target_peak),
                        p.target_peak / TARGET_CONTRAST, p.target_peak);
}

vec3 tone_curve3(ToneParams p, vec3 nits) {
  return vec3(tone_curve(p, nits.x), tone_curve(p, nits.y), tone_curve(p, nits.z));
}

// Tone mapping in the source primaries, nits -> nits: clamp, cross-talk, the curve by mode, cross-talk undone.
// Swift: HDRToSDR.toneMap.
vec3 tone_map_colour(vec3 rgb_nits, ToneParams p) {
  vec3 rgb = clamp(rgb_nits, p.source_black, p.content_peak);
  float c = TONE_MAP_CROSSTALK;
  rgb = (1.0 - 3.0 * c) * rgb + c * (rgb.x + rgb.y + rgb.z);
  int mode = tone_mode(p);
  if (mode == TONE_MODE_PER_CHANNEL) {
    rgb = tone_curve3(p, rgb);
  } else {
    vec3 pyq = p.to_space * rgb;
    float target_black = p.target_peak / TARGET_CONTRAST;
    float y0 = max(pyq.y, target_black);
    float mapped = tone_curve(p, pyq.y);
    float scale = pow(mapped / y0, 1.0 + LUMA_DESATURATION);
    pyq.x *= scale;
    pyq.z *= scale;
    if (p.content_peak > p.target_peak) {
      mapped -= max(0.1 * pyq.x, 0.0);
    }
    pyq.y = mapped;
    vec3 out_rgb = p.from_space * pyq;
    if (mode == TONE_MODE_HYBRID) {
      float coefficient = max(pow(target_black / mapped, 2.4), pow(mapped / p.target_peak, 2.4));
      out_rgb = out_rgb + coefficient * (tone_curve3(p, rgb) - out_rgb);
    }
    rgb = out_rgb;
  }
  return (rgb - c * (rgb.x + rgb.y + rgb.z)) / (1.0 - 3.0 * c);
}

// Relative linear BT.709 light between the display's black (1/1000) and 1 (its peak), clipped as libplacebo's gamut
// clip does. Swift: HDRToSDR.relative.
vec3 hdr_to_sdr_relative(vec3 rgb_nits, ToneParams p) {
  vec3 toned = tone_map_colour(rgb_nits, p) / p.target_peak;
  float black = 1.0 / TARGET_CONTRAST;
  vec3 in_gamut = p.gamut * ((toned - black) / (1.0 - black));
  return clamp(in_gamut, 0.0, 1.0) * (1.0 - black) + black;
}

// Relative light -> the BT.1886 signal of a 1000:1 display (its black is signal 0). Swift: HDRToSDR.encode.
vec3 bt1886_inv_eotf_black(vec3 relative) {
  float lift = pow(1.0 / TARGET_CONTRAST, 1.0 / BT1886_GAMMA);
  return clamp((bt1886_inv_eotf(relative) - lift) / (1.0 - lift), 0.0, 1.0);
}

// Linear light in nits (source primaries) -> encoded SDR BT.709 signal (0..1), before dither. Swift: HDRToSDR.map.
vec3 hdr_to_sdr(vec3 rgb_nits, ToneParams p) { return bt1886_inv_eotf_black(hdr_to_sdr_relative(rgb_nits, p)); }

// ---- Ordered dither, 8x8 Bayer, offset (index + 0.5) / 64 - 0.5 LSB. Swift: OrderedDither.
// The offset in LSB at integer pixel p (use uvec2(gl_FragCoord.xy)).
float bayer8(uvec2 p) {
  uint v = (p.x ^ p.y) & 7u;
  uint w = p.y & 7u;
  uint i = ((v & 1u) << 5) | ((w & 1u) << 4) | ((v & 2u) << 2) | ((w & 2u) << 1) | ((v & 4u) >> 1) | ((w & 4u) >> 2);
  return (float(i) + 0.5) / 64.0 - 0.5;
}

// Signal plus the pixel's dither offset, for an output with max_code + 1 levels (255.0 for 8 bits).
vec3 dither(vec3 signal, vec2 frag_coord, float max_code) {
  return signal + bayer8(uvec2(frag_coord)) / max_code;
}
vec3 dither8(vec3 signal, vec2 frag_coord) { return dither(signal, frag_coord, 255.0); }

#endif
