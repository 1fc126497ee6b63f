#include "orb_fields.h"

#include <string.h>

// The rows one missing line is made from. `up`/`down` are cur's lines above and below it (the kept field),
// `p_up`/`p_down` and `n_up`/`n_down` the same lines of the pictures before and after; `before`/`after` are the
// missing line itself in the two pictures that hold the missing field nearest in time, and `before_a`/`after_a`,
// `before_b`/`after_b` the missing field's lines two above and two below in them.
typedef struct {
  const void *up, *down, *p_up, *p_down, *n_up, *n_down, *before, *after, *before_a, *after_a, *before_b, *after_b;
} orb_field_rows;

static inline int orb_abs(int a) { return a < 0 ? -a : a; }
static inline int orb_min(int a, int b) { return a < b ? a : b; }
static inline int orb_max(int a, int b) { return a > b ? a : b; }

// One sample of a missing line, from the rows the line function holds (`up`, `down`, ... as `orb_field_rows`).
// Written without branches (every direction scored, the best kept by selection) so that the compiler turns the loop
// over a row into vector code; `directional` is 0 within three samples of a row's ends, where only straight up and
// down is looked at.
#define ORB_FIELD_SAMPLE(x, s, directional)                                                                        \
  ({                                                                                                               \
    int c = up[x], e = down[x];                                                                                    \
    int d = (before[x] + after[x]) >> 1;                                                                           \
    /* How much this place changes over time: between the two missing fields, and in the kept lines from the */    \
    /* picture before and to the one after. */                                                                    \
    int still = orb_abs(before[x] - after[x]) >> 1;                                                                \
    int from_prev = (orb_abs(p_up[x] - c) + orb_abs(p_down[x] - e)) >> 1;                                          \
    int to_next = (orb_abs(n_up[x] - c) + orb_abs(n_down[x] - e)) >> 1;                                            \
    int diff = orb_max(still, orb_max(from_prev, to_next));                                                        \
    /* Between the lines above and below, along the direction (of five) where they agree best: a step of one */    \
    /* sample either way is tried, and a step of two only where one did better than straight. */                  \
    int pred = (c + e) >> 1;                                                                                       \
    if (directional) {                                                                                             \
      int best = orb_abs(up[x - s] - down[x - s]) + orb_abs(c - e) + orb_abs(up[x + s] - down[x + s]) - 1;         \
      int l1 = orb_abs(up[x - 2 * s] - down[x]) + orb_abs(up[x - s] - down[x + s]) +                               \
               orb_abs(up[x] - down[x + 2 * s]);                                                                   \
      int l2 = orb_abs(up[x - 3 * s] - down[x + s]) + orb_abs(up[x - 2 * s] - down[x + 2 * s]) +                   \
               orb_abs(up[x - s] - down[x + 3 * s]);                                                               \
      int r1 = orb_abs(up[x] - down[x - 2 * s]) + orb_abs(up[x + s] - down[x - s]) +                               \
               orb_abs(up[x + 2 * s] - down[x]);                                                                   \
      int r2 = orb_abs(up[x + s] - down[x - 3 * s]) + orb_abs(up[x + 2 * s] - down[x - 2 * s]) +                   \
               orb_abs(up[x + 3 * s] - down[x - s]);                                                               \
      int take = l1 < best;                                                                                        \
      best = take ? l1 : best;                                                                                     \
      pred = take ? (up[x - s] + down[x + s]) >> 1 : pred;                                                         \
      take = take & (l2 < best);                                                                                   \
      best = take ? l2 : best;                                                                                     \
      pred = take ? (up[x - 2 * s] + down[x + 2 * s]) >> 1 : pred;                                                 \
      take = r1 < best;                                                                                            \
      best = take ? r1 : best;                                                                                     \
      pred = take ? (up[x + s] + down[x - s]) >> 1 : pred;                                                         \
      take = take & (r2 < best);                                                                                   \
      pred = take ? (up[x + 2 * s] + down[x - 2 * s]) >> 1 : pred;                                                 \
    }                                                                                                              \
    /* Where the missing field, in the pictures around, changes from two lines above and below as the kept */      \
    /* lines do, the range widens by it: the interpolation is not held to the temporal average there. */           \
    int b = (before_a[x] + after_a[x]) >> 1;                                                                       \
    int f = (before_b[x] + after_b[x]) >> 1;                                                                       \
    int hi = orb_max(orb_max(d - e, d - c), orb_min(b - c, f - e));                                                \
    int lo = orb_min(orb_min(d - e, d - c), orb_max(b - c, f - e));                                                \
    diff = check ? orb_max(diff, orb_max(lo, -hi)) : diff;                                                         \
    orb_min(orb_max(pred, d - diff), d + diff);                                                                    \
  })

// Sixteen samples of a missing line at once, as ORB_FIELD_SAMPLE makes one, in 16-bit lanes: 8-bit samples, and
// 16-bit words of up to 12 significant bits (the sums of three differences reach 3 x 4095, within a lane). Clang's
// vector extensions, so the same code is SSE2 or AVX2 as the function is built. The result is the same, sample
// for sample.
typedef int16_t orb_i16x16 __attribute__((vector_size(32)));
typedef uint8_t orb_u8x16 __attribute__((vector_size(16)));
typedef uint16_t orb_u16x16 __attribute__((vector_size(32)));

// Sixteen samples of the row's type (`orb_row_vector`, the line function's) at `p` in 16-bit lanes. (A macro: a
// function returning a 32-byte vector would have two calling conventions, with AVX and without.)
#define orb_load16(p)                                                                                              \
  ({                                                                                                               \
    orb_row_vector loaded_;                                                                                        \
    memcpy(&loaded_, (p), sizeof loaded_);                                                                         \
    __builtin_convertvector(loaded_, orb_i16x16);                                                                  \
  })
#define VABS(a) __builtin_elementwise_abs(a)
#define VMIN(a, b) __builtin_elementwise_min(a, b)
#define VMAX(a, b) __builtin_elementwise_max(a, b)
#define VSEL(mask, a, b) (((mask) & (a)) | (~(mask) & (b)))

#define ORB_FIELD_VECTOR(x, s)                                                                                     \
  do {                                                                                                             \
    orb_i16x16 c = orb_load16(up + (x)), e = orb_load16(down + (x));                                               \
    orb_i16x16 bf = orb_load16(before + (x)), af = orb_load16(after + (x));                                        \
    orb_i16x16 d = (bf + af) >> 1;                                                                                 \
    orb_i16x16 diff = VMAX(VABS(bf - af) >> 1,                                                                     \
                           VMAX((VABS(orb_load16(p_up + (x)) - c) + VABS(orb_load16(p_down + (x)) - e)) >> 1,      \
                                (VABS(orb_load16(n_up + (x)) - c) + VABS(orb_load16(n_down + (x)) - e)) >> 1));    \
    orb_i16x16 um1 = orb_load16(up + (x) - (s)), um2 = orb_load16(up + (x) - 2 * (s));                             \
    orb_i16x16 um3 = orb_load16(up + (x) - 3 * (s)), up1 = orb_load16(up + (x) + (s));                             \
    orb_i16x16 up2 = orb_load16(up + (x) + 2 * (s)), up3 = orb_load16(up + (x) + 3 * (s));                         \
    orb_i16x16 dm1 = orb_load16(down + (x) - (s)), dm2 = orb_load16(down + (x) - 2 * (s));                         \
    orb_i16x16 dm3 = orb_load16(down + (x) - 3 * (s)), dp1 = orb_load16(down + (x) + (s));                         \
    orb_i16x16 dp2 = orb_load16(down + (x) + 2 * (s)), dp3 = orb_load16(down + (x) + 3 * (s));                     \
    orb_i16x16 pred = (c + e) >> 1;                                                                                \
    orb_i16x16 best = VABS(um1 - dm1) + VABS(c - e) + VABS(up1 - dp1) - 1;                                         \
    orb_i16x16 score = VABS(um2 - e) + VABS(um1 - dp1) + VABS(c - dp2);                                            \
    orb_i16x16 take = score < best;                                                                                \
    best = VSEL(take, score, best);                                                                                \
    pred = VSEL(take, (um1 + dp1) >> 1, pred);                                                                     \
    score = VABS(um3 - dp1) + VABS(um2 - dp2) + VABS(um1 - dp3);                                                   \
    take = take & (score < best);                                                                                  \
    best = VSEL(take, score, best);                                                                                \
    pred = VSEL(take, (um2 + dp2) >> 1, pred);                                                                     \
    score = VABS(c - dm2) + VABS(up1 - dm1) + VABS(up2 - e);                                                       \
    take = score < best;                                                                                           \
    best = VSEL(take, score, best);                                                                                \
    pred = VSEL(take, (up1 + dm1) >> 1, pred);                                                                     \
    score = VABS(up1 - dm3) + VABS(up2 - dm2) + VABS(up3 - dm1);                                                   \
    take = take & (score < best);                                                                                  \
    pred = VSEL(take, (up2 + dm2) >> 1, pred);                                                                     \
    orb_i16x16 b = (orb_load16(before_a + (x)) + orb_load16(after_a + (x))) >> 1;                                  \
    orb_i16x16 f = (orb_load16(before_b + (x)) + orb_load16(after_b + (x))) >> 1;                                  \
    orb_i16x16 hi = VMAX(VMAX(d - e, d - c), VMIN(b - c, f - e));                                                  \
    orb_i16x16 lo = VMIN(VMIN(d - e, d - c), VMAX(b - c, f - e));                                                  \
    diff = check ? VMAX(diff, VMAX(lo, -hi)) : diff;                                                               \
    orb_row_vector result =                                                                                        \
        __builtin_convertvector(VMIN(VMAX(pred, d - diff), d + diff), orb_row_vector);                             \
    memcpy(out + (x), &result, sizeof result);                                                                     \
  } while (0)

// A row's loop: the rows as local restrict pointers, so that a store to `out` is known to change none of them.
// `V` is the vector of sixteen `T`; `vector` says whether this row's samples fit the 16-bit lanes; `check` whether the
// missing field's lines two above and below take part (not next to the picture's first or last line, where one of
// them is outside it).
#define ORB_FIELD_LINE(NAME, T, V, ATTRIBUTES)                                                                     \
  ATTRIBUTES static void NAME(T *restrict out, const orb_field_rows *rows, int width, int s, int vector, int check) { \
    typedef V orb_row_vector;                                                                                      \
    const T *restrict up = rows->up, *restrict down = rows->down;                                                 \
    const T *restrict p_up = rows->p_up, *restrict p_down = rows->p_down;                                         \
    const T *restrict n_up = rows->n_up, *restrict n_down = rows->n_down;                                         \
    const T *restrict before = rows->before, *restrict after = rows->after;                                       \
    const T *restrict before_a = rows->before_a, *restrict after_a = rows->after_a;                               \
    const T *restrict before_b = rows->before_b, *restrict after_b = rows->after_b;                               \
    int edge = orb_min(3 * s, width);                                                                              \
    for (int x = 0; x < edge; x++) out[x] = (T)ORB_FIELD_SAMPLE(x, s, 0);                                          \
    ptrdiff_t x = edge;                                                                                            \
    if (vector && s == 1) {                                                                                        \
      for (; x + 3 + 16 <= width; x += 16) ORB_FIELD_VECTOR(x, 1);                                                 \
    } else if (vector) {                                                                                           \
      for (; x + 6 + 16 <= width; x += 16) ORB_FIELD_VECTOR(x, 2);                                                 \
    } else if (s == 1) {                                                                                           \
      /* Vector code asked for: clang's cost model, left to itself, kept this loop scalar, twice as slow. */       \
      _Pragma("clang loop vectorize(enable)")                                                                      \
      for (; x < width - 3; x++) out[x] = (T)ORB_FIELD_SAMPLE(x, 1, 1);                                            \
    } else {                                                                                                       \
      _Pragma("clang loop vectorize(enable)")                                                                      \
      for (; x < width - 6; x++) out[x] = (T)ORB_FIELD_SAMPLE(x, 2, 1);                                            \
    }                                                                                                              \
    for (; x < width - 3 * s; x++) out[x] = (T)ORB_FIELD_SAMPLE(x, s, 1);                                          \
    for (int x = orb_max(edge, width - 3 * s); x < width; x++) out[x] = (T)ORB_FIELD_SAMPLE(x, s, 0);              \
  }

ORB_FIELD_LINE(orb_field_line8, uint8_t, orb_u8x16, )
ORB_FIELD_LINE(orb_field_line16, uint16_t, orb_u16x16, )
#if defined(__x86_64__)
ORB_FIELD_LINE(orb_field_line8_avx2, uint8_t, orb_u8x16, __attribute__((target("avx2"))))
ORB_FIELD_LINE(orb_field_line16_avx2, uint16_t, orb_u16x16, __attribute__((target("avx2"))))
#endif

void orb_make_field_lines(const orb_field_job *job) {
  const int h = job->height, bytes = job->bytes;
  const size_t row_bytes = (size_t)job->width * (size_t)bytes;
  // The pictures holding the missing field nearest in time, before and after.
  const uint8_t *before = job->missing_is_later ? job->prev : job->cur;
  const uint8_t *after = job->missing_is_later ? job->cur : job->next;
  const ptrdiff_t before_stride = job->missing_is_later ? job->prev_stride : job->cur_stride;
  const ptrdiff_t after_stride = job->missing_is_later ? job->cur_stride : job->next_stride;
  void (*line8)(uint8_t *, const orb_field_rows *, int, int, int, int) = orb_field_line8;
  void (*line16)(uint16_t *, const orb_field_rows *, int, int, int, int) = orb_field_line16;
  const int vector = bytes == 1 || job->bits <= 12;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    line8 = orb_field_line8_avx2;
    line16 = orb_field_line16_avx2;
  }
#endif
#define ROW(base, stride, y) ((const void *)((base) + (ptrdiff_t)(y) * (stride)))
  for (int y = 0; y < h; y++) {
    uint8_t *out = job->dst + (ptrdiff_t)y * job->dst_stride;
    if ((y & 1) != job->missing || h < 2) {
      memcpy(out, ROW(job->cur, job->cur_stride, y), row_bytes);
      continue;
    }
    // At the first and last lines, the line beyond is the one on the other side (as yadif has it), and the one
    // two beyond too; on the second and the last but one, two beyond is outside and that check is left out.
    const int towards_top = y > 0 ? -1 : 1, towards_bottom = y + 1 < h ? 1 : -1;
    const int above = y + towards_top, below = y + towards_bottom;
    const int above2 = orb_min(orb_max(y + 2 * towards_top, 0), h - 1);
    const int below2 = orb_min(orb_max(y + 2 * towards_bottom, 0), h - 1);
    const int check = y != 1 && y + 2 != h;
    const orb_field_rows rows = {
        .up = ROW(job->cur, job->cur_stride, above),
        .down = ROW(job->cur, job->cur_stride, below),
        .p_up = ROW(job->prev, job->prev_stride, above),
        .p_down = ROW(job->prev, job->prev_stride, below),
        .n_up = ROW(job->next, job->next_stride, above),
        .n_down = ROW(job->next, job->next_stride, below),
        .before = ROW(before, before_stride, y),
        .after = ROW(after, after_stride, y),
        .before_a = ROW(before, before_stride, above2),
        .after_a = ROW(after, after_stride, above2),
        .before_b = ROW(before, before_stride, below2),
        .after_b = ROW(after, after_stride, below2),
    };
    if (bytes == 1) {
      line8(out, &rows, job->width, job->step, vector, check);
    } else {
      line16((uint16_t *)(void *)out, &rows, job->width, job->step, vector, check);
    }
  }
#undef ROW
}
