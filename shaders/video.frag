#version 450
// Samples the video's Y'CbCr planes, converts to R'G'B' with the stream's matrix and range, and
// letterboxes the picture into `rect`. Mirrors OrbRender's Swift reference (VideoGeometry, YUVMatrix).
layout(location = 0) in vec2 position;
layout(location = 0) out vec4 outColor;

layout(set = 0, binding = 0) uniform sampler2D planeY;
// Cb (three-plane layouts) or interleaved CbCr (NV12/P010).
layout(set = 0, binding = 1) uniform sampler2D planeCb;
layout(set = 0, binding = 2) uniform sampler2D planeCr;

layout(push_constant) uniform Params {
  vec4 rect;         // picture area in target pixels: x0, y0, x1, y1
  vec4 axes;         // source uv per unit of picture x (xy) and y (zw): rotation and flips
  vec4 origin;       // source uv at the picture's top-left (xy); chroma siting offset in uv (zw)
  vec4 misc;         // x: 1 when CbCr is interleaved; y: sample scale to code values / (2^depth - 1)
  vec4 row0;         // R' = dot(row0.xyz, Y'CbCr) + row0.w
  vec4 row1;
  vec4 row2;
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
  float scale = params.misc.y;
  vec3 ycc;
  ycc.x = texture(planeY, uv).r;
  // No branch: llvmpipe runs both sides of a divergent-looking branch, which doubles the samples.
  vec2 cbcr = texture(planeCb, chromaUV).rg;
  float cr = texture(planeCr, chromaUV).r;
  ycc.y = cbcr.x;
  ycc.z = mix(cr, cbcr.y, params.misc.x);
  ycc *= scale;
  vec3 rgb = vec3(dot(params.row0.xyz, ycc) + params.row0.w,
                  dot(params.row1.xyz, ycc) + params.row1.w,
                  dot(params.row2.xyz, ycc) + params.row2.w);
  outColor = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
