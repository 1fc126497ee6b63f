// The real-time half of Orb's PipeWire audio output, in C: the `process` callback must never allocate, lock,
// log or touch Swift reference counts, which plain C guarantees. Swift's AudioOutput owns everything else.
#ifndef ORB_AUDIO_H
#define ORB_AUDIO_H
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct orb_audio orb_audio;

/// Timing of the output as of the last graph cycle: which ring frame is heard at host time `now_ns`.
typedef struct {
  /// CLOCK_MONOTONIC nanoseconds of the cycle (pw_time.now); 0 before the first cycle.
  int64_t now_ns;
  /// Ring frames (absolute index) consumed before that cycle.
  uint64_t consumed;
  /// Frames between the ring and the ear at that time: device delay + queued + resampler (output-rate frames).
  int64_t pending;
  /// Frames of silence written because the ring was empty.
  uint64_t underrun_frames;
  /// Number of cycles that hit an underrun while playing: waiting for the first sound after the start or a flush,
  /// and running dry at the marked end of the sound, are not underruns.
  uint64_t underruns;
  /// Frames the graph asked for in its last cycle that asked for any (its quantum): how far the sound can go on
  /// before the next cycle.
  uint32_t cycle_frames;
  /// Output sample rate (frames per second).
  uint32_t rate;
  /// pw_stream_state: -1 error, 0 unconnected, 1 connecting, 2 paused, 3 streaming.
  int32_t state;
} orb_audio_timing;

/// Connects to PipeWire and creates a stereo float32 playback stream at `rate` Hz with a ring of `ring_frames`.
/// Returns NULL when PipeWire is not reachable; `error` (64 bytes) then says why.
orb_audio *orb_audio_open(const char *app_name, const char *media_name, uint32_t rate, uint32_t ring_frames,
                          char *error);
void orb_audio_close(orb_audio *audio);

/// Producer side (one thread): how many frames fit now, and writing interleaved stereo frames.
uint32_t orb_audio_writable(orb_audio *audio);
uint32_t orb_audio_write(orb_audio *audio, const float *frames, uint32_t count);
/// Absolute index of the next frame the producer writes.
uint64_t orb_audio_write_index(orb_audio *audio);
/// Asks the consumer to drop everything written so far (a seek); takes effect at its next cycle. Forgets the end.
void orb_audio_flush(orb_audio *audio);
/// Everything written so far is the whole sound: cycles that find the ring empty past it are its end, not underruns.
void orb_audio_mark_end(orb_audio *audio);

/// Starts or stops the stream's cycles (pause keeps what is in the ring).
void orb_audio_set_active(orb_audio *audio, bool active);
/// A consistent copy of the timing (seqlock; callable from any thread).
void orb_audio_get_timing(orb_audio *audio, orb_audio_timing *out);

#ifdef __cplusplus
}
#endif
#endif
