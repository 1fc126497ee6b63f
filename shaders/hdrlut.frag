#version 450
#extension GL_GOOGLE_include_directive : require
// Fills the HDR -> SDR table (hdrlut.glsl): each texel runs the exact colour math of colour.glsl on its grid point.
#include "colour.glsl"
#include "hdrlut.glsl"

layout(location = 0) in vec2 position;
layout(location = 0) out vec4 outColor;

// The same constants as video.frag: 1 PQ, 2 HLG, 3 SDR with BT.2020 primaries; the curve; BT.2020 source.
layout(constant_id = 0) const int MODE = 1;
layout(constant_id = 1) const int CURVE = 0;
layout(constant_id = 2) const bool FROM_BT2020 = true;

layout(push_constant) uniform Params {
  vec4 unused[7];
  vec4 hdr;  // x: source peak, y: target peak (nits)
} params;

void main() {
  vec3 signal = hdr_lut_grid_point(floor(gl_FragCoord.xy)) / (HDR_LUT_SIZE - 1.0);
  float sourcePeak = params.hdr.x;
  float targetPeak = params.hdr.y;
  vec3 nits;
  if (MODE == 1) {
    nits = pq_eotf(signal);
  } else if (MODE == 2) {
    nits = hlg_ootf(hlg_inverse_oetf(signal), sourcePeak);
  } else {
    nits = bt1886_eotf(signal) * targetPeak;
  }
  mat3 gamut = FROM_BT2020 ? BT2020_TO_BT709 : mat3(1.0);
  vec3 luma = FROM_BT2020 ? BT2020_LUMA : BT709_LUMA;
  vec3 relative = hdr_to_sdr_relative(nits, CURVE, sourcePeak, targetPeak, gamut, luma);
  outColor = vec4(pq_inv_eotf(relative * targetPeak), 1.0);
}
