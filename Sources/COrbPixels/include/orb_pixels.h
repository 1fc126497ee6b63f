#ifndef ORB_PIXELS_H
#define ORB_PIXELS_H

#include <stddef.h>
#include <stdint.h>

/// What one 8-bit code is in the tone-mapping table's 16-bit values.
#define ORB_TABLE_ONE 256

/// Tone-maps one row of 16-bit Y'CbCr through the HDR table (CPUToneMapper, shaders/hdrlut.glsl's
/// hdr_lut_sample): each pixel's Y'CbCr becomes R'G'B' grid coordinates by `matrix` (three rows of four floats,
/// already in grid units: a sample in, a coordinate out), is looked up tetrahedrally in `grid` (size^3 points of
/// three 16-bit values, r fastest, the encoded SDR signal in `ORB_TABLE_ONE`ths of an 8-bit code, then one 16-bit
/// value more, which is read with the last point and not used), gets the ordered dither's
/// offset for its column (`dither`, 8 values, x & 7 from the row's first pixel, +0.5 for rounding included) and is
/// written as an opaque 8-bit pixel, BGRA in memory when `bgra`, else RGBA.
void orb_tone_map_row(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count, const float matrix[12],
                      const uint16_t *grid, int size, const float dither[8], int bgra, uint32_t *out);

/// `orb_tone_map_row` one pixel at a time, as on a CPU without AVX2: the same bytes (tests hold the two together).
void orb_tone_map_row_portable(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count,
                               const float matrix[12], const uint16_t *grid, int size, const float dither[8], int bgra,
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
