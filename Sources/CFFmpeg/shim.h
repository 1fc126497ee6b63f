// Includes of FFmpeg for Swift, and `static inline` helpers for what Swift cannot import:
// function-like macros (AVERROR, MKTAG) and constants defined through them.
#ifndef ORB_CFFMPEG_SHIM_H
#define ORB_CFFMPEG_SHIM_H
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/avstring.h>
#include <libavutil/bprint.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libavutil/time.h>
#include <libavutil/display.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/opt.h>
#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
#include <errno.h>
#include <linux/falloc.h>
#include <sys/syscall.h>
#include <unistd.h>

// AVERROR(e) is a macro.
static inline int orb_averror(int e) { return AVERROR(e); }

// Gives the room of `length` bytes at `offset` of a file back to the file system, its size kept (a hole, which reads
// as zeros): for the spool of a pipe (Spool.swift). glibc declares fallocate only under _GNU_SOURCE, which Swift's
// import of it does not set. 0, or -1 with errno (EOPNOTSUPP where the file system cannot).
static inline int orb_punch_hole(int fd, int64_t offset, int64_t length) {
  return (int)syscall(SYS_fallocate, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (long)offset, (long)length);
}
// AVERROR_EOF, AVERROR_INVALIDDATA etc. are built with FFERRTAG, a macro.
static inline int orb_averror_eof(void) { return AVERROR_EOF; }
static inline int orb_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int orb_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int orb_averror_demuxer_not_found(void) { return AVERROR_DEMUXER_NOT_FOUND; }
static inline int orb_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int orb_averror_patchwelcome(void) { return AVERROR_PATCHWELCOME; }
static inline int orb_averror_http_unauthorized(void) { return AVERROR_HTTP_UNAUTHORIZED; }
static inline int orb_averror_http_forbidden(void) { return AVERROR_HTTP_FORBIDDEN; }
static inline int orb_averror_http_not_found(void) { return AVERROR_HTTP_NOT_FOUND; }
static inline int orb_averror_http_other_4xx(void) { return AVERROR_HTTP_OTHER_4XX; }
static inline int orb_averror_http_server_error(void) { return AVERROR_HTTP_SERVER_ERROR; }
// AV_NOPTS_VALUE is a cast macro Swift does not import.
static inline int64_t orb_nopts_value(void) { return AV_NOPTS_VALUE; }
// Whether a decoded picture holds two fields, and which was taken first (FFmpeg 6.1, libavutil 58.29, moved both
// into `flags`).
#if LIBAVUTIL_VERSION_MAJOR >= 59 || (LIBAVUTIL_VERSION_MAJOR == 58 && LIBAVUTIL_VERSION_MINOR >= 29)
static inline int orb_frame_is_interlaced(const AVFrame *f) { return (f->flags & AV_FRAME_FLAG_INTERLACED) != 0; }
static inline int orb_frame_top_field_first(const AVFrame *f) {
  return (f->flags & AV_FRAME_FLAG_TOP_FIELD_FIRST) != 0;
}
static inline void orb_frame_clear_interlaced(AVFrame *f) {
  f->flags &= ~(AV_FRAME_FLAG_INTERLACED | AV_FRAME_FLAG_TOP_FIELD_FIRST);
}
static inline void orb_frame_set_interlaced(AVFrame *f, int top_field_first) {
  orb_frame_clear_interlaced(f);
  f->flags |= AV_FRAME_FLAG_INTERLACED | (top_field_first ? AV_FRAME_FLAG_TOP_FIELD_FIRST : 0);
}
#else
static inline int orb_frame_is_interlaced(const AVFrame *f) { return f->interlaced_frame; }
static inline int orb_frame_top_field_first(const AVFrame *f) { return f->top_field_first; }
static inline void orb_frame_clear_interlaced(AVFrame *f) {
  f->interlaced_frame = 0;
  f->top_field_first = 0;
}
static inline void orb_frame_set_interlaced(AVFrame *f, int top_field_first) {
  f->interlaced_frame = 1;
  f->top_field_first = top_field_first != 0;
}
#endif
// AV_TIME_BASE_Q is a compound literal.
static inline AVRational orb_time_base_q(void) { return (AVRational){1, AV_TIME_BASE}; }

/// Display rotation in degrees (counter-clockwise, as FFmpeg reports it) of a stream, or 0.
static inline double orb_stream_rotation(const AVStream *st) {
  size_t size = 0;
  const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
  if (!m || size < 9 * 4) return 0;
  double r = av_display_rotation_get((const int32_t *)m);
  return r != r ? 0 : r; // NaN for a degenerate matrix
}

static inline const AVMasteringDisplayMetadata *orb_stream_mastering(const AVStream *st) {
  size_t size = 0;
  const uint8_t *p = av_stream_get_side_data(st, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size);
  return size >= sizeof(AVMasteringDisplayMetadata) ? (const AVMasteringDisplayMetadata *)p : NULL;
}

static inline const AVContentLightMetadata *orb_stream_content_light(const AVStream *st) {
  size_t size = 0;
  const uint8_t *p = av_stream_get_side_data(st, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size);
  return size >= sizeof(AVContentLightMetadata) ? (const AVContentLightMetadata *)p : NULL;
}

static inline const AVMasteringDisplayMetadata *orb_frame_mastering(const AVFrame *f) {
  AVFrameSideData *sd = av_frame_get_side_data(f, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
  return sd ? (const AVMasteringDisplayMetadata *)sd->data : NULL;
}

static inline const AVContentLightMetadata *orb_frame_content_light(const AVFrame *f) {
  AVFrameSideData *sd = av_frame_get_side_data(f, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
  return sd ? (const AVContentLightMetadata *)sd->data : NULL;
}

static inline double orb_frame_rotation(const AVFrame *f) {
  AVFrameSideData *sd = av_frame_get_side_data(f, AV_FRAME_DATA_DISPLAYMATRIX);
  if (!sd || sd->size < 9 * 4) return 0;
  double r = av_display_rotation_get((const int32_t *)sd->data);
  return r != r ? 0 : r;
}

/// The error text FFmpeg gives for a code (av_err2str is a macro around a compound literal).
static inline void orb_av_strerror(int err, char *buf, size_t size) { av_strerror(err, buf, size); }

/// Silences FFmpeg's own logging below `level` (av_log_set_level takes AV_LOG_* which are macros too).
static inline void orb_av_log_quiet(void) { av_log_set_level(AV_LOG_QUIET); }
static inline void orb_av_log_errors(void) { av_log_set_level(AV_LOG_ERROR); }

// Credentials stay with their origin: every resource a demuxer opens beside the first (HLS playlists, keys and
// segments) goes through this io_open, which drops the request headers and cookies when the resource's origin
// (scheme, host, port) is not the media's; at the origin, with a cookie jar, each request's Cookie line is the one
// the jar gives for its own URL (domain and path). A request of a source with credentials is never redirected by
// FFmpeg, which would send them on wherever the redirect points, or, from elsewhere, lead back to the origin without
// them: it is made with max_redirects 0, and when that fails as a redirect does (EIO), the player's own resolver
// follows the redirects with credentials only at the origin, and the request is made again where they end, with the
// credentials when that is the origin. With a bearer token, a redirect from the origin to elsewhere is how a sign-in
// service turns a request away: it is refused, and `refused` says so afterwards.
// The guard lives in ctx->opaque (owned: freed by orb_origin_guard_free when the context closes). `refused` is
// written by the demuxer's thread and read once it has failed.
typedef struct OrbOriginGuard {
  char origin[320];
  int has_token;
  // The user gave credentials (a token, --header, a cookie jar): requests off the origin keep them aside. (Cookies a
  // server set, which FFmpeg's HLS demuxer carries on, are not the user's.)
  int has_credentials;
  volatile int refused;
  // Follows url's redirects (from the origin or elsewhere) with the credentials only at the origin, writing where
  // they end into out: 1 when that is the origin, 0 elsewhere, 2 refused (the origin sent a token elsewhere:
  // sign-in), an AVERROR when it failed.
  int (*resolve)(void *user, const char *url, char *out, int size);
  // Writes the "Cookie: …" line for a request of url into out; returns its length, 0 when no cookie matches. NULL
  // without a cookie jar.
  int (*cookie)(void *user, const char *url, char *out, int size);
  // Hears each request that failed (an HLS rendition or segment answered 404, say), with FFmpeg's code; NULL: none.
  void (*failed)(void *user, const char *url, int code);
  // What was installed with them.
  void *user;
  // What the requests brought in, to measure the throughput while the source opens: the bytes of those closed,
  // the ones still open (16 at most are followed), and when the first began (av_gettime_relative, µs).
  int64_t closed_bytes;
  AVIOContext *open[16];
  int64_t first_open_us;
  // How HTTPS certificates are checked (TLSTrust): FFmpeg's HLS demuxer does not pass these options on to the
  // requests of its playlists and segments, so each request gets them here.
  int tls_verify;
  char ca_file[4096];
} OrbOriginGuard;
static inline void orb_origin_of(const char *url, char *out, size_t size) {
  char proto[16] = "", host[256] = "";
  // HLS opens AES-128 segments as crypto+https://… (or crypto:https://…): the origin is the inner URL's.
  if (strncmp(url, "crypto+", 7) == 0) url += 7;
  else if (strncmp(url, "crypto:", 7) == 0) url += 7;
  int port = -1;
  av_url_split(proto, sizeof proto, NULL, 0, host, sizeof host, &port, NULL, 0, url);
  for (char *c = proto; *c; c++) *c = (char)tolower((unsigned char)*c);
  for (char *c = host; *c; c++) *c = (char)tolower((unsigned char)*c);
  if (port < 0) port = strcmp(proto, "https") == 0 ? 443 : strcmp(proto, "http") == 0 ? 80 : 0;
  snprintf(out, size, "%s://%s:%d", proto, host, port);
}
static inline int orb_guarded_open(AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                                   AVDictionary **options) {
  // What FFmpeg's own io_open keeps: the protocols this context may use.
  if (s->protocol_whitelist) av_dict_set(options, "protocol_whitelist", s->protocol_whitelist, 0);
  if (s->protocol_blacklist) av_dict_set(options, "protocol_blacklist", s->protocol_blacklist, 0);
  const OrbOriginGuard *g = s->opaque;
  if (g) {
    av_dict_set(options, "tls_verify", g->tls_verify ? "1" : "0", 0);
    if (g->ca_file[0]) av_dict_set(options, "ca_file", g->ca_file, 0);
  }
  return avio_open2(pb, url, flags, &s->interrupt_callback, options);
}
// Replaces the Cookie line of the request's headers (one copied from an earlier request, for another URL) with the
// jar's line for `url`, or none.
static inline void orb_set_request_cookie(OrbOriginGuard *g, const char *url, AVDictionary **options) {
  AVDictionaryEntry *old = av_dict_get(*options, "headers", NULL, 0);
  AVBPrint lines;
  av_bprint_init(&lines, 0, AV_BPRINT_SIZE_UNLIMITED);
  for (const char *line = old ? old->value : ""; *line;) {
    const char *end = strstr(line, "\r\n");
    size_t length = end ? (size_t)(end - line) : strlen(line);
    if (length > 0 && av_strncasecmp(line, "cookie:", 7) != 0) av_bprintf(&lines, "%.*s\r\n", (int)length, line);
    line += length + (end ? 2 : 0);
  }
  char cookie[4096];
  if (g->cookie(g->user, url, cookie, sizeof cookie) > 0) av_bprintf(&lines, "%s\r\n", cookie);
  char *joined = NULL;
  if (av_bprint_finalize(&lines, &joined) < 0) return;
  if (*joined) {
    av_dict_set(options, "headers", joined, AV_DICT_DONT_STRDUP_VAL);
  } else {
    av_free(joined);
    av_dict_set(options, "headers", NULL, 0);
  }
}
static inline void orb_drop_credentials(AVDictionary **options) {
  av_dict_set(options, "headers", NULL, 0);
  av_dict_set(options, "cookies", NULL, 0);
}
static inline int orb_guarded_io_open_request(AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                                              AVDictionary **options) {
  OrbOriginGuard *g = s->opaque;
  char here[320];
  orb_origin_of(url, here, sizeof here);
  int at_origin = g && strcmp(g->origin, here) == 0;
  int http = strncmp(here, "http", 4) == 0;
  // The inner URL of an encrypted segment is what is asked for; the crypto prefix goes back on after.
  int prefix = strncmp(url, "crypto+", 7) == 0 || strncmp(url, "crypto:", 7) == 0 ? 7 : 0;
  // Off the origin the request goes without them; they are kept aside for a redirect that leads back there.
  AVDictionary *kept = NULL;
  int credentialed;
  if (at_origin) {
    if (g->cookie && http) orb_set_request_cookie(g, url + prefix, options);
    credentialed = av_dict_get(*options, "headers", NULL, 0) || av_dict_get(*options, "cookies", NULL, 0);
  } else {
    credentialed = g && g->has_credentials;
    if (credentialed) av_dict_copy(&kept, *options, 0);
    orb_drop_credentials(options);
  }
  if (!credentialed || !http) {
    av_dict_free(&kept);
    return orb_guarded_open(s, pb, url, flags, options);
  }
  AVDictionary *first = NULL;
  av_dict_copy(&first, *options, 0);
  av_dict_set(&first, "max_redirects", "0", 0);
  int ret = orb_guarded_open(s, pb, url, flags, &first);
  if (ret != AVERROR(EIO) || !g->resolve) {
    av_dict_free(&kept);
    av_dict_free(options);
    *options = first;
    return ret;
  }
  av_dict_free(&first);
  char target[4096];
  memcpy(target, url, (size_t)prefix);
  int same = g->resolve(g->user, url + prefix, target + prefix, (int)sizeof target - prefix);
  if (same == 2 || (same == 0 && g->has_token && at_origin)) {
    av_dict_free(&kept);
    g->refused = 1;
    return AVERROR(EACCES);
  }
  if (same < 0) {
    av_dict_free(&kept);
    return same;
  }
  if (same == 0) {
    orb_drop_credentials(options);
  } else {
    char there[320];
    orb_origin_of(target + prefix, there, sizeof there);
    // Only where the redirects end at the origin by FFmpeg's reading of the address too (one Foundation cannot
    // read, such as a port with letters after it, is taken for elsewhere).
    if (strcmp(g->origin, there) != 0) {
      orb_drop_credentials(options);
    } else {
      if (kept) {
        AVDictionaryEntry *headers = av_dict_get(kept, "headers", NULL, 0);
        AVDictionaryEntry *cookies = av_dict_get(kept, "cookies", NULL, 0);
        if (headers) av_dict_set(options, "headers", headers->value, 0);
        if (cookies) av_dict_set(options, "cookies", cookies->value, 0);
      }
      if (g->cookie) orb_set_request_cookie(g, target + prefix, options);
    }
  }
  av_dict_free(&kept);
  // Where the redirects ended: a later one (a reconnect sent elsewhere) fails, to be followed by the player too.
  av_dict_set(options, "max_redirects", "0", 0);
  return orb_guarded_open(s, pb, target, flags, options);
}
// Every request: the origin rule above, then what it opened is counted, or its failure told.
static inline int orb_guarded_io_open(AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                                      AVDictionary **options) {
  OrbOriginGuard *g = s->opaque;
  if (g && !g->first_open_us) g->first_open_us = av_gettime_relative();
  int ret = orb_guarded_io_open_request(s, pb, url, flags, options);
  if (!g) return ret;
  if (ret >= 0) {
    for (int i = 0; i < 16; i++) {
      if (!g->open[i]) {
        g->open[i] = *pb;
        break;
      }
    }
  } else if (ret != AVERROR_EXIT && !g->refused && g->failed) {
    g->failed(g->user, url, ret);
  }
  return ret;
}
static inline int orb_guarded_io_close(AVFormatContext *s, AVIOContext *pb) {
  OrbOriginGuard *g = s->opaque;
  for (int i = 0; g && pb && i < 16; i++) {
    if (g->open[i] == pb) {
      g->open[i] = NULL;
      g->closed_bytes += pb->bytes_read;
    }
  }
  return avio_close(pb);
}
/// The bytes the context's requests have brought in so far, and the µs since the first began (0 without a guard).
/// Read it while the source opens: later, a connection FFmpeg closes on its own (not through io_close2) leaves its
/// entry behind.
static inline int64_t orb_origin_guard_bytes(const AVFormatContext *ctx, int64_t *elapsed_us) {
  const OrbOriginGuard *g = ctx->opaque;
  *elapsed_us = g && g->first_open_us ? av_gettime_relative() - g->first_open_us : 0;
  if (!g) return 0;
  int64_t bytes = g->closed_bytes;
  for (int i = 0; i < 16; i++) bytes += g->open[i] ? g->open[i]->bytes_read : 0;
  return bytes;
}
static inline void orb_install_origin_guard(AVFormatContext *ctx, const char *url, int has_token, int has_credentials,
                                            int (*resolve)(void *, const char *, char *, int),
                                            int (*cookie)(void *, const char *, char *, int),
                                            void (*failed)(void *, const char *, int), void *user) {
  OrbOriginGuard *g = av_mallocz(sizeof *g);
  if (!g) return;  // no guard: FFmpeg's own io_open, and no credentials are ever given to it (see the caller)
  orb_origin_of(url, g->origin, sizeof g->origin);
  g->has_token = has_token;
  g->has_credentials = has_credentials;
  g->resolve = resolve;
  g->cookie = cookie;
  g->failed = failed;
  g->user = user;
  ctx->opaque = g;
  ctx->io_open = orb_guarded_io_open;
  ctx->io_close2 = orb_guarded_io_close;
}
/// Sets how the guard's requests check HTTPS certificates (`ca_file` NULL: the system's authorities).
static inline void orb_origin_guard_trust(AVFormatContext *ctx, int verify, const char *ca_file) {
  OrbOriginGuard *g = ctx->opaque;
  if (!g) return;
  g->tls_verify = verify;
  snprintf(g->ca_file, sizeof g->ca_file, "%s", ca_file ? ca_file : "");
}
/// Whether the guard (ctx->opaque, or what it was when FFmpeg freed a context that failed to open) turned a request
/// away because it was redirected off the origin with a token.
static inline int orb_origin_guard_refused(const void *guard) {
  const OrbOriginGuard *g = guard;
  return g ? g->refused : 0;
}
static inline void orb_origin_guard_free(AVFormatContext *ctx) {
  av_freep(&ctx->opaque);
}
static inline int orb_averror_exit(void) { return AVERROR_EXIT; }
// Whether a demuxer gives no timestamps of its own (raw elementary streams): times come from the frame rate.
static inline int orb_format_has_no_timestamps(const AVFormatContext *ctx) {
  return (ctx->iformat->flags & AVFMT_NOTIMESTAMPS) != 0;
}

/// Whether the format's timestamps may start again or jump mid-stream (MPEG-TS, MPEG-PS: recordings joined end to
/// end), not counting HLS and DASH, whose jumps are the stream's own business.
static inline int orb_format_has_timestamp_jumps(const AVFormatContext *ctx) {
  const char *name = ctx->iformat->name;
  return (ctx->iformat->flags & AVFMT_TS_DISCONT) != 0 && strcmp(name, "hls") != 0 && strcmp(name, "dash") != 0;
}
/// Whether the demuxer keeps no index of its own format, and FFmpeg builds one as it reads (raw elementary streams
/// among others; not Matroska, MP4, AVI or MPEG-TS, whose packets carry their times).
static inline int orb_format_indexed_by_ffmpeg(const AVFormatContext *ctx) {
  return (ctx->iformat->flags & AVFMT_GENERIC_INDEX) != 0;
}

/// Whether a byte position is a place the demuxer can go on from: one that finds its way in the file by searching it
/// (MPEG-TS and PS, raw streams), without AVFMT_NO_BYTE_SEEK.
static inline int orb_format_can_seek_bytes(const AVFormatContext *ctx) {
  // A demuxer with a seek of its own (AVI, Matroska, MP4: an index) keeps its reading state by it; a byte seek
  // behind its back (AVI's) reads the header as data and times the pictures after it from where it had been.
  return (ctx->iformat->flags & AVFMT_NO_BYTE_SEEK) == 0 && ctx->pb != NULL && !ctx->iformat->read_seek &&
         !ctx->iformat->read_seek2;
}
/// A context that scales `src_format` pictures of src_w x src_h to `dst_format` (RGBA, BGRA, 16-bit 4:4:4 Y'CbCr …)
/// of dst_w x dst_h with two-tap bilinear filtering (SWS_FAST_BILINEAR: what the shader's texture sampling does, and
/// the cheapest), in `threads` slices at once, reading Y'CbCr with `colorspace`'s matrix (SWS_CS_*) in limited or
/// full range (`full_range`), writing full range (RGB) or `dst_full_range` (Y'CbCr: the source's own, to scale it
/// only). NULL when swscale cannot.
static inline struct SwsContext *orb_sws_context(int src_format, int src_w, int src_h, int dst_w, int dst_h,
                                                 int dst_format, int threads, int colorspace, int full_range,
                                                 int dst_full_range) {
  struct SwsContext *c = sws_alloc_context();
  if (!c) return NULL;
  av_opt_set_int(c, "srcw", src_w, 0);
  av_opt_set_int(c, "srch", src_h, 0);
  av_opt_set_int(c, "src_format", src_format, 0);
  av_opt_set_int(c, "dstw", dst_w, 0);
  av_opt_set_int(c, "dsth", dst_h, 0);
  av_opt_set_int(c, "dst_format", dst_format, 0);
  av_opt_set_int(c, "sws_flags", SWS_FAST_BILINEAR, 0);
  av_opt_set_int(c, "threads", threads, 0);
  if (sws_init_context(c, NULL, NULL) < 0) {
    sws_freeContext(c);
    return NULL;
  }
  const int *table = sws_getCoefficients(colorspace);
  sws_setColorspaceDetails(c, table, full_range, table, dst_full_range, 0, 1 << 16, 1 << 16);
  return c;
}
static inline int orb_pix_fmt_rgba(int bgra) { return bgra ? AV_PIX_FMT_BGRA : AV_PIX_FMT_RGBA; }
static inline int orb_pix_fmt_yuv444p16(void) { return AV_PIX_FMT_YUV444P16; }

static void orb_sws_keep(void *opaque, uint8_t *data) {
  (void)opaque;
  (void)data;
}

/// Converts the picture in `planes` (the context's source format and size) into `dst_format` planes at `dst`,
/// `dst_strides` bytes a row, through the frame API. With `rows` 0, the whole picture, so the context's slice threads
/// run. Else only rows `first`..<`first + rows` of it, written from `dst` on (the band's first row): the whole source
/// is read, only those rows are made; `sws` is then a context of its own (no slice threads), so several bands are
/// made at once on threads of the caller's. The memory on both sides stays the caller's: the frames only borrow it.
static inline int orb_sws_scale_planes(struct SwsContext *sws, int src_format, int src_w, int src_h,
                                       const uint8_t *const planes[4], const int strides[4], int dst_format,
                                       uint8_t *const dst[4], const int dst_strides[4], int dst_w, int dst_h,
                                       int first, int rows) {
  AVFrame *src = av_frame_alloc();
  AVFrame *out = av_frame_alloc();
  int ret = AVERROR(ENOMEM);
  if (!src || !out) goto done;
  src->format = src_format;
  src->width = src_w;
  src->height = src_h;
  for (int i = 0; i < 4; i++) {
    src->data[i] = (uint8_t *)planes[i];
    src->linesize[i] = strides[i];
    // swscale writes row r at data + r * linesize: the frame's rows start `first` rows before `dst`.
    out->data[i] = dst[i] ? (uint8_t *)((uintptr_t)dst[i] - (uintptr_t)first * (uintptr_t)dst_strides[i]) : NULL;
    out->linesize[i] = dst_strides[i];
  }
  src->buf[0] = av_buffer_create((uint8_t *)planes[0], 1, orb_sws_keep, NULL, AV_BUFFER_FLAG_READONLY);
  out->format = dst_format;
  out->width = dst_w;
  out->height = dst_h;
  out->buf[0] = av_buffer_create(dst[0], 1, orb_sws_keep, NULL, 0);
  if (!src->buf[0] || !out->buf[0]) goto done;
  if (rows <= 0) {
    ret = sws_scale_frame(sws, out, src);
  } else {
    ret = sws_frame_start(sws, out, src);
    if (ret >= 0) ret = sws_send_slice(sws, 0, src_h);
    if (ret >= 0) ret = sws_receive_slice(sws, first, rows);
    sws_frame_end(sws);
  }
done:
  av_frame_free(&src);
  av_frame_free(&out);
  return ret;
}

#endif
