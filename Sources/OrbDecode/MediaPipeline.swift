import CFFmpeg
import Foundation

/// A decoded file or stream: a demux thread (`Demuxer`) → bounded packet queues → a video decode thread
/// (`VideoDecoding`, FFmpeg frame threading) and an audio decode thread (`AudioDecoding`, libswresample to Float32)
/// → bounded frame and audio queues, read here. Times are seconds from the start of the file (the container's start
/// time is subtracted). Seeks are numbered (generations) so nothing from before one leaks out.
/// Thread-safety: Safe. `nextFrame` from one consumer thread, `nextAudio` from one; `seek` and `close` from any
/// thread. What the threads share is a `PipelineCore`.
public final class MediaPipeline: FrameSource, SoundSource, Sendable {
  /// Which audio to decode.
  public struct AudioRequest: Sendable, Equatable {
    /// 1-based among the audio streams; nil: the default stream, else the first.
    public var track: Int?
    /// Output sample rate, Hz.
    public var sampleRate: Int
    /// Seconds the sound is heard after its picture from the start (`setAudioDelay`).
    public var delay: Double
    public init(track: Int? = nil, sampleRate: Int = 48000, delay: Double = 0) {
      self.track = track
      self.sampleRate = sampleRate
      self.delay = delay
    }
  }

  public var info: MediaInfo { core.media.info }
  /// The header's length; for recordings joined end to end, as far as they have been read once that is further.
  public var duration: Double? {
    guard let joined = state.withLock({ $0.joinedUntil }) else { return headerDuration }
    return max(headerDuration ?? 0, joined)
  }
  private let headerDuration: Double?
  /// Things worth telling the user once, found while opening (e.g. a requested track that is not there).
  public let notices: [String]
  /// The video stream decoded, if any.
  public var videoStream: VideoStreamInfo? { core.videoStream }
  /// The audio stream decoded, if any (it changes with `switchAudio`).
  public var audioStream: AudioStreamInfo? { state.withLock { $0.currentAudio } }

  private let core: PipelineCore
  private var state: Locked<PipelineState> { core.state }
  private var media: MediaSource { core.media }

  /// Opens `source` and starts decoding from `start` seconds: video only, or audio too when `audio` is given.
  /// - Throws: `MediaError` when the source cannot be opened or has nothing decodable.
  public convenience init(
    source: String, credentials: Credentials = .none, start: Double = 0, audio: AudioRequest? = nil,
    reconnect: Bool = true,
    cancellation: Cancellation = Cancellation(), limit: PictureLimit = .standard, variant: VariantChoice = .highest,
    deinterlace: DeinterlaceMode = .auto
  ) throws {
    try self.init(
      media: MediaSource(
        source, credentials: credentials, reconnect: reconnect, cancellation: cancellation, limit: limit),
      start: start, audio: audio, variant: variant, deinterlace: deinterlace)
  }

  public init(
    media: MediaSource, start: Double = 0, audio: AudioRequest? = nil, variant: VariantChoice = .highest,
    deinterlace: DeinterlaceMode = .auto
  ) throws {
    let choice = try TrackChoice(media: media, audio: audio, variant: variant)
    let video = choice.video
    notices = choice.notices
    core = PipelineCore(
      media: media, video: video, audio: choice.audio, audioRate: audio?.sampleRate ?? 48000,
      audioDelay: audio?.delay ?? 0, start: start, deinterlace: deinterlace)
    headerDuration = media.info.durationMs.map { Double($0) / 1000 }
    // Discard what we never decode, so the demuxer skips it cheaply.
    for i in 0..<Int(media.context.pointee.nb_streams) where i != video?.index && i != choice.audio?.index {
      media.stream(i).pointee.discard = AVDISCARD_ALL
    }
    // The threads hold the pipeline's core until `close()` ends them: close it when done.
    let core = core
    startThread(named: "orb-demux") { Demuxer(core: core).run() }
    if let videoDecoder = choice.videoDecoder {
      startThread(named: "orb-video-decode") {
        if let decoder = videoDecoder.take() { VideoDecoding(core: core).run(decoder) }
      }
    } else {
      core.frames.close()
    }
    if let audioDecoder = choice.audioDecoder {
      startThread(named: "orb-audio-decode") {
        if let decoder = audioDecoder.take() { AudioDecoding(core: core).run(decoder) }
      }
    } else {
      core.audioChunks.close()
    }
  }

  /// Seconds of sound that count as playing a video whose picture could not be decoded.
  public static let leastSoundBesidePicture = 0.5

  /// How decoding has gone, read at once. Anything decoded counts when it is something a person could see or hear:
  /// a video with no picture and a few milliseconds of sound (a download cut short after its first packets) is
  /// not; that takes half a second of sound. A file that is only sound needs only some.
  public var health: SourceHealth {
    let s = state.withLock { $0 }
    var health = SourceHealth()
    health.corruptPackets = s.skippedPackets
    health.readFailure = s.readFailureCode.map { MediaError.fromRead($0, source: media.source) }
    health.refusedPicture = s.refusedPictures
    let sound = Double(s.decodedAudioFrames) / Double(core.audioRate)
    health.decodedAnything =
      s.decodedPictures > 0 || sound >= (videoStream != nil ? Self.leastSoundBesidePicture : 1e-9)
    return health
  }

  /// Itself while it decodes sound.
  public var sound: SoundSource? { state.withLock { $0.currentAudio == nil || $0.audioStopped } ? nil : self }

  /// Why the source gave nothing or stopped early, in words a person can act on; nil when it simply ended.
  /// For an HTTP(S) source whose failure FFmpeg names only "input/output error", or that gave nothing at all, the
  /// server is asked again (a redirect loop, no range requests): this may wait on the network for a few seconds,
  /// so call it from a worker thread, never the main one.
  public func failureExplanation() -> MediaError? {
    if media.refusedRedirect { return MediaError.refusedRedirect(media.source) }
    let (code, byte, nothing) = state.withLock {
      ($0.readFailureCode, $0.readFailedAtByte, $0.decodedPictures == 0 && $0.decodedAudioFrames == 0)
    }
    if let code {
      // A stream sent elsewhere since it opened goes there at the reconnect's seek (`MediaSource.relocate`), when
      // its connection can move (else FFmpeg follows the redirects itself).
      let media = self.media
      return MediaSource.explained(
        MediaError.fromRead(code, source: media.source), code: code, credentials: media.credentials,
        cookies: media.serverCookies,
        cancellation: media.cancellation, connectedAt: media.connectedAt, size: media.servedSize, stoppedAt: byte,
        moved: media.canMove ? { media.relocate(to: $0) } : nil)
    }
    guard nothing,
      let finding = HTTPDiagnosis.explain(
        media.source, credentials: media.credentials, cookies: media.serverCookies, cancellation: media.cancellation),
      finding.movedTo == nil  // the media is there: the server is not what failed
    else { return nil }
    return MediaError(finding.kind, source: media.source, reason: finding.reason)
  }

  /// How far the demuxer has read ahead of `position` (media seconds; nil when the stream carries no timestamps),
  /// and whether it can read no further now (the end, or queues that hold all they may): what decides that a
  /// source waiting for data has enough to play on.
  public func buffered(after position: Double) -> (seconds: Double?, atEnd: Bool) {
    let hasVideoStream = videoStream != nil
    let (video, audio, ended) = state.withLock { s -> (Double?, Double?, Bool) in
      let video = hasVideoStream && !s.videoStopped ? s.videoDemuxedUntil : nil
      let audio = s.currentAudio != nil && !s.audioStopped ? s.audioDemuxedUntil : nil
      return (video, audio, s.demuxAtEnd || s.stopped)
    }
    let full = core.videoPackets.isFull || core.audioPackets.isFull
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
    let atEnd = state.withLock { $0.demuxAtEnd || $0.stopped || $0.pendingSeek != nil }
    guard !atEnd else { return false }
    if hasVideo { return core.videoPackets.isEmpty && core.frames.isEmpty }
    return core.audioPackets.isEmpty && core.audioChunks.isEmpty
  }

  /// Whether `close` was called.
  public var isClosed: Bool { core.isClosed }

  public func setDeinterlace(_ mode: DeinterlaceMode) { state.withLock { $0.deinterlace = mode } }

  public var coverArt: CoverArt? { media.coverArt }

  public func newNotices() -> [String] { media.newFailures() }

  public var liveStreamStalledFor: Double? {
    guard duration == nil, media.info.container.split(separator: ",").contains("hls") else { return nil }
    let (quiet, before) = state.withLock { s in
      (s.demuxAtEnd && s.readFailureCode == nil ? s.quietBeforeEnd : nil, s.waitsBeforeEnd)
    }
    // A playlist that gained its end mark ends at once, or at its next reload (a segment's length, as the waits at
    // the live edge before); one that stopped changing ends after the demuxer's 24 reloads, 12 segment lengths.
    return quiet.flatMap { $0 >= Self.liveStallSeconds && $0 > 4 * before ? $0 : nil }
  }

  /// Silence this long before a live stream's end, and four times the longest wait at its edge before, means it
  /// stopped changing, not that it was marked ended: the demuxer's 12 target durations of reloads (12 s at the
  /// shortest segments) against one or one and a half.
  static let liveStallSeconds = 10.0

  public var endedShortAt: Double? {
    guard let length = duration, length > 0, !media.info.isStill else { return nil }
    let until = state.withLock { s -> Double? in
      guard s.demuxAtEnd, s.readFailureCode == nil else { return nil }
      return [s.videoDemuxedUntil, s.audioDemuxedUntil].compactMap { $0 }.max()
    }
    // Rounding, a last picture's length, a header that says a little more than the streams hold: a few seconds (or
    // a fiftieth of a long film) short is not cut short.
    guard let until, until < length - max(2, length / 50) else { return nil }
    return until
  }

  /// Whether the pipeline decodes video (it has a video stream, not given up).
  public var hasVideo: Bool { videoStream != nil && !state.withLock { $0.videoStopped } }

  public func nextFrame() -> VideoFrame? {
    if case .frame(let frame) = nextFrame(within: nil) { return frame }
    return nil
  }

  /// The next picture `nextFrame` will give, left for it, waiting up to `timeout` seconds; nil when none came by then
  /// or a seek was made. For a look from another thread before playback takes the source: the picture is only read,
  /// and must not be read once the player has it (it may let the picture go once drawn).
  public func nextPicture(timeout: Double) -> VideoFrame? {
    let current = state.withLock { $0.generation }
    guard case .frame(let frame) = core.frames.peek(timeout: timeout), frame.generation == current else { return nil }
    return frame
  }

  public func nextFrame(timeout: Double) -> FrameWait { nextFrame(within: timeout) }

  /// The next frame, waiting at most `timeout` seconds (nil: as long as it takes).
  private func nextFrame(within timeout: Double?) -> FrameWait {
    let deadline = timeout.map { Date(timeIntervalSinceNow: $0) }
    while true {
      let current = state.withLock { $0.stopped || $0.endedVideoGeneration == $0.generation ? -1 : $0.generation }
      if current < 0 { return .end }
      let item: FrameItem?
      if let deadline {
        item = core.frames.pop(timeout: max(0, deadline.timeIntervalSinceNow))
        if item == nil && !core.frames.isClosed { return .timedOut }
      } else {
        item = core.frames.pop()
      }
      guard let item else { return .end }
      switch item {
      case .frame(let frame) where frame.generation == current:
        return .frame(frame)
      case .end(let g) where g == current:
        state.withLock { $0.endedVideoGeneration = g }
        return .end
      default:
        continue  // from before a seek
      }
    }
  }

  /// Stops decoding video for good (it never gave a picture): its packets are dropped, sound goes on.
  public func stopVideo() {
    state.withLock { $0.videoStopped = true }
    core.videoPackets.close()
    core.frames.close()
  }

  /// The next decoded audio, waiting for it; nil at the end of the audio or once closed (or without audio).
  public func nextAudio(timeout: Double? = nil) -> AudioChunk? {
    while true {
      let current = state.withLock { $0.stopped || $0.endedAudioGeneration == $0.generation ? -1 : $0.generation }
      if current < 0 { return nil }
      let item = timeout.map { core.audioChunks.pop(timeout: $0) } ?? core.audioChunks.pop()
      guard let item else { return nil }
      switch item {
      case .chunk(let chunk) where chunk.generation == current:
        return chunk
      case .end(let g) where g == current:
        state.withLock { $0.endedAudioGeneration = g }
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
    state.withLock { $0.switchedAudio = tracks[track - 1] }
    seek(to: position)
  }

  /// Plays the sound `seconds` after its pictures (negative: before), from `position`: a seek there refills both
  /// decoders with the sound placed anew, as a track switch does.
  public func setAudioDelay(_ seconds: Double, at position: Double) {
    state.withLock { $0.audioDelay = seconds }
    seek(to: position)
  }

  /// Stops decoding audio for good (no output to play it on): its packets are dropped, video goes on.
  public func stopAudio() {
    state.withLock { $0.audioStopped = true }
    core.audioPackets.close()
    core.audioChunks.close()
  }

  /// Whether the audio of seek generation `generation` has been decoded to its end and taken.
  public func audioEnded(generation g: Int) -> Bool { state.withLock { $0.endedAudioGeneration == g } }

  /// The seek generation now current (frames and chunks carry the one they were decoded in).
  public var currentGeneration: Int { state.withLock { $0.generation } }

  public func seek(to seconds: Double) { seek(to: seconds, exact: true) }

  public func seek(to seconds: Double, exact: Bool) {
    let core = core
    state.change { s in
      s.generation += 1
      s.pendingSeek = max(0, seconds)
      s.pendingSeekExact = exact
      // A failure before the seek is not one after it, from the moment it is asked for (the demux thread takes it
      // later: a caller asking `health` meanwhile must not see the old failure).
      s.readFailureCode = nil
      s.readFailedAtByte = nil
      s.demuxAtEnd = false
      // A read blocked on a stalled server returns now, so the demux thread can take the seek.
      core.media.cancellation.interrupt()
      // Cleared under the state's lock, before the demux thread can wake and queue the new generation's flush:
      // clearing after would be able to drop that flush and starve the decoders. No thread takes the state's lock
      // while holding a queue's lock, so this cannot deadlock.
      core.videoPackets.clear()
      core.audioPackets.clear()
      core.frames.clear()
      core.audioChunks.clear()
    }
  }

  public func close() {
    let wasStopped = state.change { s in
      defer { s.stopped = true }
      return s.stopped
    }
    media.cancellation.cancel()  // a blocked read or reconnect wait returns at once
    if wasStopped { return }
    core.videoPackets.close()
    core.audioPackets.close()
    core.frames.close()
    core.audioChunks.close()
  }
}
