#ifndef ORB_FIELDS_H
#define ORB_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/// One plane of an interlaced picture made whole: the lines of the kept field are copied from `cur`, the others
/// (those whose parity is `missing`: 0 even, 1 odd) are made from the pictures around it, by the rule of yadif
/// (FFmpeg's "yet another deinterlacing filter"): an edge-directed interpolation between the lines above and below,
/// kept within the range the same place takes in the fields before and after, so that still areas keep their full
/// detail and moving ones show no combing. At the picture's first and last lines it looks at the lines on the other
/// side, as yadif does.
typedef struct {
  uint8_t *dst;
  ptrdiff_t dst_stride;
  /// The pictures before, at and after this one; the same plane of each, all `width` x `height`. Where there is
  /// none (the first picture, the last), pass `cur`.
  const uint8_t *prev, *cur, *next;
  ptrdiff_t prev_stride, cur_stride, next_stride;
  /// Samples a row, counting every component of an interleaved plane, and rows.
  int width, height;
  /// Parity of the lines to make.
  int missing;
  /// 1: the missing field was taken after the kept one (the picture's second field), so its nearest samples in
  /// time are `prev`'s and `cur`'s own; 0: it was taken before it, and they are `cur`'s and `next`'s.
  int missing_is_later;
  /// Bytes a sample: 1, or 2 (native-endian 16-bit words).
  int bytes;
  /// Significant bits of a sample (8 to 16): up to 12 fit the fast path's 16-bit lanes.
  int bits;
  /// Samples from one to the next of the same component in a row: 1, or 2 in an interleaved CbCr plane.
  int step;
} orb_field_job;

void orb_make_field_lines(const orb_field_job *job);

#endif
