#version 450
#extension GL_GOOGLE_include_directive : require
// Samples the video's Y'CbCr planes, converts to R'G'B' with the stream's matrix and range, letterboxes the
// picture into `rect`, and for HDR (PQ, HLG) or wide-gamut sources tone-maps and gamut-maps to SDR BT.709 through the
// table hdrlut.frag computed with colour.glsl. Mirrors OrbRender's Swift reference (VideoGeometry, YUVMatrix, HDRToSDR).
// What varies per stream kind is a specialization constant, not a branch: llvmpipe runs both sides of a branch.
#include "colour.glsl"
#include "hdrlut.glsl"

layout(location = 0) in vec2 position;
layout(location = 0) out vec4 outColor;

layout(set = 0, binding = 0) uniform sampler2D planeY;
// Cb and Cr interleaved (three-plane sources are interleaved at upload): one sample for both.
layout(set = 0, binding = 1) uniform sampler2D planeCbCr;
// The HDR -> SDR table for this stream (hdrlut.frag made it); unused for plain SDR.
layout(set = 0, binding = 2) uniform sampler2D hdrTable;

// 0: SDR shown as it is; 1: PQ; 2: HLG; 3: SDR with BT.2020 primaries (gamut-mapped only).
layout(constant_id = 0) const int MODE = 0;
// Tone-mapping curve: 0 bt2390, 1 hable, 2 reinhard, 3 clip.
layout(constant_id = 1) const int CURVE = 0;
// The source's primaries are BT.2020 (else BT.709).
layout(constant_id = 2) const bool FROM_BT2020 = true;

layout(push_constant) uniform Params {
  vec4 rect;         // picture area in target pixels: x0, y0, x1, y1
  vec4 axes;         // source uv per unit of picture x (xy) and y (zw): rotation and flips
  vec4 origin;       // source uv at the picture's top-left (xy); chroma siting offset in uv (zw)
  vec4 misc;         // y: sample scale to code values / (2^depth - 1)
  vec4 row0;         // R' = dot(row0.xyz, Y'CbCr) + row0.w
  vec4 row1;
  vec4 row2;
  vec4 hdr;          // the table's: curve peak, target peak, content peak, source black (nits)
} params;

void main() {
  vec2 pixel = gl_FragCoord.xy;
  if (pixel.x < params.rect.x || pixel.y < params.rect.y || pixel.x >= params.rect.z || pixel.y >= params.rect.w) {
    outColor = vec4(0.0, 0.0, 0.0, 1.0);
    return;
  }
  vec2 local = (pixel - params.rect.xy) / (params.rect.zw - params.rect.xy);
  vec2 uv = params.origin.xy + local.x * params.axes.xy + local.y * params.axes.zw;
  vec2 chromaUV = uv + params.origin.zw;
  vec3 ycc;
  ycc.x = texture(planeY, uv).r;
  ycc.yz = texture(planeCbCr, chromaUV).rg;
  ycc *= params.misc.y;
  vec3 rgb = vec3(dot(params.row0.xyz, ycc) + params.row0.w,
                  dot(params.row1.xyz, ycc) + params.row1.w,
                  dot(params.row2.xyz, ycc) + params.row2.w);
  rgb = clamp(rgb, 0.0, 1.0);
  if (MODE != 0) {
    // Tone and gamut mapping and the display encoding come from the table; only the dither is done here.
    rgb = dither8(hdr_lut_sample(hdrTable, rgb), pixel);
  }
  outColor = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
