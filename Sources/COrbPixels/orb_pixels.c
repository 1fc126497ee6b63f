#include "orb_pixels.h"

// Plain C, so the compiler checks nothing per pixel: the Swift version of this loop spent most of its time in the
// range checks of six float-to-integer conversions a pixel. The three channels go together as one 4-lane vector
// (clang's vector extensions: SSE on x86-64, NEON on ARM): the matrix is three multiply-adds of columns, and each
// corner of the tetrahedron is one 4-byte load, its unpacking and one multiply-add, where the scalar loop made twelve
// loads and twelve multiply-adds a pixel. Where the CPU has AVX2, eight pixels go at a time (below).
typedef float orb_f4 __attribute__((ext_vector_type(4)));
typedef int32_t orb_i4 __attribute__((ext_vector_type(4)));
// Each table point is one 32-bit word (`orb_table_point`): R and G in eighths of a code, B in quarters. As three
// 16-bit values in 256ths of a code, a point took 6 bytes and eight pixels' corners eight gathers: 9.4 ns a pixel
// against 6.5 with one word a point and four (AVX2, on this project's 2-core test machine); the table is 1 MB, not 1.5.
static const orb_f4 unit = {1.0f / ORB_TABLE_RG_STEPS, 1.0f / ORB_TABLE_RG_STEPS, 1.0f / ORB_TABLE_B_STEPS, 0};

// A point's three values as floats, in the steps it holds them in.
static inline orb_f4 corner(const uint32_t *point) {
  const uint32_t v = *point;
  return (orb_f4){(float)(v & 2047), (float)(v >> 11 & 2047), (float)(v >> 22), 0};
}

#if defined(__x86_64__)
static int orb_tone_map_row_avx2(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count,
                                 const float matrix[12], const uint32_t *grid, int size, const float dither[8],
                                 int bgra, uint32_t *out);
#endif

// Pixels `i` to `count` of the row, one at a time.
static void tone_map_from(int i, const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count,
                          const float matrix[12], const uint32_t *grid, int size, const float dither[8], int bgra,
                          uint32_t *out) {
  const int top = size - 2, stepR = 1, stepG = size, stepB = size * size, far = stepR + stepG + stepB;
  // The matrix by columns: what each sample adds to (r, g, b), and the offsets.
  const orb_f4 mY = {matrix[0], matrix[4], matrix[8], 0}, mU = {matrix[1], matrix[5], matrix[9], 0},
               mV = {matrix[2], matrix[6], matrix[10], 0}, m1 = {matrix[3], matrix[7], matrix[11], 0};
  const orb_f4 zero = 0, edge = (float)(size - 1), white = 255;
  for (; i < count; i++) {
    orb_f4 c = mY * (float)y[i] + mU * (float)cb[i] + mV * (float)cr[i] + m1;
    c = __builtin_elementwise_min(__builtin_elementwise_max(c, zero), edge);
    // c >= 0, so truncation is the floor; the last cell takes the top edge.
    const orb_i4 cell = __builtin_elementwise_min(__builtin_convertvector(c, orb_i4), (orb_i4)top);
    const orb_f4 f = c - __builtin_convertvector(cell, orb_f4);
    const float dr = f.x, dg = f.y, db = f.z;
    // The tetrahedron holding the point, ties as the shader takes them: a step along the largest fraction, then
    // along all but the smallest, to the far corner.
    const float hi = dr > dg ? (dr > db ? dr : db) : (dg > db ? dg : db);
    const float lo = dr < dg ? (dr < db ? dr : db) : (dg < db ? dg : db);
    const float mid = dr + dg + db - hi - lo;
    const int o1 = (dr >= hi) * stepR + (dg >= hi) * stepG + (db >= hi) * stepB;
    const int o2 = (dr > lo) * stepR + (dg > lo) * stepG + (db > lo) * stepB;
    const uint32_t *p0 = grid + (cell.z * stepB + cell.y * stepG + cell.x * stepR);
    const orb_f4 c0 = corner(p0), c1 = corner(p0 + o1), c2 = corner(p0 + o2), c3 = corner(p0 + far);
    orb_f4 t = c0 * (1 - hi) + c1 * (hi - mid) + c2 * (mid - lo) + c3 * lo;
    t = t * unit + dither[i & 7];
    t = __builtin_elementwise_min(__builtin_elementwise_max(t, zero), white);
    const orb_i4 code = __builtin_convertvector(t, orb_i4);
    const uint32_t r = (uint32_t)code.x, g = (uint32_t)code.y, b = (uint32_t)code.z;
    out[i] = 0xFF000000u | (bgra ? (r << 16 | g << 8 | b) : (b << 16 | g << 8 | r));
  }
}

void orb_tone_map_row(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count, const float matrix[12],
                      const uint32_t *grid, int size, const float dither[8], int bgra, uint32_t *out) {
  int i = 0;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2"))
    i = orb_tone_map_row_avx2(y, cb, cr, count, matrix, grid, size, dither, bgra, out);
#endif
  tone_map_from(i, y, cb, cr, count, matrix, grid, size, dither, bgra, out);
}

void orb_tone_map_row_portable(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count,
                               const float matrix[12], const uint32_t *grid, int size, const float dither[8], int bgra,
                               uint32_t *out) {
  tone_map_from(0, y, cb, cr, count, matrix, grid, size, dither, bgra, out);
}

#if defined(__x86_64__)
#include <immintrin.h>

// Eight pixels at a time with AVX2, one channel a register: the scalar loop above spends its time on the 4-lane
// shuffles, compares and extractions of one pixel (about 45 cycles a pixel); here each step serves eight pixels and
// the table's corners are gathered, one gather a corner. The same operations in the same order as the scalar loop,
// and no fused multiply-add (the target names none), so every output byte is the scalar loop's.
__attribute__((target("avx2"))) static int orb_tone_map_row_avx2(const uint16_t *y, const uint16_t *cb,
                                                                  const uint16_t *cr, int count,
                                                                  const float matrix[12], const uint32_t *grid,
                                                                  int size, const float dither[8], int bgra,
                                                                  uint32_t *out) {
  const int stepG = size, stepB = size * size;
  const __m256i top = _mm256_set1_epi32(size - 2), gStep = _mm256_set1_epi32(stepG), bStep = _mm256_set1_epi32(stepB);
  const __m256i rStep = _mm256_set1_epi32(1), far = _mm256_set1_epi32(1 + stepG + stepB);
  const __m256 zero = _mm256_setzero_ps(), edge = _mm256_set1_ps((float)(size - 1)), white = _mm256_set1_ps(255);
  const __m256 ones = _mm256_set1_ps(1), d = _mm256_loadu_ps(dither);
  const __m256 scale[3] = {_mm256_set1_ps(unit.x), _mm256_set1_ps(unit.y), _mm256_set1_ps(unit.z)};
  const __m256i low11 = _mm256_set1_epi32(2047);
  __m256 m[12];
  for (int k = 0; k < 12; k++) m[k] = _mm256_set1_ps(matrix[k]);
  const __m256i alpha = _mm256_set1_epi32((int)0xFF000000u);
  int i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 Y = _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(y + i))));
    const __m256 U = _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(cb + i))));
    const __m256 V = _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(cr + i))));
    __m256 c[3], f[3];
    __m256i cell[3];
    for (int k = 0; k < 3; k++) {
      // matrix row k: (Y, U, V, 1) as the scalar loop's columns add them, in its order.
      __m256 v = _mm256_add_ps(
          _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(m[4 * k], Y), _mm256_mul_ps(m[4 * k + 1], U)),
                        _mm256_mul_ps(m[4 * k + 2], V)),
          m[4 * k + 3]);
      c[k] = _mm256_min_ps(_mm256_max_ps(v, zero), edge);
      cell[k] = _mm256_min_epi32(_mm256_cvttps_epi32(c[k]), top);
      f[k] = _mm256_sub_ps(c[k], _mm256_cvtepi32_ps(cell[k]));
    }
    const __m256 hi = _mm256_max_ps(_mm256_max_ps(f[0], f[1]), f[2]);
    const __m256 lo = _mm256_min_ps(_mm256_min_ps(f[0], f[1]), f[2]);
    const __m256 mid = _mm256_sub_ps(_mm256_sub_ps(_mm256_add_ps(_mm256_add_ps(f[0], f[1]), f[2]), hi), lo);
    // Offsets (in points) of the second and third corners, and the first's index.
    const __m256i o1 = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(f[0], hi, _CMP_GE_OQ)), rStep),
                         _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(f[1], hi, _CMP_GE_OQ)), gStep)),
        _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(f[2], hi, _CMP_GE_OQ)), bStep));
    const __m256i o2 = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(f[0], lo, _CMP_GT_OQ)), rStep),
                         _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(f[1], lo, _CMP_GT_OQ)), gStep)),
        _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(f[2], lo, _CMP_GT_OQ)), bStep));
    const __m256i p0 = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_mullo_epi32(cell[2], bStep), _mm256_mullo_epi32(cell[1], gStep)), cell[0]);
    const __m256i p1 = _mm256_add_epi32(p0, o1), p2 = _mm256_add_epi32(p0, o2), p3 = _mm256_add_epi32(p0, far);
    const __m256 w0 = _mm256_sub_ps(ones, hi), w1 = _mm256_sub_ps(hi, mid), w2 = _mm256_sub_ps(mid, lo);
    // Each corner's channels as floats, unpacked from its word.
    __m256 corner[4][3];
    const __m256i at[4] = {p0, p1, p2, p3};
    for (int n = 0; n < 4; n++) {
      const __m256i v = _mm256_i32gather_epi32((const int *)grid, at[n], 4);
      corner[n][0] = _mm256_cvtepi32_ps(_mm256_and_si256(v, low11));
      corner[n][1] = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(v, 11), low11));
      corner[n][2] = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 22));
    }
    __m256i code[3];
    for (int k = 0; k < 3; k++) {
      __m256 t = _mm256_mul_ps(corner[0][k], w0);
      t = _mm256_add_ps(t, _mm256_mul_ps(corner[1][k], w1));
      t = _mm256_add_ps(t, _mm256_mul_ps(corner[2][k], w2));
      t = _mm256_add_ps(t, _mm256_mul_ps(corner[3][k], lo));
      t = _mm256_add_ps(_mm256_mul_ps(t, scale[k]), d);
      code[k] = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(t, zero), white));
    }
    const __m256i first = bgra ? code[2] : code[0], third = bgra ? code[0] : code[2];
    const __m256i px = _mm256_or_si256(
        _mm256_or_si256(alpha, _mm256_slli_epi32(third, 16)), _mm256_or_si256(_mm256_slli_epi32(code[1], 8), first));
    _mm256_storeu_si256((__m256i *)(out + i), px);
  }
  return i;
}
#endif
