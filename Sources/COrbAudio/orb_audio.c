#include "orb_audio.h"

#include <pipewire/pipewire.h>
#include <pthread.h>
#include <spa/param/audio/format-utils.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHANNELS 2

struct orb_audio {
  struct pw_thread_loop *loop;
  struct pw_stream *stream;
  struct spa_hook listener;
  uint32_t rate;

  // Single-producer single-consumer ring of interleaved stereo frames; indices are absolute frame counts.
  float *ring;
  uint32_t capacity;
  _Atomic uint64_t write_index;
  _Atomic uint64_t read_index;
  _Atomic uint64_t flush_to;  // UINT64_MAX: no flush pending

  // Timing, published by the process callback under a sequence counter (odd while writing).
  _Atomic uint32_t seq;
  orb_audio_timing timing;
  _Atomic int32_t state;
  // Absolute ring index where the sound ends (UINT64_MAX: not known): running dry there is the end, not an underrun.
  _Atomic uint64_t end_index;
  // Only the process callback touches this: the ring is empty because nothing has been written since the start or the
  // last flush (a seek), which is a wait for the sound, not a gap in it.
  bool refilling;
  uint64_t underrun_frames;
  uint64_t underruns;
};

static pthread_once_t pw_once = PTHREAD_ONCE_INIT;
static void init_pipewire(void) { pw_init(NULL, NULL); }

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
  (void)old;
  (void)error;
  struct orb_audio *a = data;
  atomic_store(&a->state, (int32_t)state);
}

// The real-time callback: copy from the ring, silence on underrun, publish timing. No allocation, locks or logs.
static void on_process(void *data) {
  struct orb_audio *a = data;
  struct pw_time t;
  memset(&t, 0, sizeof t);
  pw_stream_get_time_n(a->stream, &t, sizeof t);

  uint64_t flush = atomic_load_explicit(&a->flush_to, memory_order_acquire);
  uint64_t read = atomic_load_explicit(&a->read_index, memory_order_relaxed);
  if (flush != UINT64_MAX) {
    // Never backwards: if this callback already read past the flush point, the flush is stale.
    if (flush > read) {
      read = flush;
      atomic_store_explicit(&a->read_index, read, memory_order_release);
    }
    a->refilling = true;
    uint64_t expected = flush;
    atomic_compare_exchange_strong(&a->flush_to, &expected, UINT64_MAX);
  }
  uint64_t write = atomic_load_explicit(&a->write_index, memory_order_acquire);

  // Frames still between this cycle's first sample and the ear, in output frames.
  int64_t pending = 0;
  if (t.rate.denom > 0 && t.rate.num > 0) {
    pending = t.delay * (int64_t)a->rate * t.rate.num / t.rate.denom;
  }
  pending += (int64_t)(t.queued / (sizeof(float) * CHANNELS)) + (int64_t)t.buffered;

  struct pw_buffer *b = pw_stream_dequeue_buffer(a->stream);
  uint32_t copied = 0;
  uint32_t wanted = 0;
  if (b) {
    struct spa_buffer *buf = b->buffer;
    float *dst = buf->datas[0].data;
    if (dst) {
      uint32_t stride = sizeof(float) * CHANNELS;
      uint32_t max_frames = buf->datas[0].maxsize / stride;
      wanted = b->requested > 0 && b->requested < max_frames ? (uint32_t)b->requested : max_frames;
      uint64_t available = write - read;
      copied = available < wanted ? (uint32_t)available : wanted;
      for (uint32_t i = 0; i < copied;) {
        uint32_t at = (uint32_t)((read + i) % a->capacity);
        uint32_t run = a->capacity - at;
        if (run > copied - i) run = copied - i;
        memcpy(dst + (size_t)i * CHANNELS, a->ring + (size_t)at * CHANNELS, (size_t)run * stride);
        i += run;
      }
      bool refilling = a->refilling;
      if (copied > 0) a->refilling = false;
      if (copied < wanted) {
        memset(dst + (size_t)copied * CHANNELS, 0, (size_t)(wanted - copied) * stride);
        if (!refilling && read + copied < atomic_load_explicit(&a->end_index, memory_order_acquire)) {
          a->underrun_frames += wanted - copied;
          a->underruns++;
        }
      }
      buf->datas[0].chunk->offset = 0;
      buf->datas[0].chunk->stride = stride;
      buf->datas[0].chunk->size = wanted * stride;
    }
    pw_stream_queue_buffer(a->stream, b);
  }
  atomic_store_explicit(&a->read_index, read + copied, memory_order_release);

  uint32_t s = atomic_load_explicit(&a->seq, memory_order_relaxed);
  atomic_store_explicit(&a->seq, s + 1, memory_order_release);
  atomic_thread_fence(memory_order_release);
  a->timing.now_ns = t.now;
  a->timing.consumed = read;
  a->timing.pending = pending;
  a->timing.underrun_frames = a->underrun_frames;
  a->timing.underruns = a->underruns;
  if (wanted > 0) a->timing.cycle_frames = wanted;
  atomic_store_explicit(&a->seq, s + 2, memory_order_release);
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .process = on_process,
};

orb_audio *orb_audio_open(const char *app_name, const char *media_name, uint32_t rate, uint32_t ring_frames,
                          char *error) {
  // Once per process, from whichever thread opens first; never undone (other threads may be opening too).
  pthread_once(&pw_once, init_pipewire);
  struct orb_audio *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(error, 64, "out of memory");
    return NULL;
  }
  a->rate = rate;
  a->capacity = ring_frames;
  a->ring = calloc((size_t)ring_frames * CHANNELS, sizeof(float));
  if (!a->ring) {
    free(a);
    snprintf(error, 64, "out of memory");
    return NULL;
  }
  atomic_store(&a->flush_to, UINT64_MAX);
  atomic_store(&a->end_index, UINT64_MAX);
  a->refilling = true;
  a->timing.rate = rate;
  a->loop = pw_thread_loop_new("orb-audio", NULL);
  if (!a->loop) {
    snprintf(error, 64, "cannot start a PipeWire loop");
    goto fail;
  }
  char latency[32];
  snprintf(latency, sizeof latency, "%u/%u", rate / 50, rate);  // 20 ms quantum asked for
  struct pw_properties *props = pw_properties_new(
      PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Playback", PW_KEY_MEDIA_ROLE, "Movie",
      PW_KEY_APP_NAME, app_name, PW_KEY_MEDIA_NAME, media_name, PW_KEY_NODE_LATENCY, latency, NULL);
  a->stream = pw_stream_new_simple(pw_thread_loop_get_loop(a->loop), app_name, props, &stream_events, a);
  if (!a->stream) {
    snprintf(error, 64, "cannot create a PipeWire stream");
    goto fail;
  }
  uint8_t pod_buffer[1024];
  struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod_buffer, sizeof pod_buffer);
  struct spa_audio_info_raw info;
  memset(&info, 0, sizeof info);
  info.format = SPA_AUDIO_FORMAT_F32;
  info.rate = rate;
  info.channels = CHANNELS;
  info.position[0] = SPA_AUDIO_CHANNEL_FL;
  info.position[1] = SPA_AUDIO_CHANNEL_FR;
  const struct spa_pod *params[1];
  params[0] = spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info);
  if (pw_stream_connect(a->stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                        PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params,
                        1) < 0) {
    snprintf(error, 64, "cannot connect to PipeWire");
    goto fail;
  }
  if (pw_thread_loop_start(a->loop) < 0) {
    snprintf(error, 64, "cannot start the PipeWire thread");
    goto fail;
  }
  // Wait (up to 2 s) for the stream to be linked or to fail: no daemon means no audio, said once by the caller.
  for (int i = 0; i < 200; i++) {
    int32_t st = atomic_load(&a->state);
    if (st == PW_STREAM_STATE_ERROR || st == PW_STREAM_STATE_UNCONNECTED) {
      if (i > 0) break;
    }
    if (st == PW_STREAM_STATE_PAUSED || st == PW_STREAM_STATE_STREAMING) return a;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  snprintf(error, 64, "PipeWire is not running or has no output");
  goto fail;

fail:
  orb_audio_close(a);
  return NULL;
}

void orb_audio_close(orb_audio *a) {
  if (!a) return;
  if (a->loop) pw_thread_loop_stop(a->loop);
  if (a->stream) pw_stream_destroy(a->stream);
  if (a->loop) pw_thread_loop_destroy(a->loop);
  free(a->ring);
  free(a);
}

uint32_t orb_audio_writable(orb_audio *a) {
  uint64_t write = atomic_load_explicit(&a->write_index, memory_order_relaxed);
  uint64_t read = atomic_load_explicit(&a->read_index, memory_order_acquire);
  uint64_t flush = atomic_load_explicit(&a->flush_to, memory_order_acquire);
  if (flush != UINT64_MAX) read = flush;
  return a->capacity - (uint32_t)(write - read);
}

uint32_t orb_audio_write(orb_audio *a, const float *frames, uint32_t count) {
  uint32_t room = orb_audio_writable(a);
  if (count > room) count = room;
  uint64_t write = atomic_load_explicit(&a->write_index, memory_order_relaxed);
  for (uint32_t i = 0; i < count;) {
    uint32_t at = (uint32_t)((write + i) % a->capacity);
    uint32_t run = a->capacity - at;
    if (run > count - i) run = count - i;
    memcpy(a->ring + (size_t)at * CHANNELS, frames + (size_t)i * CHANNELS, (size_t)run * CHANNELS * sizeof(float));
    i += run;
  }
  atomic_store_explicit(&a->write_index, write + count, memory_order_release);
  return count;
}

uint64_t orb_audio_write_index(orb_audio *a) { return atomic_load(&a->write_index); }

void orb_audio_flush(orb_audio *a) {
  atomic_store_explicit(&a->end_index, UINT64_MAX, memory_order_release);
  atomic_store_explicit(&a->flush_to, atomic_load(&a->write_index), memory_order_release);
}

void orb_audio_mark_end(orb_audio *a) {
  atomic_store_explicit(&a->end_index, atomic_load(&a->write_index), memory_order_release);
}

void orb_audio_set_active(orb_audio *a, bool active) {
  pw_thread_loop_lock(a->loop);
  pw_stream_set_active(a->stream, active);
  pw_thread_loop_unlock(a->loop);
}

void orb_audio_get_timing(orb_audio *a, orb_audio_timing *out) {
  for (;;) {
    uint32_t s1 = atomic_load_explicit(&a->seq, memory_order_acquire);
    if (s1 & 1) continue;
    atomic_thread_fence(memory_order_acquire);
    *out = a->timing;
    atomic_thread_fence(memory_order_acquire);
    uint32_t s2 = atomic_load_explicit(&a->seq, memory_order_acquire);
    if (s1 == s2) break;
  }
  out->rate = a->rate;
  out->state = atomic_load(&a->state);
}
