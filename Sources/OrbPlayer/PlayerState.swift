import OrbDecode

/// Everything about a `Player` that its threads (the render thread, the display, commands from anywhere) change:
/// one value, reachable only through the player's lock.
/// Thread-safety: a value type, only ever inside `Player.shared`.
struct PlayerState {
  /// How targets are made now (it can fall back from zero-copy to memory while playing).
  var presentation: Player.Presentation
  var ring: SlotRing
  /// Where playback stands: the phase, the user's pause, the end of the source (the scheduling policy).
  var schedule: PresentationState
  var stopped = false
  /// The render thread was started, and has finished (it holds nothing of the GPU any more).
  var renderStarted = false
  var renderDone = false
  /// Where playback begins: the resume point, or 0 when that is past the end.
  var startsAt: Double
  var pendingSeek: Double?
  /// The pending seek shows the frame at its target (else the key frame before it, at once).
  var pendingSeekExact = true
  /// With a pending seek: the audio track (1-based) to switch to there.
  var pendingAudioTrack: Int?
  /// Seconds the sound is heard after its picture (`Player.setAudioDelay`), and, with a pending seek, the delay the
  /// source is to place its sound with from there.
  var audioDelay = 0.0
  var pendingAudioDelay: Double?
  /// Which pictures the source deinterlaces (it is told of a change at once, and opened with it).
  var deinterlace = DeinterlaceMode.auto
  var info: MediaInfo?
  var deviceName = ""
  var media: FrameSource?
  var audio: AudioPlayback?
  var subtitles: SubtitlePlayback?
  /// Whether pictures are expected (false for sound alone, or once the video is given up).
  var hasVideo = true
  /// No output could be opened for the sound: its audio is not decoded, so it cannot show that it played.
  var soundDiscarded = false
  var stats = PlaybackStats()
  /// Waiting to try a network source that failed to open again.
  var retrying = false
  /// A source without pictures broke off and its sound has run out: the display tells the render thread, which
  /// tries it again (a source with pictures hears it when its pictures end).
  var soundBrokeOff = false
  var shownFrame: VideoFrame?
  /// SDR pictures are converted by swscale on the CPU into memory targets (the presentation turned to memory for it).
  var convertsOnCPU = false
  /// When the pending seek was asked for (CLOCK_MONOTONIC ns), until its picture is shown.
  var seekAskedAt: UInt64?
  /// The target of the last seek the render thread took (its picture is awaited while `schedule.awaitsPicture`).
  var seekingTo: Double?
  /// Seeks asked for with `Player.seek` (a key, the bar, a client, a loop back), and the last one's target.
  var seeksAsked = (count: 0, target: 0.0)
  /// Milliseconds each seek took from the request to its picture on screen.
  var seekLatencies: [Int] = []
  /// What the latency of the last first picture (after opening or a seek) is measured from (CLOCK_MONOTONIC ns),
  /// until the display says when it painted it (`Player.picturePainted`).
  var latencyStart: (host: UInt64, opening: Bool)?
  /// What the first picture after opening is timed from (`stats.firstFrameMs`): the process's launch for what the
  /// launch asked for, else when the player was made (the next entry of a playlist, a file dropped on the window).
  var openingFrom = HostTime.launch
  /// The peak the last HDR picture drawn was tone-mapped from, nits (the metadata's, or the one measured).
  var curvePeak: Double?
  /// Where the first picture after opening or a seek is on its way to the screen; the render thread takes no further
  /// picture from the source until it is there (`RenderLoop`).
  var firstPictureHold = FirstPictureHold.none
}

/// The first picture after opening or a seek, from when it is drawn until it has been painted. Meanwhile the render
/// thread draws nothing ahead and the decoder stops a picture ahead, so the window's first frames, which paint it,
/// have the CPUs: on two cores, drawing and decoding ahead took 30-45 ms of CPU in the 50-70 ms from the window
/// being shown to the first picture painted, beside the main thread's 20 and the X server's 16.
enum FirstPictureHold: Equatable {
  case none
  /// Drawn into the ring, not shown yet.
  case drawn
  /// Shown at a refresh: painted when the display says so, or by the next refresh (which comes after that paint).
  case shown
}
