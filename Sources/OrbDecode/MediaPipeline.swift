import CFFmpeg
import Foundation

/// An owned AVPacket.
final class Packet: @unchecked Sendable {
  let pointer: UnsafeMutablePointer<AVPacket>
  init(_ pointer: UnsafeMutablePointer<AVPacket>) { self.pointer = pointer }
  deinit {
    var p: UnsafeMutablePointer<AVPacket>? = pointer
    av_packet_free(&p)
  }
}

/// Demux thread → bounded packet queues → a video decode thread (FFmpeg frame threading) and an audio decode thread
/// (libswresample to Float32) → bounded frame and audio queues. Times are seconds from the start of the file (the
/// container's start time is subtracted). Seeks are numbered (generations) so nothing from before one leaks out.
/// Thread-safety: Safe. `nextFrame` from one consumer thread, `nextAudio` from one; `seek` and `close` from any thread.
public final class MediaPipeline: FrameSource, SoundSource, @unchecked Sendable {
  private enum PacketItem {
    case packet(Packet, generation: Int)
    case flush(generation: Int, target: Double)
    case end(generation: Int)
  }
  private enum FrameItem {
    case frame(VideoFrame)
    case end(generation: Int)
  }
  private enum AudioItem {
    case chunk(AudioChunk)
    case end(generation: Int)
  }

  /// Which audio to decode.
  public struct AudioRequest: Sendable {
    /// 1-based among the audio streams; nil: the default stream, else the first.
    public var track: Int?
    /// Output sample rate, Hz.
    public var sampleRate: Int
    public init(track: Int? = nil, sampleRate: Int = 48000) {
      self.track = track
      self.sampleRate = sampleRate
    }
  }

  public var info: MediaInfo { media.info }
  public let duration: Double?
  /// Things worth telling the user once, found while opening (e.g. a requested track that is not there).
  public private(set) var notices: [String] = []
  /// The video stream decoded, if any.
  public let videoStream: VideoStreamInfo?
  /// The audio stream decoded, if any (it changes with `switchAudio`).
  public var audioStream: AudioStreamInfo? { lock.withLock { currentAudio } }

  private let media: MediaSource
  private let startTime: Double
  private let frameDuration: Double
  private let videoTimeBase: AVRational
  /// The demuxer gives no timestamps (a raw elementary stream): frames are timed by the frame rate from the
  /// start, and a seek decodes forward from the start to its target.
  private let untimed: Bool
  private let audioRate: Int
  // Bounded by bytes and count, so a high-bitrate stream cannot grow memory without limit.
  private let videoPackets = BoundedQueue<PacketItem>(capacity: 64 << 20, maxCount: 512)
  private let audioPackets = BoundedQueue<PacketItem>(capacity: 16 << 20, maxCount: 2048)
  private let frames = BoundedQueue<FrameItem>(capacity: 4)
  // About half a second of decoded audio ahead of the output.
  private let audioChunks: BoundedQueue<AudioItem>

  // Protected by `lock`.
  private let lock = NSCondition()
  private var generation = 0
  private var pendingSeek: Double?
  private var stopped = false
  private var endedVideoGeneration = -1
  private var endedAudioGeneration = -1
  private var skippedPackets = 0
  private var audioStopped = false
  private var videoStopped = false
  private var readFailureCode: Int32?
  /// The latest media time demuxed for the current generation, video and audio (nil: none yet, or the stream has
  /// no timestamps).
  private var videoDemuxedUntil: Double?
  private var audioDemuxedUntil: Double?
  /// The demuxer reached the end (or a read failure) in the current generation.
  private var demuxAtEnd = false
  private var decodedPictures = 0
  private var decodedAudioFrames = 0
  private var refusedPictures: String?
  private var currentAudio: AudioStreamInfo?
  /// Set by `switchAudio`; the audio thread opens its decoder at the next flush.
  private var switchedAudio: AudioStreamInfo?

  /// Opens `source` and starts decoding from `start` seconds: video only, or audio too when `audio` is given.
  /// - Throws: `MediaError` when the source cannot be opened or has nothing decodable.
  public convenience init(
    source: String, headers: [String] = [], start: Double = 0, audio: AudioRequest? = nil, reconnect: Bool = true,
    cancellation: Cancellation = Cancellation(), limit: PictureLimit = .standard
  ) throws {
    try self.init(
      media: MediaSource(source, headers: headers, reconnect: reconnect, cancellation: cancellation, limit: limit),
      start: start, audio: audio)
  }

  public init(media: MediaSource, start: Double = 0, audio: AudioRequest? = nil) throws {
    self.media = media
    let choice = try TrackChoice(media: media, audio: audio)
    let video = choice.video
    notices = choice.notices
    videoStream = video
    // Raw elementary streams (.h264, .hevc, .m4v): the demuxer says so, or probing found no timestamp at all.
    untimed =
      orb_format_has_no_timestamps(media.context) != 0
      || (video.map { media.stream($0.index).pointee.start_time == orb_nopts_value() } ?? false
        && media.context.pointee.start_time == orb_nopts_value())
    audioRate = audio?.sampleRate ?? 48000
    audioChunks = BoundedQueue<AudioItem>(capacity: audioRate / 2)
    let ctxStart = media.context.pointee.start_time
    startTime = ctxStart == orb_nopts_value() ? 0 : Double(ctxStart) / Double(AV_TIME_BASE)
    duration = media.info.durationMs.map { Double($0) / 1000 }
    frameDuration = 1 / (video?.frameRate.flatMap { $0 > 0 && $0 < 1000 ? $0 : nil } ?? 25)
    videoTimeBase = video.flatMap { media.parameters[$0.index]?.timeBase } ?? AVRational(num: 1, den: 1)
    // Discard what we never decode, so the demuxer skips it cheaply.
    for i in 0..<Int(media.context.pointee.nb_streams) where i != video?.index && i != choice.audio?.index {
      media.stream(i).pointee.discard = AVDISCARD_ALL
    }
    let videoDecoder = choice.videoDecoder
    let audioDecoder = choice.audioDecoder
    currentAudio = choice.audio
    if start > 0 {
      pendingSeek = start
      generation = 1
    }
    // The threads hold the pipeline until `close()` ends them: close it when done.
    let demux = Thread { [self] in demuxLoop() }
    demux.name = "orb-demux"
    demux.start()
    if let videoDecoder {
      let t = Thread { [self] in videoLoop(videoDecoder) }
      t.name = "orb-video-decode"
      t.start()
    } else {
      frames.close()
    }
    if let audioDecoder {
      let t = Thread { [self] in audioLoop(audioDecoder) }
      t.name = "orb-audio-decode"
      t.start()
    } else {
      audioChunks.close()
    }
  }

  /// Seconds of sound that count as playing a video whose picture could not be decoded.
  public static let leastSoundBesidePicture = 0.5

  /// How decoding has gone, read at once. Anything decoded counts when it is something a person could see or hear:
  /// a video with no picture and a few milliseconds of sound (a download cut short after its first packets) is
  /// not; that takes half a second of sound. A file that is only sound needs only some.
  public var health: SourceHealth {
    let (skipped, failure, refused, pictures, soundFrames) = lock.withLock {
      (skippedPackets, readFailureCode, refusedPictures, decodedPictures, decodedAudioFrames)
    }
    var health = SourceHealth()
    health.corruptPackets = skipped
    health.readFailure = failure.map { MediaError.fromRead($0, source: media.source) }
    health.refusedPicture = refused
    let sound = Double(soundFrames) / Double(audioRate)
    health.decodedAnything = pictures > 0 || sound >= (videoStream != nil ? Self.leastSoundBesidePicture : 1e-9)
    return health
  }

  /// Itself while it decodes sound.
  public var sound: SoundSource? { lock.withLock { currentAudio == nil || audioStopped } ? nil : self }

  /// Why the source gave nothing or stopped early, in words a person can act on; nil when it simply ended.
  /// For an HTTP(S) source whose failure FFmpeg names only "input/output error", or that gave nothing at all, the
  /// server is asked again (a redirect loop, no range requests): this may wait on the network for a few seconds,
  /// so call it from a worker thread, never the main one.
  public func failureExplanation() -> MediaError? {
    let (code, nothing) = lock.withLock { (readFailureCode, decodedPictures == 0 && decodedAudioFrames == 0) }
    if let code {
      return MediaSource.explained(
        MediaError.fromRead(code, source: media.source), code: code, headers: media.headers,
        cancellation: media.cancellation)
    }
    guard nothing,
      let reason = HTTPDiagnosis.explain(media.source, headers: media.headers, cancellation: media.cancellation)
    else { return nil }
    return MediaError(.unplayable, source: media.source, reason: reason)
  }

  /// How far the demuxer has read ahead of `position` (media seconds; nil when the stream carries no timestamps),
  /// and whether it can read no further now (the end, or queues that hold all they may): what decides that a
  /// source waiting for data has enough to play on.
  public func buffered(after position: Double) -> (seconds: Double?, atEnd: Bool) {
    let (video, audio, ended) = lock.withLock { () -> (Double?, Double?, Bool) in
      let video = videoStream != nil && !videoStopped ? videoDemuxedUntil : nil
      let audio = currentAudio != nil && !audioStopped ? audioDemuxedUntil : nil
      return (video, audio, demuxAtEnd || stopped)
    }
    let full = videoPackets.isFull || audioPackets.isFull
    // The stream read least far decides, unless it lags far behind (a track that ended early or went quiet).
    var until = [video, audio].compactMap { $0 }.min()
    if let v = video, let a = audio, abs(v - a) > Self.staleStreamSeconds { until = max(v, a) }
    return (until.map { max(0, $0 - position) }, ended || full)
  }

  /// A stream whose demuxed time lags the other's by more than this has ended or gone quiet.
  static let staleStreamSeconds = 10.0

  /// Waiting for data: the decoders have no packet left and the demuxer has not reached the end (a slow or
  /// stalled network, a reconnect), as opposed to decoding more slowly than real time.
  public var isStarved: Bool {
    let atEnd = lock.withLock { demuxAtEnd || stopped || pendingSeek != nil }
    guard !atEnd else { return false }
    if hasVideo { return videoPackets.isEmpty && frames.isEmpty }
    return audioPackets.isEmpty && audioChunks.isEmpty
  }

  /// Whether `close` was called.
  public var isClosed: Bool { lock.withLock { stopped } }

  /// Whether the pipeline decodes video (it has a video stream, not given up).
  public var hasVideo: Bool { videoStream != nil && !lock.withLock { videoStopped } }

  public func nextFrame() -> VideoFrame? {
    if case .frame(let frame) = nextFrame(within: nil) { return frame }
    return nil
  }

  public func nextFrame(timeout: Double) -> FrameWait { nextFrame(within: timeout) }

  /// The next frame, waiting at most `timeout` seconds (nil: as long as it takes).
  private func nextFrame(within timeout: Double?) -> FrameWait {
    let deadline = timeout.map { Date(timeIntervalSinceNow: $0) }
    while true {
      let current = lock.withLock { stopped || endedVideoGeneration == generation ? -1 : generation }
      if current < 0 { return .end }
      let item: FrameItem?
      if let deadline {
        item = frames.pop(timeout: max(0, deadline.timeIntervalSinceNow))
        if item == nil && !frames.isClosed { return .timedOut }
      } else {
        item = frames.pop()
      }
      guard let item else { return .end }
      switch item {
      case .frame(let frame) where frame.generation == current:
        return .frame(frame)
      case .end(let g) where g == current:
        lock.withLock { endedVideoGeneration = g }
        return .end
      default:
        continue  // from before a seek
      }
    }
  }

  /// Stops decoding video for good (it never gave a picture): its packets are dropped, sound goes on.
  public func stopVideo() {
    lock.withLock { videoStopped = true }
    videoPackets.close()
    frames.close()
  }

  /// The next decoded audio, waiting for it; nil at the end of the audio or once closed (or without audio).
  public func nextAudio(timeout: Double? = nil) -> AudioChunk? {
    while true {
      let current = lock.withLock { stopped || endedAudioGeneration == generation ? -1 : generation }
      if current < 0 { return nil }
      let item = timeout.map { audioChunks.pop(timeout: $0) } ?? audioChunks.pop()
      guard let item else { return nil }
      switch item {
      case .chunk(let chunk) where chunk.generation == current:
        return chunk
      case .end(let g) where g == current:
        lock.withLock { endedAudioGeneration = g }
        return nil
      default:
        continue
      }
    }
  }

  /// Switches to audio track `track` (1-based among the audio streams), continuing from `position` seconds:
  /// a seek there refills both decoders, so picture and sound stay together and nothing restarts.
  /// - Throws: `MediaError` for a track that does not exist; nothing changes then.
  public func switchAudio(track: Int, at position: Double) throws {
    let tracks = media.info.audio
    guard track >= 1 && track <= tracks.count else {
      throw MediaError(.unplayable, source: media.source, reason: "no audio track \(track) (it has \(tracks.count))")
    }
    lock.withLock { switchedAudio = tracks[track - 1] }
    seek(to: position)
  }

  /// Stops decoding audio for good (no output to play it on): its packets are dropped, video goes on.
  public func stopAudio() {
    lock.withLock { audioStopped = true }
    audioPackets.close()
    audioChunks.close()
  }

  /// Whether the audio of seek generation `generation` has been decoded to its end and taken.
  public func audioEnded(generation g: Int) -> Bool { lock.withLock { endedAudioGeneration == g } }

  /// The seek generation now current (frames and chunks carry the one they were decoded in).
  public var currentGeneration: Int { lock.withLock { generation } }

  public func seek(to seconds: Double) {
    lock.lock()
    generation += 1
    pendingSeek = max(0, seconds)
    // A read blocked on a stalled server returns now, so the demux thread can take the seek.
    media.cancellation.interrupt()
    // Cleared under `lock`, before the demux thread can wake and queue the new generation's flush:
    // clearing after would be able to drop that flush and starve the decoders. No thread takes `lock`
    // while holding a queue's lock, so this cannot deadlock.
    videoPackets.clear()
    audioPackets.clear()
    frames.clear()
    audioChunks.clear()
    lock.broadcast()
    lock.unlock()
  }

  public func close() {
    lock.lock()
    let wasStopped = stopped
    stopped = true
    lock.broadcast()
    lock.unlock()
    media.cancellation.cancel()  // a blocked read or reconnect wait returns at once
    if wasStopped { return }
    videoPackets.close()
    audioPackets.close()
    frames.close()
    audioChunks.close()
  }

  // MARK: demux thread

  private func demuxLoop() {
    let ctx = media.context
    let videoIndex = videoStream.map { Int32($0.index) }
    var routedAudio = lock.withLock { currentAudio?.index }
    var atEnd = false
    while true {
      lock.lock()
      while !stopped && pendingSeek == nil && atEnd { lock.wait() }
      if stopped {
        lock.unlock()
        return
      }
      if let target = pendingSeek {
        let gen = generation
        pendingSeek = nil
        videoDemuxedUntil = nil
        audioDemuxedUntil = nil
        demuxAtEnd = false
        readFailureCode = nil  // a failure before the seek is not one after it
        let wantedAudio = (switchedAudio ?? currentAudio)?.index
        media.cancellation.resume()
        lock.unlock()
        if wantedAudio != routedAudio {
          // A track switch: read the new stream from here on, skip the old one cheaply.
          if let old = routedAudio { media.stream(old).pointee.discard = AVDISCARD_ALL }
          if let new = wantedAudio { media.stream(new).pointee.discard = AVDISCARD_DEFAULT }
          routedAudio = wantedAudio
        }
        // Saturating: a target past any real length must not trap the conversion.
        let micro = ((target + startTime) * Double(AV_TIME_BASE)).rounded()
        let ts = micro.isFinite ? Int64(max(-9e18, min(9e18, micro))) : Int64.max / 2
        // A read that the interrupt broke leaves its error on the I/O context: the seek starts clean.
        if let pb = ctx.pointee.pb {
          pb.pointee.error = 0
          pb.pointee.eof_reached = 0
        }
        if untimed {
          // No timestamps to seek by: back to the first byte; the decoder times frames from there to the target.
          avformat_seek_file(ctx, -1, 0, 0, 0, AVSEEK_FLAG_BYTE)
        } else if avformat_seek_file(ctx, -1, Int64.min, ts, ts, 0) < 0 {
          // Some demuxers only seek backwards to a key frame; one that cannot seek at all reads on from where it
          // is, and the decoders skip to the target (a seek back then lands on the first picture read).
          av_seek_frame(ctx, -1, ts, AVSEEK_FLAG_BACKWARD)
        }
        atEnd = false
        videoPackets.push(.flush(generation: gen, target: target), cost: 0)
        audioPackets.push(.flush(generation: gen, target: target), cost: 0)
        continue
      }
      let gen = generation
      lock.unlock()

      // Out of memory for a packet is a read failure like any other: the decoders hear the end and drain.
      let packet = av_packet_alloc()
      let owned = packet.map(Packet.init)
      let code = packet.map { av_read_frame(ctx, $0) } ?? orb_averror(ENOMEM)
      if code == FFmpegError.again { continue }
      // Interrupted by a seek or by close (demuxers turn the interrupt into codes of their own): the loop takes
      // whichever it was, and the read's failure is not the stream's.
      if code < 0 && lock.withLock({ stopped || pendingSeek != nil }) { continue }
      if code < 0 {
        // End of file, or a read error (a truncated file ends here too): decode what we have. A read error is kept,
        // so a network stream that broke is not taken for one that ended.
        lock.withLock {
          if code != FFmpegError.eof { readFailureCode = code }
          if gen == generation { demuxAtEnd = true }
        }
        videoPackets.push(.end(generation: gen), cost: 0)
        audioPackets.push(.end(generation: gen), cost: 0)
        atEnd = true
        continue
      }
      guard let packet, let owned else { continue }
      let index = packet.pointee.stream_index
      let stamp = packet.pointee.pts != orb_nopts_value() ? packet.pointee.pts : packet.pointee.dts
      if stamp != orb_nopts_value() && (index == videoIndex || Int32(routedAudio ?? -1) == index) {
        // In Double: a damaged file's timestamps near Int64's limits must not trap.
        let base = av_q2d(ctx.pointee.streams[Int(index)]!.pointee.time_base)
        let end = (Double(stamp) + Double(max(0, packet.pointee.duration))) * base - startTime
        lock.withLock {
          guard gen == generation else { return }
          if index == videoIndex {
            videoDemuxedUntil = max(videoDemuxedUntil ?? end, end)
          } else {
            audioDemuxedUntil = max(audioDemuxedUntil ?? end, end)
          }
        }
      }
      if index == videoIndex && !lock.withLock({ videoStopped }) {
        videoPackets.push(.packet(owned, generation: gen), cost: Int(packet.pointee.size))
      } else if Int32(routedAudio ?? -1) == index && !lock.withLock({ audioStopped }) {
        audioPackets.push(.packet(owned, generation: gen), cost: Int(packet.pointee.size))
      }
    }
  }

  /// Runs a decode thread's loop over `queue`: flushes on a seek, skips corrupt packets, drains at the end.
  /// `receive` takes every frame the decoder has; `finish` runs once the stream's end is decoded.
  private func decodeLoop(
    _ decoder: Decoder, queue: BoundedQueue<PacketItem>,
    flushed: (_ generation: Int, _ target: Double) -> Decoder?,
    receive: (UnsafeMutablePointer<AVFrame>) -> Void, finish: (_ generation: Int) -> Void
  ) {
    var decoder = decoder
    var ctx = decoder.context
    var current = lock.withLock { generation }
    guard let frame = av_frame_alloc() else { return }
    var frameOwner: UnsafeMutablePointer<AVFrame>? = frame
    defer { av_frame_free(&frameOwner) }
    func receiveAll() {
      while avcodec_receive_frame(ctx, frame) >= 0 { receive(frame) }
    }
    while let item = queue.pop() {
      switch item {
      case .flush(let g, let t):
        avcodec_flush_buffers(ctx)
        current = g
        if let replacement = flushed(g, t) {
          decoder = replacement
          ctx = replacement.context
        }
      case .packet(let packet, let g):
        guard g == current else { continue }
        let code = avcodec_send_packet(ctx, packet.pointer)
        if code < 0 && code != FFmpegError.again {
          lock.withLock { skippedPackets += 1 }  // a corrupt packet: skip it, keep going
        }
        receiveAll()
      case .end(let g):
        guard g == current else { continue }
        avcodec_send_packet(ctx, nil)
        receiveAll()
        finish(g)
      }
    }
  }

  private func seconds(_ frame: UnsafeMutablePointer<AVFrame>, _ timeBase: AVRational) -> Double? {
    let f = frame.pointee
    let pts = f.best_effort_timestamp != orb_nopts_value() ? f.best_effort_timestamp : f.pts
    return pts == orb_nopts_value() ? nil : Double(pts) * av_q2d(timeBase) - startTime
  }

  // MARK: video decode thread

  private func videoLoop(_ decoder: Decoder) {
    guard let stream = videoStream else { return }
    var current = lock.withLock { generation }
    var hold = SeekHold<VideoFrame>()
    var timing = VideoTiming(nominalDuration: frameDuration, tick: av_q2d(videoTimeBase))
    let converter = FrameConverter()
    decodeLoop(
      decoder, queue: videoPackets,
      flushed: { g, t in
        current = g
        hold.restart(at: t)
        timing.restart()
        return nil
      },
      receive: { frame in
        if let refusal = media.limit.refusal(width: Int(frame.pointee.width), height: Int(frame.pointee.height)) {
          // The stream grew past the limit mid-way: its pictures are skipped, never uploaded.
          lock.withLock { refusedPictures = refusal }
          av_frame_unref(frame)
          return
        }
        let (time, duration) = timing.place(
          stamped: untimed ? nil : seconds(frame, videoTimeBase),
          ownDuration: Double(frame.pointee.pkt_duration) * av_q2d(videoTimeBase))
        lock.withLock { decodedPictures += 1 }
        guard let copy = av_frame_alloc() else { return }
        av_frame_move_ref(copy, frame)
        guard
          let video = converter.makeFrame(
            copy, stream: stream, time: time, duration: duration, generation: current)
        else { return }
        for picture in hold.offer(video, time: time, duration: duration) { frames.push(.frame(picture)) }
      },
      finish: { g in
        if let last = hold.finish() { frames.push(.frame(last)) }
        frames.push(.end(generation: g))
      })
  }

  // MARK: audio decode thread

  private func audioLoop(_ decoder: Decoder) {
    var current = lock.withLock { generation }
    var timeline = AudioTimeline(sampleRate: audioRate)
    var timeBase = media.parameters[lock.withLock { currentAudio!.index }]!.timeBase
    let converter = AudioConverter(outputRate: audioRate)
    decodeLoop(
      decoder, queue: audioPackets,
      flushed: { g, t in
        current = g
        timeline.restart(at: t)
        converter.reset()
        // A track switch lands here, with the seek that refills from the current position.
        guard
          let next = lock.withLock({ () -> AudioStreamInfo? in
            defer { switchedAudio = nil }
            return switchedAudio
          })
        else { return nil }
        guard let par = media.parameters[next.index], let replacement = try? Decoder(par, threads: 1) else {
          return nil
        }
        timeBase = par.timeBase
        lock.withLock { currentAudio = next }
        return replacement
      },
      receive: { frame in
        let stamped = seconds(frame, timeBase)
        guard var samples = converter.convert(frame) else { return }
        let channels = converter.outputChannels
        guard let place = timeline.place(frames: samples.count / channels, stamped: stamped) else { return }
        if let hole = place.silence {
          pushSilence(from: hole.start, frames: hole.frames, channels: channels, generation: current)
        }
        samples.removeFirst(place.drop * channels)
        let time = place.time
        guard !samples.isEmpty else { return }
        lock.withLock { decodedAudioFrames += samples.count / channels }
        let chunk = AudioChunk(
          samples: samples, channels: channels, sampleRate: audioRate, time: time, generation: current)
        audioChunks.push(.chunk(chunk), cost: chunk.frames)
      },
      finish: { g in audioChunks.push(.end(generation: g), cost: 0) })
  }

  /// Queues `frames` frames of silence from media time `start`, in pieces of at most a tenth of a second.
  private func pushSilence(from start: Double, frames total: Int, channels: Int, generation: Int) {
    var time = start
    var left = total
    while left > 0 && !isClosed && lock.withLock({ generation == self.generation }) {
      let frames = min(left, audioRate / 10)
      let chunk = AudioChunk(
        samples: [Float](repeating: 0, count: frames * channels), channels: channels, sampleRate: audioRate,
        time: time, generation: generation)
      guard audioChunks.push(.chunk(chunk), cost: frames) else { return }  // closed: no one will play it
      left -= frames
      time += Double(frames) / Double(audioRate)
    }
  }
}
