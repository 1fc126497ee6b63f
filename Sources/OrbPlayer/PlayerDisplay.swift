import Foundation
import OrbDecode

/// The display's side of the player: at each refresh, which drawn picture to show, carried out as
/// `PresentationState` decides (clock start and hold, drops, repeats, the end), and the display handing pictures
/// back.
extension Player {
  /// Media seconds read ahead that end a wait for data.
  static let refillSeconds = 1.0

  /// Called at each display refresh with the host time (CLOCK_MONOTONIC ns) the picture will appear at.
  /// - Parameter refreshInterval: nanoseconds between display refreshes: a frame is shown at the refresh nearest
  ///   its time, so presented frames sit within half a refresh of the clock, on both sides.
  public func frameToShow(presentationTime: UInt64, refreshInterval: UInt64 = 0) -> Display {
    let clock = clock
    let (display, startSound, holdSound, nothingPlayed, media) = shared.change {
      s -> (Display, AudioPlayback?, AudioPlayback?, SourceHealth?, FrameSource?) in
      var startSound: AudioPlayback?
      var holdSound: AudioPlayback?
      var display = s.refresh(
        at: presentationTime, interval: refreshInterval, clock: clock, startSound: &startSound,
        holdSound: &holdSound)
      // The end came with no picture shown and no sound decoded: the file could not be played at all.
      guard case .ended = display, s.stats.presented == 0, !s.soundDiscarded, let health = s.media?.health,
        !health.decodedAnything
      else { return (display, startSound, holdSound, nil, nil) }
      s.schedule.fail()
      display = .keep
      return (display, startSound, holdSound, health, s.media)
    }
    // PipeWire's lock is taken with ours let go.
    startSound?.setPaused(false)
    holdSound?.setPaused(true)
    if let nothingPlayed {
      let failed = MediaError(
        .unplayable, source: source,
        reason: nothingPlayed.refusedPicture
          ?? "nothing in it could be decoded: no picture and almost no sound (damaged or cut short)")
      if nothingPlayed.refusedPicture == nil, MediaSource.isURL(source), let media {
        // A network source may have failed for the server's sake (one that ignores range requests, where the file
        // needs them; a page): it is asked, on a thread of its own, since that waits on the network (`stop` waits for
        // it; its request returns at once then).
        let (onEvent, explaining, cancellation) = (onEvent, explaining, cancellation)
        explaining.enter()
        Thread.detachNewThread {
          defer { explaining.leave() }
          let explained = media.failureExplanation() ?? failed
          if !cancellation.isCancelled { onEvent?(.failed(explained)) }
        }
      } else {
        onEvent?(.failed(failed))
      }
    }
    return display
  }

  /// The display has painted the last picture it was given, at `host` (CLOCK_MONOTONIC ns): a display that learns
  /// this (GTK's cairo renderer, whose pictures are on screen once painted, later than it could predict for the first
  /// one) says so, and the first picture after opening or a seek is timed to then (`stats.firstFrameMs`,
  /// `seekMsMedian`) instead of to the time it was predicted to show at.
  public func picturePainted(at host: UInt64) {
    // Only the stats change, which no thread waits on: the render thread is not woken at every frame for it; only
    // when it holds back for the picture just painted.
    let held = shared.withLock { s in
      s.paintedLatency(at: host)
      return s.firstPictureHold == .shown
    }
    if held { shared.change { s in if s.firstPictureHold == .shown { s.firstPictureHold = .none } } }
  }

  /// The display no longer needs `picture`: the render thread may draw into its slot again.
  public func release(_ picture: ShownPicture) {
    shared.change { s in
      if s.ring.use(of: picture.slot) == .shown { s.ring.free(picture.slot) }
    }
  }
}

extension PlayerState {
  /// Measures what `PresentationState` needs at this refresh and carries out what it decides. Calls into the clock,
  /// the source and the audio playback, which come after the player's lock in the lock order.
  fileprivate mutating func refresh(
    at presentationTime: UInt64, interval refreshInterval: UInt64, clock: MediaClock,
    startSound: inout AudioPlayback?, holdSound: inout AudioPlayback?
  ) -> Player.Display {
    // A refresh comes after the paint of the one before: a picture shown then is on screen.
    if firstPictureHold == .shown { firstPictureHold = .none }
    let ready = ring.ready
    let phase = schedule.phase
    let refresh = PresentationState.Refresh(
      host: presentationTime, now: clock.time(at: presentationTime),
      // Half a refresh, in media time (it runs `speed` times faster than the host's).
      halfRefresh: Double(refreshInterval) / 2e9 * clock.speed, clockPlaying: clock.isPlaying,
      ready: ready.map { PresentationState.Frame(time: $0.frame.time, duration: $0.frame.duration) },
      shown: shownFrame.map { PresentationState.Frame(time: $0.time, duration: $0.duration) },
      hasVideo: hasVideo,
      starved: [.running, .starting, .awaitingPicture].contains(phase) ? (media?.isStarved ?? false) : false,
      refilled: phase == .buffering && !retrying ? refilled(at: clock.time()) : false,
      soundFinished: schedule.sourceEnded ? soundFinished(at: presentationTime) : false)
    let decision = schedule.refresh(refresh)
    switch decision.clock {
    case .start(let time):
      clock.start(time, at: presentationTime, playing: !schedule.userPaused)
      if phase != .starting { noteLatency(shownAt: presentationTime, opening: phase == .opening) }
    case .resume: clock.play()
    case .hold: clock.pause()
    case nil: break
    }
    if decision.startSound { startSound = audio }
    if decision.holdSound { holdSound = audio }
    if decision.repeated { stats.repeated += 1 }
    for late in ready.prefix(decision.dropped) {
      ring.free(late.slot)
      // A picture drawn again at a new size after it was shown (a resize redraws it) is not a drop.
      if let shown = shownFrame, late.frame.generation == shown.generation, late.frame.time <= shown.time { continue }
      stats.dropped += 1
    }
    if decision.ended { return .ended }
    guard let index = decision.show else { return .keep }
    let chosen = ready[index]
    ring.shown(chosen.slot)
    if firstPictureHold == .drawn { firstPictureHold = .shown }
    // A frame drawn again at a new size is not a new frame.
    if chosen.frame !== shownFrame { stats.presented += 1 }
    shownFrame = chosen.frame
    stats.avOffset = decision.avOffset ?? 0
    return .show(ShownPicture(slot: chosen.slot, time: chosen.frame.time))
  }

  /// The first picture after opening, or after a seek, is about to be on screen at `host`: how long it took, measured
  /// again should the display say when it was painted (`paintedLatency`).
  private mutating func noteLatency(shownAt host: UInt64, opening: Bool) {
    if opening && stats.firstFrameMs == nil {
      latencyStart = (openingFrom, true)
    } else if !opening, let asked = seekAskedAt {
      latencyStart = (asked, false)
      seekLatencies.append(0)
    } else {
      latencyStart = nil
    }
    seekAskedAt = nil
    recordLatency(until: host)
  }

  /// The picture whose latency `noteLatency` measured was painted at `host`: the latency runs to then.
  fileprivate mutating func paintedLatency(at host: UInt64) {
    recordLatency(until: host)
    latencyStart = nil
  }

  private mutating func recordLatency(until host: UInt64) {
    guard let (start, opening) = latencyStart else { return }
    let ms = max(0, Int((Double(host) - Double(start)) / 1e6))
    if opening {
      stats.firstFrameMs = ms
    } else if !seekLatencies.isEmpty {
      seekLatencies[seekLatencies.count - 1] = ms
      let sorted = seekLatencies.sorted()
      stats.seekMsMedian = sorted[sorted.count / 2]
      stats.seeks = sorted.count
    }
  }

  /// Whether everything decoded of the sound has been heard, and playback may end. Not for a source without
  /// pictures whose network stream broke off: its sound ran out, and the render thread is told to try it again.
  private mutating func soundFinished(at host: UInt64) -> Bool {
    guard audio?.finished(at: host) ?? true else { return false }
    guard !hasVideo, let failure = media?.health.readFailure, failure.kind == .network else { return true }
    if !retrying { soundBrokeOff = true }
    return false
  }

  /// Whether a wait for data can end: `refillSeconds` read ahead of `position`, or the end of the source (for a
  /// stream without timestamps: anything in hand again).
  private func refilled(at position: Double) -> Bool {
    guard let source = media else { return true }
    let (ahead, atEnd) = source.buffered(after: position)
    if atEnd { return true }
    return (ahead ?? (source.isStarved ? 0 : .infinity)) >= Player.refillSeconds
  }
}
