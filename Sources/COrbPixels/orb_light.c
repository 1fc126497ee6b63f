#include "orb_pixels.h"

#include <math.h>
#pragma clang fp contract(off)
#include <stdlib.h>

// FrameLight.measure's loop in C: the Swift loop (generic over the sample type, its per-tap closures not inlined)
// took 13 % of all CPU time of HDR10 1080p playback in `perf`, about 4 ms a picture. Each grid row goes in two
// passes: the samples of every point (scalar loads, the halfway chroma filter) into rows of doubles, then the
// matrix, the clamp, the brightest channel and the table, four points at a time where the CPU has AVX2. The
// arithmetic is FrameLight's, operation for operation and in its order (no fused multiply-add; the logs are summed
// one point after another), so the wide and the one-at-a-time paths give the same doubles.

// One grid row's inputs: luma (brighter of the two rows) and chroma of the even and the odd column of each point.
typedef struct {
  double *lumaE, *lumaO, *uE, *vE, *uO, *vO, *logs;
} row_scratch;

static inline int min_i(int a, int b) { return b < a ? b : a; }
static inline int max_i(int a, int b) { return b > a ? b : a; }

// Swift's max and min for the values here (never NaN; a zero's sign comes out as Swift's in clamp01), in the form
// the compiler makes one maxsd/minsd of: as Swift writes them they became branches, mispredicted on busy pictures.
static inline double max_d(double a, double b) { return a > b ? a : b; }
static inline double min_d(double a, double b) { return a < b ? a : b; }

// Sample `i` of a row of 8-bit (`two` 0) or 16-bit samples.
static inline double at(const uint8_t *row, int i, int two) {
  return two ? (double)((const uint16_t *)row)[i] : (double)row[i];
}

// The samples of grid row `cy`: `n` points, `step` chroma columns apart. `two` and `semi` are constants where it is
// called, so each kind of picture gets a loop of its own with no test per sample.
__attribute__((always_inline)) static inline void gather_kind(const orb_light_job *job, int cy, int n,
                                                              row_scratch *s, const int two, const int semi) {
  const int step = job->step, last = job->chroma_width - 1, lumaLast = job->y.width - 1;
  const uint8_t *y0 = job->y.base + (ptrdiff_t)min_i(cy * 2, job->y.height - 1) * job->y.stride;
  const uint8_t *y1 = job->y.base + (ptrdiff_t)min_i(cy * 2 + 1, job->y.height - 1) * job->y.stride;
  const uint8_t *cb = job->cb.base + (ptrdiff_t)min_i(cy, job->cb.height - 1) * job->cb.stride;
  const uint8_t *cr = job->cr.base + (ptrdiff_t)min_i(cy, job->cr.height - 1) * job->cr.stride;
  const double w0 = job->halfway[0], w1 = job->halfway[1], w2 = job->halfway[2];
  for (int k = 0; k < n; k++) {
    const int cx = k * step;
    const int x0 = min_i(cx * 2, lumaLast), x1 = min_i(cx * 2 + 1, lumaLast);
    double u[6], v[6];  // chroma columns cx-2 ... cx+3, clamped to the picture
    if (cx >= 2 && cx + 3 <= last) {
      for (int t = 0; t < 6; t++) {
        u[t] = at(cb, semi ? (cx - 2 + t) * 2 : cx - 2 + t, two);
        v[t] = at(cr, semi ? (cx - 2 + t) * 2 + 1 : cx - 2 + t, two);
      }
    } else {
      for (int t = 0; t < 6; t++) {
        const int c = min_i(max_i(cx - 2 + t, 0), last);
        u[t] = at(cb, semi ? c * 2 : c, two);
        v[t] = at(cr, semi ? c * 2 + 1 : c, two);
      }
    }
    s->lumaE[k] = max_d(at(y0, x0, two), at(y1, x0, two));
    s->lumaO[k] = max_d(at(y0, x1, two), at(y1, x1, two));
    s->uE[k] = u[2];
    s->vE[k] = v[2];
    s->uO[k] = w0 * (u[2] + u[3]) + w1 * (u[1] + u[4]) + w2 * (u[0] + u[5]);
    s->vO[k] = w0 * (v[2] + v[3]) + w1 * (v[1] + v[4]) + w2 * (v[0] + v[5]);
  }
}

static void gather_row(const orb_light_job *job, int cy, int n, row_scratch *s) {
  if (job->two_bytes) {
    if (job->semi_planar) gather_kind(job, cy, n, s, 1, 1);
    else gather_kind(job, cy, n, s, 1, 0);
  } else {
    if (job->semi_planar) gather_kind(job, cy, n, s, 0, 1);
    else gather_kind(job, cy, n, s, 0, 0);
  }
}

static inline double clamp01(double x) { return min_d(max_d(x, 0), 1); }

// The table's light (`log` 0) or log (`log` 1) at `signal`, interpolated between its steps.
static inline double lookup(const double *table, int size, double signal, int log) {
  const double position = signal * (double)size;
  const int i = min_i((int)position, size - 1);
  const double f = position - (double)i;
  const double a = table[2 * i + log], b = table[2 * i + 2 + log];
  return a + f * (b - a);
}

// One point's brightest channel in nits and its log (FrameLight's `light`).
static inline void light(const orb_light_job *job, double luma, double u, double v, double *m, double *lg) {
  const double *k = job->rows;
  const double r = clamp01(k[0] * luma + k[1] * u + k[2] * v + k[3]);
  const double g = clamp01(k[4] * luma + k[5] * u + k[6] * v + k[7]);
  const double b = clamp01(k[8] * luma + k[9] * u + k[10] * v + k[11]);
  if (!job->hlg) {
    const double top = max_d(r, max_d(g, b));
    *m = lookup(job->table, job->size, top, 0);
    *lg = lookup(job->table, job->size, top, 1);
    return;
  }
  const double sr = lookup(job->table, job->size, r, 0), sg = lookup(job->table, job->size, g, 0),
               sb = lookup(job->table, job->size, b, 0);
  const double ys = sr * job->luma[0] + sg * job->luma[1] + sb * job->luma[2];
  *m = ys > 0 ? job->content_peak * pow(ys, job->gamma - 1) * max_d(max_d(sr, sg), sb) : 0;
  *lg = log(max_d(*m, job->average_floor));
}

// Points `k` to `n` of a row, one at a time: the brightest and each point's log.
static double light_from(const orb_light_job *job, int k, int n, const row_scratch *s, double peak) {
  for (; k < n; k++) {
    double me, le, mo, lo;
    light(job, s->lumaE[k], s->uE[k], s->vE[k], &me, &le);
    light(job, s->lumaO[k], s->uO[k], s->vO[k], &mo, &lo);
    const double m = me >= mo ? me : mo;
    s->logs[k] = me >= mo ? le : lo;
    peak = max_d(peak, m);
  }
  return peak;
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static inline void light4(const orb_light_job *job, __m256d luma, __m256d u,
                                                           __m256d v, __m256d *m, __m256d *lg) {
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1);
  __m256d c[3];
  for (int i = 0; i < 3; i++) {
    const double *k = job->rows + 4 * i;
    const __m256d x = _mm256_add_pd(
        _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(k[0]), luma), _mm256_mul_pd(_mm256_set1_pd(k[1]), u)),
                      _mm256_mul_pd(_mm256_set1_pd(k[2]), v)),
        _mm256_set1_pd(k[3]));
    // min(max(x, 0), 1) as Swift takes it: the inputs are never NaN, so the operand order does not matter.
    c[i] = _mm256_min_pd(_mm256_max_pd(x, zero), one);
  }
  const __m256d top = _mm256_max_pd(c[0], _mm256_max_pd(c[1], c[2]));
  const __m256d position = _mm256_mul_pd(top, _mm256_set1_pd((double)job->size));
  const __m128i cell = _mm_min_epi32(_mm256_cvttpd_epi32(position), _mm_set1_epi32(job->size - 1));
  const __m256d f = _mm256_sub_pd(position, _mm256_cvtepi32_pd(cell));
  // Each point's two steps of light and of log lie together in the table: one 32-byte load a point, then a 4x4
  // transpose, where gathering the four values for four points took four gathers (slow on this project's CPUs).
  int at[4];
  _mm_storeu_si128((__m128i *)at, cell);
  const __m256d p0 = _mm256_loadu_pd(job->table + 2 * at[0]), p1 = _mm256_loadu_pd(job->table + 2 * at[1]);
  const __m256d p2 = _mm256_loadu_pd(job->table + 2 * at[2]), p3 = _mm256_loadu_pd(job->table + 2 * at[3]);
  const __m256d t0 = _mm256_unpacklo_pd(p0, p1), t1 = _mm256_unpackhi_pd(p0, p1);  // light, log (two points)
  const __m256d t2 = _mm256_unpacklo_pd(p2, p3), t3 = _mm256_unpackhi_pd(p2, p3);
  const __m256d a = _mm256_permute2f128_pd(t0, t2, 0x20), b = _mm256_permute2f128_pd(t0, t2, 0x31);
  const __m256d la = _mm256_permute2f128_pd(t1, t3, 0x20), lb = _mm256_permute2f128_pd(t1, t3, 0x31);
  *m = _mm256_add_pd(a, _mm256_mul_pd(f, _mm256_sub_pd(b, a)));
  *lg = _mm256_add_pd(la, _mm256_mul_pd(f, _mm256_sub_pd(lb, la)));
}

// PQ points four at a time; returns where the one-at-a-time loop takes over.
__attribute__((target("avx2"))) static int light_avx2(const orb_light_job *job, int n, const row_scratch *s,
                                                      double *peak) {
  __m256d best = _mm256_set1_pd(*peak);
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    __m256d me, le, mo, lo;
    light4(job, _mm256_loadu_pd(s->lumaE + k), _mm256_loadu_pd(s->uE + k), _mm256_loadu_pd(s->vE + k), &me, &le);
    light4(job, _mm256_loadu_pd(s->lumaO + k), _mm256_loadu_pd(s->uO + k), _mm256_loadu_pd(s->vO + k), &mo, &lo);
    const __m256d even = _mm256_cmp_pd(me, mo, _CMP_GE_OQ);
    best = _mm256_max_pd(best, _mm256_blendv_pd(mo, me, even));
    _mm256_storeu_pd(s->logs + k, _mm256_blendv_pd(lo, le, even));
  }
  double lanes[4];
  _mm256_storeu_pd(lanes, best);
  *peak = max_d(max_d(lanes[0], lanes[1]), max_d(lanes[2], lanes[3]));
  return k;
}
#endif

static long measure(const orb_light_job *job, double *peak_out, double *log_sum_out, int wide) {
  const int step = job->step > 0 ? job->step : 1;
  const int n = (job->chroma_width + step - 1) / step;
  *peak_out = 0;
  *log_sum_out = 0;
  if (n <= 0 || job->chroma_height <= 0) return 0;
  double *memory = malloc(sizeof(double) * 7 * (size_t)n);
  if (!memory) return -1;
  row_scratch s = {memory, memory + n, memory + 2 * n, memory + 3 * n, memory + 4 * n, memory + 5 * n,
                   memory + 6 * n};
  double peak = 0, log_sum = 0;
  long count = 0;
  for (int cy = 0; cy < job->chroma_height; cy += step) {
    gather_row(job, cy, n, &s);
    int k = 0;
#if defined(__x86_64__)
    if (wide && !job->hlg && __builtin_cpu_supports("avx2")) k = light_avx2(job, n, &s, &peak);
#else
    (void)wide;
#endif
    peak = light_from(job, k, n, &s, peak);
    for (int i = 0; i < n; i++) log_sum += s.logs[i];
    count += n;
  }
  free(memory);
  *peak_out = peak;
  *log_sum_out = log_sum;
  return count;
}

long orb_measure_light(const orb_light_job *job, double *peak, double *log_sum) {
  return measure(job, peak, log_sum, 1);
}

long orb_measure_light_portable(const orb_light_job *job, double *peak, double *log_sum) {
  return measure(job, peak, log_sum, 0);
}
