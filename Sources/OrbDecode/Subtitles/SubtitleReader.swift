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
    /// The source is open: a seek may break a read blocked on it (before, it would break the opening).
    var opened = false
  }

  private let state: Locked<State>
  private let cancellation = Cancellation()

  /// Starts reading stream `index` of `source` (opened again, with `credentials`) at `start` seconds into `store` as
  /// track `track`. `position` is the play head (media seconds); `warn` hears each problem once, in words for the
  /// log (the track is then shown as far as it could be read; playback never stops for it).
  public init(
    source: String, credentials: Credentials, index: Int, start: Double, store: CueStore, track: Int,
    position: @escaping @Sendable () -> Double, warn: @escaping @Sendable (String) -> Void
  ) {
    state = Locked(State(seekTarget: start))
    let job = Job(
      source: source, credentials: credentials, index: index, store: store, track: track, position: position,
      warn: warn,
      state: state, cancellation: cancellation)
    startThread(named: "orb-subtitles") { job.run() }
  }

  /// Reads again around `seconds` (media time).
  public func seek(to seconds: Double) {
    let opened = state.change { s in
      s.seekTarget = max(0, seconds)
      return s.opened
    }
    // While it opens, the seek waits: the opening reads it first thing.
    if opened { cancellation.interrupt() }
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
    let credentials: Credentials
    let index: Int
    let store: CueStore
    let track: Int
    let position: @Sendable () -> Double
    let warn: @Sendable (String) -> Void
    let state: Locked<State>
    let cancellation: Cancellation

    func run() {
      let input: SubtitleInput
      do {
        input = try SubtitleInput(source: source, credentials: credentials, index: index, cancellation: cancellation)
      } catch {
        if !cancellation.isCancelled { warn("subtitles: \(error)") }
        return
      }
      state.withLock { $0.opened = true }
      var readUntil = -Double.infinity
      var atEnd = false
      var failures = 0
      while true {
        // Sleep while far enough ahead (or at the end), waking for a seek or close, and to look at the play head.
        var next: (stop: Bool, seek: Double?) = (false, nil)
        while true {
          let idle = atEnd || readUntil > position() + SubtitleReader.lead
          next = state.wait(
            until: { s in s.stopped || s.seekTarget != nil || !idle },
            deadline: Date(timeIntervalSinceNow: 0.25),
            then: { s, _ in
              defer { s.seekTarget = nil }
              return (s.stopped, s.seekTarget)
            })
          if next.stop || next.seek != nil || !(atEnd || readUntil > position() + SubtitleReader.lead) { break }
        }
        if next.stop { return }
        if let target = next.seek {
          cancellation.resume()
          if input.decoder.isBitmap { store.clear() }
          input.seek(before: target)
          readUntil = -Double.infinity
          atEnd = false
          continue
        }
        switch input.read() {
        case .cues(let update, let time):
          readUntil = max(readUntil, time ?? readUntil)
          store.apply(update, track: track)
        case .other:
          continue
        case .failedCue(let error):
          failures += 1
          if failures == 1 {
            warn("subtitles: a cue of track \(track) could not be decoded and was dropped (\(error))")
          }
        case .end(let failure):
          if state.withLock({ $0.stopped || $0.seekTarget != nil }) { continue }  // interrupted for a seek
          if let failure { warn("subtitles: reading stopped (\(failure))") }
          atEnd = true
        }
      }
    }
  }

  /// The cues shown at `time` (media seconds) by stream `index` of `source`, read once around that time: for
  /// `--frame-at`, which draws one picture.
  public static func cues(at time: Double, source: String, credentials: Credentials, index: Int) throws -> [SubtitleCue]
  {
    let input = try SubtitleInput(source: source, credentials: credentials, index: index, cancellation: Cancellation())
    let store = CueStore()
    input.seek(before: time)
    reading: while true {
      switch input.read() {
      case .cues(let update, let at):
        store.apply(update)
        if let at, at > time { break reading }
      case .other, .failedCue: continue
      case .end: break reading
      }
    }
    return store.active(at: time)
  }
}

/// One subtitle stream of a media, opened on its own (every other stream discarded) with its decoder.
/// Thread-safety: Unsafe; one thread reads it.
private final class SubtitleInput {
  let media: MediaSource
  let parameters: StreamParameters
  let decoder: SubtitleDecoder
  let index: Int
  /// The container's start time, taken off every cue's time.
  let origin: Double
  private let packet: UnsafeMutablePointer<AVPacket>

  enum Read {
    /// A packet of the stream, with its time (media seconds) where it has one.
    case cues(SubtitleUpdate, time: Double?)
    /// A packet of another stream.
    case other
    case failedCue(Error)
    /// The end, or a read failure (its words).
    case end(String?)
  }

  init(source: String, credentials: Credentials, index: Int, cancellation: Cancellation) throws {
    // The player's own opening keeps the fonts the file carries; this one has no use for another copy.
    media = try MediaSource(source, credentials: credentials, cancellation: cancellation, keepsFonts: false)
    self.index = index
    guard let parameters = media.parameters[index], media.info.subtitles.contains(where: { $0.index == index }) else {
      throw MediaError(.unplayable, source: source, reason: "stream \(index) is not a subtitle stream")
    }
    self.parameters = parameters
    let ctx = media.context
    for i in 0..<Int(ctx.pointee.nb_streams) where i != index { media.stream(i).pointee.discard = AVDISCARD_ALL }
    let video = media.info.video.first
    do {
      decoder = try SubtitleDecoder(parameters, videoWidth: video?.width ?? 0, videoHeight: video?.height ?? 0)
    } catch {
      throw MediaError(
        .unplayable, source: source, reason: "cannot decode its subtitles (\(parameters.codecDescription): \(error))")
    }
    let start = ctx.pointee.start_time
    origin = start == orb_nopts_value() ? 0 : Double(start) / Double(AV_TIME_BASE)
    guard let made = av_packet_alloc() else { throw MediaError(.unplayable, source: source, reason: "out of memory") }
    packet = made
  }

  deinit {
    var p: UnsafeMutablePointer<AVPacket>? = packet
    av_packet_free(&p)
  }

  /// Nothing has been read since the opening: reading starts at the beginning of the source.
  private var atOpening = true

  /// Goes back to `preroll` seconds before `target`, so a cue shown at the target but begun before it is read. Not
  /// at all in a pipe when that is the beginning and nothing has been read yet: a Matroska header read from a pipe
  /// comes as a stream, without its index (Cues), so a seek there is FFmpeg's generic search, which reads on to the
  /// first key frame after the target; with a video whose one key frame is at 0 s, that was the end of the pipe, and
  /// the cues showed only once all had come. A file is sought in as before.
  func seek(before target: Double) {
    if media.isPipe && atOpening && target - SubtitleReader.preroll <= 0 { return }
    let ctx = media.context
    let from = ((max(0, target - SubtitleReader.preroll) + origin) * Double(AV_TIME_BASE)).rounded()
    let ts = from.isFinite ? Int64(max(-9e18, min(9e18, from))) : 0
    if let pb = ctx.pointee.pb {
      pb.pointee.error = 0
      pb.pointee.eof_reached = 0
    }
    if avformat_seek_file(ctx, -1, Int64.min, ts, ts, 0) < 0 { av_seek_frame(ctx, -1, ts, AVSEEK_FLAG_BACKWARD) }
    avcodec_flush_buffers(decoder.context)
  }

  func read() -> Read {
    atOpening = false
    let code = av_read_frame(media.context, packet)
    if code == FFmpegError.again { return .other }
    if code < 0 { return .end(code == FFmpegError.eof ? nil : FFmpegError.message(code)) }
    defer { av_packet_unref(packet) }
    guard Int(packet.pointee.stream_index) == index else { return .other }
    let stamp = packet.pointee.pts != orb_nopts_value() ? packet.pointee.pts : packet.pointee.dts
    let time = stamp != orb_nopts_value() ? Double(stamp) * av_q2d(parameters.timeBase) - origin : nil
    do {
      return .cues(try decoder.decode(packet: packet, timeBase: parameters.timeBase, origin: origin), time: time)
    } catch {
      return .failedCue(error)
    }
  }
}
