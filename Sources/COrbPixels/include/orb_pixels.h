#ifndef ORB_PIXELS_H
#define ORB_PIXELS_H

#include <stdint.h>

/// Tone-maps one row of 16-bit Y'CbCr through the HDR table (CPUToneMapper, shaders/hdrlut.glsl's
/// hdr_lut_sample): each pixel's Y'CbCr becomes R'G'B' grid coordinates by `matrix` (three rows of four floats,
/// already in grid units: a sample in, a coordinate out), is looked up tetrahedrally in `grid` (size^3 points of
/// four floats, 16-byte aligned, r fastest, the encoded SDR signal in 8-bit code units), gets the ordered dither's
/// offset for its column (`dither`, 8 values, x & 7 from the row's first pixel, +0.5 for rounding included) and is
/// written as an opaque 8-bit pixel, BGRA in memory when `bgra`, else RGBA.
void orb_tone_map_row(const uint16_t *y, const uint16_t *cb, const uint16_t *cr, int count, const float matrix[12],
                      const float *grid, int size, const float dither[8], int bgra, uint32_t *out);

#endif
