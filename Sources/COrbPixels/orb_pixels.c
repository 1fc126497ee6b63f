#include "orb_pixels.h"

// Plain C, so the compiler vectorises and checks nothing per pixel: the Swift version of this loop spent most of its
// time in the range checks of six float-to-integer conversions a pixel.
void orb_tone_map_row(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count, const float matrix[12],
                      const float *grid, int size, const float dither[8], int bgra, uint32_t *out) {
  const int top = size - 2, stepG = size, stepB = size * size, far = 1 + stepG + stepB;
  const float edge = (float)(size - 1);
  for (int i = 0; i < count; i++) {
    const float l = y[i], u = cb[i], v = cr[i];
    float c[3];
    for (int k = 0; k < 3; k++) {
      float t = matrix[4 * k] * l + matrix[4 * k + 1] * u + matrix[4 * k + 2] * v + matrix[4 * k + 3];
      c[k] = t < 0 ? 0 : (t > edge ? edge : t);
    }
    int ri = (int)c[0], gi = (int)c[1], bi = (int)c[2];
    ri = ri > top ? top : ri;
    gi = gi > top ? top : gi;
    bi = bi > top ? top : bi;
    const float dr = c[0] - ri, dg = c[1] - gi, db = c[2] - bi;
    // The tetrahedron holding the point, ties as the shader takes them: a step along the largest fraction, then
    // along all but the smallest, to the far corner.
    const float hi = dr > dg ? (dr > db ? dr : db) : (dg > db ? dg : db);
    const float lo = dr < dg ? (dr < db ? dr : db) : (dg < db ? dg : db);
    const float mid = dr + dg + db - hi - lo;
    const int o1 = (dr >= hi) + (dg >= hi) * stepG + (db >= hi) * stepB;
    const int o2 = (dr > lo) + (dg > lo) * stepG + (db > lo) * stepB;
    const float *p0 = grid + 4 * (bi * stepB + gi * stepG + ri);
    const float *p1 = p0 + 4 * o1, *p2 = p0 + 4 * o2, *p3 = p0 + 4 * far;
    const float w0 = 1 - hi, w1 = hi - mid, w2 = mid - lo, w3 = lo;
    const float d = dither[i & 7];
    uint32_t code[3];
    for (int k = 0; k < 3; k++) {
      float t = p0[k] * w0 + p1[k] * w1 + p2[k] * w2 + p3[k] * w3 + d;
      code[k] = (uint32_t)(t < 0 ? 0 : (t > 255 ? 255 : t));
    }
    out[i] = 0xFF000000u | (bgra ? (code[0] << 16 | code[1] << 8 | code[2]) : (code[2] << 16 | code[1] << 8 | code[0]));
  }
}
