#ifndef ORB_PIXELS_H
#define ORB_PIXELS_H

#include <stddef.h>
#include <stdint.h>

#include "orb_fields.h"

/// A point of the tone-mapping table: the encoded SDR signal's three channels in one 32-bit word, so that a pixel's
/// four corners are four loads (eight pixels' corners four AVX2 gathers): R in bits 0-10 and G in bits 11-21 in
/// eighths of an 8-bit code (0...2040), B in bits 22-31 in quarters (0...1020). A value is at most 1/16 of a code
/// from the table's (1/8 for blue, which weighs least in what the eye sees as light), far below the ordered dither's
/// half a code.
#define ORB_TABLE_RG_STEPS 8
#define ORB_TABLE_B_STEPS 4

/// The table point for the SDR signal (r, g, b) in 8-bit codes (each clamped to 0...255).
static inline uint32_t orb_table_point(double r, double g, double b) {
  double v[3] = {r * ORB_TABLE_RG_STEPS, g * ORB_TABLE_RG_STEPS, b * ORB_TABLE_B_STEPS};
  const double top[3] = {255 * ORB_TABLE_RG_STEPS, 255 * ORB_TABLE_RG_STEPS, 255 * ORB_TABLE_B_STEPS};
  uint32_t q[3];
  for (int k = 0; k < 3; k++) {
    const double c = v[k] < 0 ? 0 : v[k] > top[k] ? top[k] : v[k];
    q[k] = (uint32_t)(c + 0.5);
  }
  return q[0] | q[1] << 11 | q[2] << 22;
}

/// Tone-maps one row of 16-bit Y'CbCr through the HDR table (CPUToneMapper, shaders/hdrlut.glsl's
/// hdr_lut_sample): each pixel's Y'CbCr becomes R'G'B' grid coordinates by `matrix` (three rows of four floats,
/// already in grid units: a sample in, a coordinate out), is looked up tetrahedrally in `grid` (size^3 points made by
/// `orb_table_point`, r fastest), gets the ordered dither's offset for its column (`dither`, 8 values, x & 7 from the
/// row's first pixel, +0.5 for rounding included) and is written as an opaque 8-bit pixel, BGRA in memory when
/// `bgra`, else RGBA.
void orb_tone_map_row(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count, const float matrix[12],
                      const uint32_t *grid, int size, const float dither[8], int bgra, uint32_t *out);

/// `orb_tone_map_row` one pixel at a time, as on a CPU without AVX2: the same bytes (tests hold the two together).
void orb_tone_map_row_portable(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count,
                               const float matrix[12], const uint32_t *grid, int size, const float dither[8], int bgra,
                               uint32_t *out);

/// One plane for `orb_measure_light`: `base` the first row, `stride` bytes from one row to the next, the size in
/// samples (an interleaved CbCr plane counts a Cb and Cr pair as one).
typedef struct {
  const uint8_t *base;
  ptrdiff_t stride;
  int width, height;
} orb_light_plane;

/// What `orb_measure_light` measures (FrameLight.measure): a 4:2:0 picture's light on a grid of points `step`
/// chroma samples apart, each point a 2x2 block of luma (the brighter row of each column) with the chroma of its
/// even column and, for its odd column, the chroma halfway to the next (`halfway`: the filter's weights for the
/// pairs 0.5, 1.5 and 2.5 samples away).
typedef struct {
  orb_light_plane y, cb, cr;  /// `cr` is `cb` again when `semi_planar` (Cb and Cr interleaved).
  int chroma_width, chroma_height;
  int semi_planar, two_bytes;  /// `two_bytes`: 16-bit samples, else 8-bit.
  int step;
  /// R' = rows[0] Y + rows[1] Cb + rows[2] Cr + rows[3] (raw samples in), G' and B' likewise.
  double rows[12];
  double halfway[3];
  /// At each of `size` + 1 signal steps, the light and then its log for the mean (PQ): 2 (size + 1) doubles.
  const double *table;
  int size;
  /// HLG: the table's light is scene light per channel, which the OOTF (`gamma`, `content_peak`, `luma`) takes to nits; the
  /// log is then of the nits, not below `average_floor`.
  int hlg;
  double gamma, content_peak, luma[3], average_floor;
} orb_light_job;

/// The brightest point (max(R, G, B) in nits) at `peak`, the sum of the points' logs at `log_sum`; returns how many
/// points there were, or -1 when memory ran out.
long orb_measure_light(const orb_light_job *job, double *peak, double *log_sum);

/// `orb_measure_light` one point at a time, as on a CPU without AVX2: the same doubles (tests hold the two together).
long orb_measure_light_portable(const orb_light_job *job, double *peak, double *log_sum);

#endif
