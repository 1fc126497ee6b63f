import CFFmpeg
import Foundation

/// The audio decode thread: decodes the chosen audio stream to Float32 at the output rate (libswresample), places
/// it on the timeline (silence for holes, trimmed overlaps), switches track at a flush, and queues `AudioChunk`s
/// for the audio output.
/// Thread-safety: Unsafe; `run` is the body of the one audio decode thread.
struct AudioDecoding {
  let core: PipelineCore

  func run(_ decoder: Decoder) {
    let media = core.media
    let audioRate = core.audioRate
    var current = core.state.withLock { $0.generation }
    var timeline = AudioTimeline(sampleRate: audioRate)
    // Sound heard later than its picture by this much is sound placed this much later on the timeline: the timeline
    // then starts it after as much silence (or, earlier, trims what falls before a seek's target), and each moment's
    // sound is heard that long after its picture. Taken at the start and at each flush only, so one generation's
    // sound is placed one way.
    var delay = core.state.withLock { $0.audioDelay }
    // After a quick seek (to the key frame before the target, `restart(at: -inf)`: nothing trimmed), the timeline
    // starts at the first piece's own stamp, so that the sound, padded or trimmed there, starts with the key frame's
    // picture rather than the delay away from it.
    var placeFromFirstStamp = false
    guard let first = core.state.withLock({ $0.currentAudio }), var timeBase = media.parameters[first.index]?.timeBase
    else { return }
    let converter = AudioConverter(outputRate: audioRate)
    DecodeLoop(core: core, queue: core.audioPackets, taken: \.audioTakenAt).run(
      decoder,
      flushed: { g, t in
        current = g
        delay = core.state.withLock { $0.audioDelay }
        timeline.restart(at: t)
        placeFromFirstStamp = t == -.infinity && delay != 0
        converter.reset()
        // A track switch lands here, with the seek that refills from the current position.
        guard
          let next = core.state.withLock({ s -> AudioStreamInfo? in
            defer { s.switchedAudio = nil }
            return s.switchedAudio
          })
        else { return nil }
        guard let par = media.parameters[next.index], let replacement = try? Decoder(par, threads: 1) else {
          return nil
        }
        timeBase = par.timeBase
        core.state.withLock { $0.currentAudio = next }
        return replacement
      },
      receive: { frame in
        let own = core.seconds(frame, timeBase)
        if placeFromFirstStamp, let own {
          timeline.restart(at: own)
          placeFromFirstStamp = false
        }
        // A piece with no stamp first after a flush goes where the target's sound goes: the delay after it.
        let stamped = own.map { $0 + delay } ?? (timeline.nextTime == nil ? timeline.target + delay : nil)
        guard var samples = converter.convert(frame) else { return }
        let channels = converter.outputChannels
        guard let place = timeline.place(frames: samples.count / channels, stamped: stamped) else { return }
        if let hole = place.silence {
          pushSilence(from: hole.start, frames: hole.frames, channels: channels, generation: current)
        }
        samples.removeFirst(place.drop * channels)
        guard !samples.isEmpty else { return }
        core.state.withLock { $0.decodedAudioFrames += samples.count / channels }
        let chunk = AudioChunk(
          samples: samples, channels: channels, sampleRate: audioRate, time: place.time, generation: current)
        core.audioChunks.push(.chunk(chunk), cost: chunk.frames)
      },
      finish: { g in core.audioChunks.push(.end(generation: g), cost: 0) })
  }

  /// Queues `frames` frames of silence from media time `start`, in pieces of at most a tenth of a second.
  private func pushSilence(from start: Double, frames total: Int, channels: Int, generation: Int) {
    let rate = core.audioRate
    var time = start
    var left = total
    while left > 0 && core.state.withLock({ !$0.stopped && generation == $0.generation }) {
      let frames = min(left, rate / 10)
      let chunk = AudioChunk(
        samples: [Float](repeating: 0, count: frames * channels), channels: channels, sampleRate: rate,
        time: time, generation: generation)
      guard core.audioChunks.push(.chunk(chunk), cost: frames) else { return }  // closed: no one will play it
      left -= frames
      time += Double(frames) / Double(rate)
    }
  }
}
