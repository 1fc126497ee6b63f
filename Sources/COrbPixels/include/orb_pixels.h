#ifndef ORB_PIXELS_H
#define ORB_PIXELS_H

#include <stdint.h>

/// What one 8-bit code is in the tone-mapping table's 16-bit values.
#define ORB_TABLE_ONE 256

/// Tone-maps one row of 16-bit Y'CbCr through the HDR table (CPUToneMapper, shaders/hdrlut.glsl's
/// hdr_lut_sample): each pixel's Y'CbCr becomes R'G'B' grid coordinates by `matrix` (three rows of four floats,
/// already in grid units: a sample in, a coordinate out), is looked up tetrahedrally in `grid` (size^3 points of
/// four 16-bit values, 8-byte aligned, r fastest, the encoded SDR signal in `ORB_TABLE_ONE`ths of an 8-bit code; the
/// fourth is not read), gets the ordered dither's
/// offset for its column (`dither`, 8 values, x & 7 from the row's first pixel, +0.5 for rounding included) and is
/// written as an opaque 8-bit pixel, BGRA in memory when `bgra`, else RGBA.
void orb_tone_map_row(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count, const float matrix[12],
                      const uint16_t *grid, int size, const float dither[8], int bgra, uint32_t *out);

/// `orb_tone_map_row` one pixel at a time, as on a CPU without AVX2: the same bytes (tests hold the two together).
void orb_tone_map_row_portable(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count,
                               const float matrix[12], const uint16_t *grid, int size, const float dither[8], int bgra,
                               uint32_t *out);

#endif
