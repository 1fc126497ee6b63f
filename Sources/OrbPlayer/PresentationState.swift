/// Where playback stands and what the display does at each refresh, as one value with an explicit phase: the
/// scheduling policy of `Player`, free of threads, locks, clocks and GPUs, so tests drive it with made-up times.
/// `Player` keeps one under its lock, feeds it what it measured (`refresh`) and what happened (`seeked`,
/// `togglePause`, `sourceFinished`, …), and carries out the decisions it returns.
/// Thread-safety: a value type.
struct PresentationState: Equatable {
  enum Phase: Equatable {
    /// No picture yet since the source opened.
    case opening
    /// A seek was made: the first picture after it starts the clock.
    case awaitingPicture
    /// The first picture was handed over; the clock starts from it when it is on screen, and the sound at the next
    /// refresh, so that it is not heard before the picture is seen. (A display that shows its pictures as it paints
    /// them, with no wait for a vertical blank, shows it sooner; but its first frames, which size the window, are
    /// slow, and sound started at once ran on through them: 0-2 pictures dropped at the start of 1080p60.)
    case starting
    /// The clock runs (unless the user paused).
    case running
    /// Waiting for data: the clock and the sound are held until enough is read ahead.
    case buffering
    /// Everything was shown and heard.
    case ended
    case failed
  }

  private(set) var phase = Phase.opening
  /// The user's pause, kept through every phase.
  private(set) var userPaused: Bool
  /// The source gave its last picture (in this seek generation).
  private(set) var sourceEnded = false
  /// Host time (ns) since which a source without video, or a seek's first picture, has been starved.
  private var starvedSince: UInt64?
  /// A seek's first picture has waited for data (not for decoding) for `seekStarvedSeconds`: a stream that has not
  /// brought the place yet (a slow network, a pipe not yet there), which the host hears as buffering.
  private(set) var seekStarved = false
  /// The clock at the last refresh that chose a frame: whether the clock moved by a refresh since (no jump).
  private var lastNow: Double?

  /// Host seconds a sound-only source must stay starved before playback waits for it.
  static let starvedSeconds = 0.2
  /// Host seconds a seek's first picture must wait for data before it is called buffering (a seek in a local file
  /// takes 0.1-0.15 s, with the demuxer's queue empty for part of that).
  static let seekStarvedSeconds = 0.5

  init(paused: Bool) { userPaused = paused }

  /// The state the host and the window see.
  var state: Player.State {
    switch phase {
    case .opening: return .loading
    case .awaitingPicture, .starting, .running, .buffering: return userPaused ? .paused : .playing
    case .ended: return .ended
    case .failed: return .error
    }
  }

  /// Waiting for data while meant to play.
  var isBuffering: Bool { (phase == .buffering || seekStarved) && !userPaused }

  /// Whether the clock waits for a first picture to start it.
  var awaitsPicture: Bool { phase == .opening || phase == .awaitingPicture }

  // MARK: what the display measured at a refresh

  /// A frame drawn and ready in the ring.
  struct Frame: Equatable {
    var time: Double
    var duration: Double
    var end: Double { time + duration }
  }

  struct Refresh {
    /// Host time (ns) the picture will appear at.
    var host: UInt64
    /// Media time the clock gives for `host`.
    var now: Double
    /// Half a display refresh, in media seconds.
    var halfRefresh: Double
    var clockPlaying: Bool
    /// Ready frames, earliest first.
    var ready: [Frame]
    /// The frame on screen.
    var shown: Frame?
    /// The source gives pictures (false: sound alone, or its video was given up).
    var hasVideo: Bool
    /// The source has nothing in hand and is not at its end (waiting for data).
    var starved: Bool
    /// Enough is read ahead to end a wait for data (or it can read no further).
    var refilled: Bool
    /// Everything decoded of the sound has been heard (true without sound).
    var soundFinished: Bool
  }

  /// What the player does at this refresh.
  struct Decision: Equatable {
    enum Clock: Equatable {
      /// Start the clock from this media time at the refresh's host time (when the picture is on screen), running
      /// unless paused: the first picture after opening or a seek (again at the next refresh, when the display was
      /// slow to come back).
      case start(at: Double)
      /// Run it again after a wait for data.
      case resume
      /// Hold it: waiting for data.
      case hold
    }
    var clock: Clock?
    /// Let the sound play (the clock started or resumed while not paused).
    var startSound = false
    /// Hold the sound (waiting for data).
    var holdSound = false
    /// Index in `ready` of the frame to show now.
    var show: Int?
    /// The first `dropped` ready frames are late: free them, count them.
    var dropped = 0
    /// The shown frame's time is over and no newer one is ready although playback runs.
    var repeated = false
    /// Playback has reached the end.
    var ended = false
    /// Shown frame time minus clock time.
    var avOffset: Double?
  }

  /// Decides what to show at one refresh, moving between phases as the measurements say.
  mutating func refresh(_ r: Refresh) -> Decision {
    var d = Decision()
    var now = r.now
    switch phase {
    case .ended, .failed:
      return d
    case .opening, .awaitingPicture:
      guard let first = r.ready.first else {
        if phase == .awaitingPicture {
          let since = r.starved ? starvedSince ?? r.host : nil
          starvedSince = since
          seekStarved = since.map { r.host > $0 + UInt64(Self.seekStarvedSeconds * 1e9) } ?? false
        }
        d.ended = endReached(r, now: r.now)
        return d
      }
      starvedSince = nil
      seekStarved = false
      // The first picture after opening or seeking starts the clock: no frame is late for a slow start.
      phase = .starting
      d.clock = .start(at: first.time)
      d.show = 0
      d.avOffset = 0
      return d
    case .buffering:
      // Enough in hand again (or the end): the clock goes on from where it waited, so nothing is skipped.
      guard !userPaused, r.refilled else { return d }
      phase = .running
      starvedSince = nil
      d.clock = .resume
      d.startSound = true
    case .starting, .running:
      if waitingForData(r) {
        phase = .buffering
        d.clock = .hold
        d.holdSound = true
        return d
      }
      if phase == .starting {
        // The first picture is on screen by the time this refresh's is handed over: the sound starts now. Started
        // with the clock, a refresh earlier, it was heard before the picture was seen, and as the clock's master
        // it put the clock a refresh ahead, so that the second picture of a 60 fps video was already late.
        phase = .running
        d.startSound = !userPaused
        // Nothing has been heard yet: the clock goes on from at most a refresh (or the first picture's duration)
        // after the first picture, however long the display took to come back. A window's first frames are slow,
        // and the clock ran on through them: the second picture of a 60 fps video was dropped.
        if let first = r.shown {
          let latest = first.time + max(2 * r.halfRefresh, first.duration)
          if now > latest {
            now = latest
            d.clock = .start(at: now)
          }
        }
      }
    }
    // A frame is due within half a refresh of its time. Between refreshes that follow each other evenly, with
    // hysteresis: the next frame is shown up to a quarter of half a refresh beyond that, one after it (dropping the
    // next) only once it is a quarter of half a refresh from its time. Where the frame rate is the display's and the
    // clock sits near half a refresh from the frames, the jitter of the clock and the refresh otherwise made one
    // refresh skip a frame and another show none (1080p60: up to 3 drops in 10 s), where now each refresh shows the
    // next. After the clock has jumped (the sound took it over from the host clock, playback resumed), the frame
    // nearest it is shown, so that playback settles in the middle of that band. It used to settle anywhere in the
    // band, after a jump forward near its late edge, and the 4-7 ms by which a cairo window's paint estimate
    // (`VideoView`) rises in the half second after the start then carried a 60 fps video across that edge: a
    // dropped picture in a quarter of the runs of the 1080p60 clip, none in 50 since. The band leans late for that
    // rise: a picture is at most 14 ms late, 11 ms early, before a refresh skips or repeats one.
    let even = lastNow.map { abs(now - $0 - 2 * r.halfRefresh) < r.halfRefresh / 2 } ?? false
    lastNow = now
    let (early, late) = even ? (r.halfRefresh / 4, r.halfRefresh * 3 / 4) : (0, 0)
    let due = r.ready.indices.filter { r.ready[$0].time <= now + r.halfRefresh + ($0 == 0 ? early : -late) + 0.0005 }
    guard let newest = due.last else {
      if let shown = r.shown, r.ready.isEmpty, r.clockPlaying, !sourceEnded, now > shown.end { d.repeated = true }
      d.ended = endReached(r, now: now)
      return d
    }
    d.dropped = newest
    d.show = newest
    d.avOffset = r.ready[newest].time - now
    return d
  }

  /// Playing, and the source is starved when the next picture is due at this refresh, or, without video, has been
  /// starved for `starvedSeconds` while sound played. Waiting at once keeps sound and picture together.
  private mutating func waitingForData(_ r: Refresh) -> Bool {
    guard !userPaused, r.clockPlaying else { return false }
    if r.hasVideo {
      guard !sourceEnded, r.ready.isEmpty, let shown = r.shown else { return false }
      return r.now + r.halfRefresh >= shown.end && r.starved
    }
    guard r.starved else {
      starvedSince = nil
      return false
    }
    let since = starvedSince ?? r.host
    starvedSince = since
    return r.host > since + UInt64(Self.starvedSeconds * 1e9)
  }

  /// The end: the source is done, nothing is waiting, the last picture's time is over and the sound was heard.
  private mutating func endReached(_ r: Refresh, now: Double) -> Bool {
    guard sourceEnded, r.ready.isEmpty else { return false }
    if let shown = r.shown, now < shown.end { return false }
    guard r.soundFinished else { return false }
    phase = .ended
    return true
  }

  // MARK: what happened

  /// The user paused or resumed. Returns whether the clock should run now, and whether the sound should be held.
  mutating func togglePause() -> (clockRuns: Bool, soundHeld: Bool)? {
    switch phase {
    case .opening, .awaitingPicture, .starting, .running, .buffering:
      userPaused.toggle()
      starvedSince = nil  // time spent paused is not time waiting for data
      let runs = !userPaused && (phase == .running || phase == .starting)
      return (runs, userPaused || phase != .running)
    case .ended, .failed:
      return nil
    }
  }

  /// A seek was made. With video, the first picture after it starts the clock; without, the sound does at once.
  /// Returns whether the sound (and the clock) should run now.
  mutating func seeked(hasVideo: Bool) -> Bool {
    guard phase != .failed else { return false }
    sourceEnded = false
    starvedSince = nil  // a seek is not a wait for data
    seekStarved = false
    phase = hasVideo ? (phase == .opening ? .opening : .awaitingPicture) : .running
    return !hasVideo && !userPaused
  }

  /// The source gave its last picture.
  mutating func sourceFinished() { sourceEnded = true }

  /// The source broke off and is being tried again: the clock and the sound wait (the caller holds them) until the
  /// seek that reconnects gives a picture.
  mutating func waitForData() {
    if phase == .running || phase == .starting || phase == .awaitingPicture { phase = .buffering }
  }

  /// Playback goes on without pictures (sound alone from the start, or a video that never gave one): the sound
  /// drives the clock at once. Returns whether it should run (not paused).
  mutating func soundAlone(videoGivenUp: Bool) -> Bool {
    if videoGivenUp { sourceEnded = true }
    if phase != .failed && phase != .ended { phase = .running }
    return !userPaused
  }

  mutating func fail() { phase = .failed }
}
