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
  vec4 hdr;  // x: the curve's source peak, y: target peak, z: content peak, w: source black (nits)
} params;

void main() {
  vec3 signal = hdr_lut_grid_point(floor(gl_FragCoord.xy)) / (HDR_LUT_SIZE - 1.0);
  mat3 gamut = FROM_BT2020 ? BT2020_TO_BT709 : mat3(1.0);
  if (MODE == 3) {
    // SDR with BT.2020 primaries: no tone mapping, the gamut mapped at constant hue.
    outColor = vec4(bt1886_inv_eotf(gamut_map(gamut * bt1886_eotf(signal))), 1.0);
    return;
  }
  ToneParams p;
  p.curve = CURVE;
  p.source_peak = params.hdr.x;
  p.target_peak = params.hdr.y;
  p.content_peak = params.hdr.z;
  p.source_black = params.hdr.w;
  p.gamut = gamut;
  p.to_space = FROM_BT2020 ? BT2020_TO_LUMA_SPACE : BT709_TO_LUMA_SPACE;
  p.from_space = FROM_BT2020 ? LUMA_SPACE_TO_BT2020 : LUMA_SPACE_TO_BT709;
  vec3 nits = colour_linearise(signal, MODE == 2 ? TRANSFER_HLG : TRANSFER_PQ, p.content_peak, p.source_black);
  outColor = vec4(hdr_to_sdr(nits, p), 1.0);
}
