import CFFmpeg
import Foundation

/// Reads one subtitle stream of a media through a context of its own, paced to the play head: it keeps the cues
/// of the next `lead` seconds in the store, so each is there before its time, and after a seek it reads again from
/// `preroll` seconds before the target, so a cue that began before the target and is still on (Matroska interleaves
/// a cue at its start) is found and shown at once. The store keeps what was read (it ignores a cue read twice);
/// a bitmap track's screen is cleared at a seek, since its cues end only with the next packet.
/// Thread-safety: Safe; `seek` and `close` from any thread. Its own thread is the only user of its context; what it
/// shares is one value behind `Locked`.
public final class SubtitleReader: Sendable {
  /// Seconds of cues read ahead of the play head.
  static let lead = 20.0
  /// Seconds before a seek's target that reading starts again from.
  static let preroll = 10.0

  private struct State {
    var seekTarget: Double?
    var stopped = false
  }

  private let state: Locked<State>
  private let cancellation = Cancellation()

  /// Starts reading stream `index` of `source` (opened again, with `headers`) at `start` seconds into `store` as
  /// track `track`. `position` is the play head (media seconds); `warn` hears each problem once, in words for the
  /// log (the track is then shown as far as it could be read; playback never stops for it).
  public init(
    source: String, headers: [String], index: Int, start: Double, store: CueStore, track: Int,
    position: @escaping @Sendable () -> Double, warn: @escaping @Sendable (String) -> Void
  ) {
    state = Locked(State(seekTarget: start))
    let job = Job(
      source: source, headers: headers, index: index, store: store, track: track, position: position, warn: warn,
      state: state, cancellation: cancellation)
    let thread = Thread { job.run() }
    thread.name = "orb-subtitles"
    thread.start()
  }

  /// Reads again around `seconds` (media time).
  public func seek(to seconds: Double) {
    state.change { $0.seekTarget = max(0, seconds) }
    cancellation.interrupt()
  }

  /// Stops reading for good.
  public func close() {
    state.change { $0.stopped = true }
    cancellation.cancel()
  }

  /// The reading thread's work.
  /// Thread-safety: Unsafe; runs on the reader's thread only.
  private struct Job: Sendable {
    let source: String
    let headers: [String]
    let index: Int
    let store: CueStore
    let track: Int
    let position: @Sendable () -> Double
    let warn: @Sendable (String) -> Void
    let state: Locked<State>
    let cancellation: Cancellation

    func run() {
      let media: MediaSource
      do {
        media = try MediaSource(source, headers: headers, cancellation: cancellation)
      } catch {
        if !cancellation.isCancelled { warn("subtitles: \(error)") }
        return
      }
      let ctx = media.context
      guard let parameters = media.parameters[index] else {
        warn("subtitles: stream \(index) of \(source) is not a subtitle stream")
        return
      }
      for i in 0..<Int(ctx.pointee.nb_streams) where i != index { media.stream(i).pointee.discard = AVDISCARD_ALL }
      let video = media.info.video.first
      let decoder: SubtitleDecoder
      do {
        decoder = try SubtitleDecoder(
          parameters, videoWidth: video?.width ?? 0, videoHeight: video?.height ?? 0)
      } catch {
        warn("subtitles: cannot decode track \(track) of \(source) (\(parameters.codecDescription): \(error))")
        return
      }
      let start = ctx.pointee.start_time
      let origin = start == orb_nopts_value() ? 0 : Double(start) / Double(AV_TIME_BASE)
      var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
      defer { av_packet_free(&packet) }
      guard let packet else { return }
      var readUntil = -Double.infinity
      var atEnd = false
      var failures = 0
      while true {
        // Sleep while far enough ahead (or at the end), waking for a seek or close, and to look at the play head.
        var next: (stop: Bool, seek: Double?) = (false, nil)
        while true {
          let ahead = readUntil > position() + SubtitleReader.lead
          next = state.wait(
            until: { s in s.stopped || s.seekTarget != nil || !(ahead || atEnd) },
            deadline: Date(timeIntervalSinceNow: 0.25),
            then: { s, _ in
              defer { s.seekTarget = nil }
              return (s.stopped, s.seekTarget)
            })
          if next.stop || next.seek != nil || !(readUntil > position() + SubtitleReader.lead || atEnd) { break }
        }
        if next.stop { return }
        if let target = next.seek {
          cancellation.resume()
          if decoder.isBitmap { store.clear() }
          let from = ((max(0, target - SubtitleReader.preroll) + origin) * Double(AV_TIME_BASE)).rounded()
          let ts = from.isFinite ? Int64(max(-9e18, min(9e18, from))) : 0
          if let pb = ctx.pointee.pb {
            pb.pointee.error = 0
            pb.pointee.eof_reached = 0
          }
          if avformat_seek_file(ctx, -1, Int64.min, ts, ts, 0) < 0 {
            av_seek_frame(ctx, -1, ts, AVSEEK_FLAG_BACKWARD)
          }
          avcodec_flush_buffers(decoder.context)
          readUntil = -Double.infinity
          atEnd = false
          continue
        }
        let code = av_read_frame(ctx, packet)
        if code < 0 {
          if code == FFmpegError.again { continue }
          if state.withLock({ $0.stopped || $0.seekTarget != nil }) { continue }  // interrupted for a seek
          if code != FFmpegError.eof { warn("subtitles: reading stopped (\(FFmpegError.message(code)))") }
          atEnd = true
          continue
        }
        defer { av_packet_unref(packet) }
        guard Int(packet.pointee.stream_index) == index else { continue }
        let stamp = packet.pointee.pts != orb_nopts_value() ? packet.pointee.pts : packet.pointee.dts
        if stamp != orb_nopts_value() {
          readUntil = max(readUntil, Double(stamp) * av_q2d(parameters.timeBase) - origin)
        }
        do {
          store.apply(try decoder.decode(packet: packet, timeBase: parameters.timeBase, origin: origin), track: track)
        } catch {
          failures += 1
          if failures == 1 {
            warn("subtitles: a cue of track \(track) could not be decoded and was dropped (\(error))")
          }
        }
      }
    }
  }
}
