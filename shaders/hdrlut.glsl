// The HDR -> SDR transform as a 64^3 table, laid out as 64 slices of 64x64 in an 8x8 atlas (512x512), so a
// software GPU pays four texel fetches per pixel instead of the whole tone- and gamut-mapping math.
// In: the source's R'G'B' signal (PQ or HLG, 0..1). Out: the encoded SDR signal (BT.1886), before the dither: both
// sides perceptual, so the interpolation costs little where the mapping bends.
// Swift: HDRTable (layout), HDRToSDR (the values).
#ifndef ORB_HDRLUT_GLSL
#define ORB_HDRLUT_GLSL

const float HDR_LUT_SIZE = 64.0;
const float HDR_LUT_COLUMNS = 8.0;
const float HDR_LUT_ATLAS = 512.0;

// Atlas texel (integer coordinates) -> the grid point (r, g, b indices) it holds.
vec3 hdr_lut_grid_point(vec2 texel) {
  vec2 slice = floor(texel / HDR_LUT_SIZE);
  vec2 inside = texel - slice * HDR_LUT_SIZE;
  return vec3(inside, slice.y * HDR_LUT_COLUMNS + slice.x);
}

// The value at grid point p (integer r, g, b indices).
vec3 hdr_lut_point(sampler2D table, vec3 p) {
  vec2 slice = vec2(mod(p.z, HDR_LUT_COLUMNS), floor(p.z / HDR_LUT_COLUMNS));
  return texelFetch(table, ivec2(slice * HDR_LUT_SIZE + p.xy), 0).rgb;
}

// Tetrahedral lookup of signal c (0..1): the cell's diagonal is an edge of every tetrahedron, so a grey input mixes
// only the two grey corners; four fetches, no branch. Swift: HDRTable.sample.
vec3 hdr_lut_sample(sampler2D table, vec3 c) {
  vec3 scaled = clamp(c, 0.0, 1.0) * (HDR_LUT_SIZE - 1.0);
  vec3 base = min(floor(scaled), vec3(HDR_LUT_SIZE - 2.0));
  vec3 f = scaled - base;
  float hi = max(f.x, max(f.y, f.z));
  float lo = min(f.x, min(f.y, f.z));
  float mid = f.x + f.y + f.z - hi - lo;
  // The path from base to base + 1: a step along the largest fraction, then along all but the smallest. (On a tie
  // the vertex it picks has weight 0.)
  vec3 first = step(vec3(hi), f);
  vec3 second = vec3(1.0) - step(f, vec3(lo));
  vec3 v0 = hdr_lut_point(table, base);
  vec3 v1 = hdr_lut_point(table, base + first);
  vec3 v2 = hdr_lut_point(table, base + second);
  vec3 v3 = hdr_lut_point(table, base + vec3(1.0));
  return (1.0 - hi) * v0 + (hi - mid) * v1 + (mid - lo) * v2 + lo * v3;
}
#endif
