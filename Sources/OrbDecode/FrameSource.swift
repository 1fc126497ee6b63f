/// Where the player gets pictures: a decoded file or stream, or a built-in test pattern. The player asks every
/// source the same questions; what a source cannot do has an answer that says so (the defaults below), so a test
/// pattern and a file are the same kind of thing to it.
/// Thread-safety: implementations are Safe; `nextFrame` is called from one consumer thread.
public protocol FrameSource: AnyObject, Sendable {
  /// What the source holds, for `--probe`, the title and the stats overlay.
  var info: MediaInfo { get }
  /// Length in seconds, or nil for a live or endless source.
  var duration: Double? { get }
  /// The next frame in presentation order, waiting for it if needed; nil at the end or once closed.
  func nextFrame() -> VideoFrame?
  /// The next frame, waiting at most `timeout` seconds.
  func nextFrame(timeout: Double) -> FrameWait
  /// Restarts output at the frame that covers `seconds` (media time).
  func seek(to seconds: Double)
  /// Restarts output at `seconds`: exactly (the frame that covers it), or, not `exact`, at the key frame before it,
  /// which shows at once (a preview while the slider is dragged).
  func seek(to seconds: Double, exact: Bool)
  /// Stops all work; `nextFrame` returns nil from now on.
  func close()

  /// Whether it gives pictures (false for sound alone).
  var hasVideo: Bool { get }
  /// The video stream it decodes (of several: the one chosen, such as an HLS variant); nil when it is not a stream.
  var videoStream: VideoStreamInfo? { get }
  /// Stops decoding pictures for good (its video never gave one); its sound goes on.
  func stopVideo()
  /// Its sound, when it has some to decode; nil for a silent source.
  var sound: SoundSource? { get }
  /// Things worth telling the user once, found while opening (a requested track that is not there).
  var notices: [String] { get }
  /// What went wrong since the last call that playback goes on past (an HLS segment that could not be loaded and
  /// was skipped), in words for the host.
  func newNotices() -> [String]
  /// How decoding has gone so far.
  var health: SourceHealth { get }
  /// Why it gave nothing or stopped early, in words a person can act on; nil when it simply ended. May ask a server
  /// again: call it from a worker thread.
  func failureExplanation() -> MediaError?
  /// Waiting for data: nothing left in hand and not at the end (a slow or stalled network).
  var isStarved: Bool { get }
  /// Media seconds read ahead of `position` (nil: unknown), and whether it can read no further now.
  func buffered(after position: Double) -> (seconds: Double?, atEnd: Bool)
  /// The picture a source of sound alone carries (a cover), to show while it plays; nil without one.
  var coverArt: CoverArt? { get }
  /// Once it has read to its end: where its data stopped (media seconds, the furthest any stream reached), when
  /// that is well before the length its header states (a download cut short); nil otherwise.
  var endedShortAt: Double? { get }
  /// Once it has read to its end: for a live stream (HLS without a length) that ended by falling silent, its
  /// playlist no longer changing, how long nothing had come (seconds); nil otherwise.
  var liveStreamStalledFor: Double? { get }
  /// Which pictures are deinterlaced, from the next one decoded (`DeinterlaceMode`).
  func setDeinterlace(_ mode: DeinterlaceMode)
}

/// What waiting for a frame came to.
public enum FrameWait: Sendable {
  case frame(VideoFrame)
  /// The end of the video, or the source closed.
  case end
  case timedOut
}

/// How decoding a source has gone.
/// Thread-safety: a value type.
public struct SourceHealth: Sendable {
  /// Packets that failed to decode and were skipped.
  public var corruptPackets = 0
  /// Why reading stopped early, when it was not the end (a network error, a reset, a stall).
  public var readFailure: MediaError?
  /// Why pictures were refused (larger than the device can take), if they were.
  public var refusedPicture: String?
  /// Whether anything decoded is something a person could see or hear.
  public var decodedAnything = true

  public init() {}
}

/// The sound of a source, decoded for the audio output.
/// Thread-safety: implementations are Safe; `nextAudio` is called from one consumer thread (the audio feed).
public protocol SoundSource: AnyObject, Sendable {
  /// The audio stream decoded now (it changes with `switchAudio`).
  var audioStream: AudioStreamInfo? { get }
  /// The next decoded audio, waiting at most `timeout` seconds (nil: as long as it takes); nil at its end, once
  /// closed, or on a timeout.
  func nextAudio(timeout: Double?) -> AudioChunk?
  /// Whether the audio of seek generation `generation` has been decoded to its end and taken.
  func audioEnded(generation: Int) -> Bool
  /// The seek generation now current (chunks carry the one they were decoded in).
  var currentGeneration: Int { get }
  /// Whether the source was closed.
  var isClosed: Bool { get }
  /// Switches to audio track `track` (1-based) continuing from `position` seconds.
  /// - Throws: `MediaError` for a track that does not exist; nothing changes then.
  func switchAudio(track: Int, at position: Double) throws
  /// Plays the sound `seconds` after its pictures (negative: before), continuing from `position` seconds.
  func setAudioDelay(_ seconds: Double, at position: Double)
  /// Stops decoding sound for good (no output to play it on).
  func stopAudio()
}

extension FrameSource {
  /// A source of whole pictures has nothing to deinterlace.
  public func setDeinterlace(_ mode: DeinterlaceMode) {}

  /// Why no picture came from the source named `source` (at `seconds`, when one was asked for), in the one order
  /// every mode gives it: a picture too large, a failure the source can explain, sound alone, nothing decodable,
  /// else the end came before that time. May ask a server again: call it from a worker thread.
  public func noPictureError(source: String, at seconds: Double? = nil) -> MediaError {
    let health = health
    if let refused = health.refusedPicture { return MediaError(.unplayable, source: source, reason: refused) }
    if let failure = failureExplanation() { return failure }
    let reason =
      !hasVideo
      ? "it has no picture to show (sound only)"
      : !health.decodedAnything || seconds == nil
        ? "no picture in it could be decoded (damaged or cut short)"
        : "no picture at \(seconds!) s (it ends before, or is damaged)"
    return MediaError(.unplayable, source: source, reason: reason)
  }
}

extension FrameSource {
  public func seek(to seconds: Double, exact: Bool) { seek(to: seconds) }
  public func nextFrame(timeout: Double) -> FrameWait { nextFrame().map(FrameWait.frame) ?? .end }
  public var hasVideo: Bool { true }
  public var videoStream: VideoStreamInfo? { nil }
  public func stopVideo() {}
  public var sound: SoundSource? { nil }
  public var notices: [String] { [] }
  public func newNotices() -> [String] { [] }
  public var health: SourceHealth { SourceHealth() }
  public func failureExplanation() -> MediaError? { nil }
  public var isStarved: Bool { false }
  public var coverArt: CoverArt? { nil }
  public var endedShortAt: Double? { nil }
  public var liveStreamStalledFor: Double? { nil }
  public func buffered(after position: Double) -> (seconds: Double?, atEnd: Bool) { (nil, true) }
}
