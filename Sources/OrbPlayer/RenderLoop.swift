import Foundation
import OrbDecode
import OrbRender

/// The render thread: makes the Vulkan renderer, opens the media, attaches the sound, then draws each decoded
/// frame into a free slot of the ring ahead of its time, taking seeks, track switches and resizes between frames,
/// and deciding what the end of the source means (the end, a broken stream, or nothing playable).
/// Thread-safety: Unsafe; `run` is the body of the one render thread. It changes the player only through
/// `Player.shared`.
struct RenderLoop {
  let player: Player

  /// Seconds of waiting for a first picture, with sound ready, after which the video is given up.
  static let firstPictureLimit = 4.0
  /// The longest wait a server's `Retry-After` makes before a try, seconds.
  static let longestAskedWait = 120.0

  private var shared: Locked<PlayerState> { player.shared }
  private var source: String { player.source }

  func run() {
    let renderer: FrameDrawer
    do {
      // The drawer that drew the first picture while the window started, where it draws as this one would.
      var early: FrameDrawer?
      if case .whenNeeded = player.device, let drawer = player.earlyOpen?.takeDrawer(),
        drawer.memoryPixelOrder == player.memoryPixelOrder
      {
        early = drawer
      }
      renderer =
        try early
        ?? FrameDrawer(
          device: player.device, cpuConversion: player.cpuConversion, memoryPixelOrder: player.memoryPixelOrder,
          keepsTables: true)
    } catch {
      player.fail(MediaError(.unplayable, source: source, reason: "no usable Vulkan device (\(error))"))
      return
    }
    guard let opened = open(renderer) else { return }
    renderer.prepare(for: opened.info.video)
    // Before the subtitles start reading: they begin where playback does.
    if player.startPosition > 0, let length = opened.duration, length > 0, player.startPosition >= length {
      // A resume point past the end (a stale bookmark, another cut of the film): from the beginning, said once.
      opened.seek(to: 0)
      player.clock.set(0)
      shared.withLock { $0.startsAt = 0 }
      let (asked, end) = StatsText.clocks(player.startPosition, length)
      player.onEvent?(
        .warning("the resume point \(asked) is past the end (\(end)); starting from the beginning"))
    }
    let clock = player.clock
    let onEvent = player.onEvent
    let subtitles = SubtitlePlayback(
      info: opened.info, credentials: player.credentials, files: player.subtitleFiles, request: player.subtitleRequest,
      delay: player.subtitleDelay, position: { clock.time() }, warn: { onEvent?(.warning($0)) })
    let stopped = shared.withLock { s in
      s.media = opened
      s.info = opened.info
      s.deviceName = renderer.deviceName
      s.subtitles = subtitles
      return s.stopped
    }
    if stopped {
      subtitles.close()
      opened.close()
      return
    }
    player.onEvent?(.opened(opened.info, device: renderer.deviceName))
    for notice in opened.notices { player.onEvent?(.warning(notice)) }
    SoundAttachment(player: player).attach(opened)
    drawLoop(renderer, opened)
    opened.close()
  }

  /// Opens the source; a network source that fails for a reason worth trying again (a 5xx, a refused or reset
  /// connection, a timeout) is tried again on the `RetrySchedule`, each try an event. Nil when it failed for good or
  /// playback was stopped (the failure is reported).
  private func open(_ renderer: FrameDrawer) -> FrameSource? {
    let limit = PictureLimit.forDevice(maxSide: renderer.maxImageSize)
    let deinterlace = shared.withLock { $0.deinterlace }
    let wanted = EarlyOpen.Request(
      source: source, start: player.startPosition, audio: player.audioRequest, variant: player.variant,
      deinterlace: deinterlace)
    if let early = player.earlyOpen?.take(as: wanted, limit: limit) { return early }
    var schedule = RetrySchedule(budget: player.retryFor)
    while true {
      do {
        let opened = try MediaOpener.open(
          source, credentials: player.credentials, start: player.startPosition, audio: player.audioRequest,
          cancellation: player.cancellation, limit: limit, variant: player.variant, deinterlace: deinterlace)
        shared.change { $0.retrying = false }
        return opened
      } catch let error as MediaError {
        if shared.withLock({ $0.stopped }) { return nil }
        guard error.isWorthRetrying, let (attempt, scheduled) = schedule.next() else {
          shared.withLock { $0.retrying = false }
          player.fail(error)
          return nil
        }
        // No sooner than the server asked (a busy one says when), but never more than two minutes, nor past the
        // budget (`--retry-for`): then it is tried as the budget runs out.
        let delay = max(scheduled, min(error.retryAfter ?? 0, Self.longestAskedWait, schedule.left()))
        shared.withLock { $0.retrying = true }
        player.onEvent?(.retry(attempt: attempt, of: schedule.most(), delay: delay, reason: error.reason))
        if !waitBeforeRetry(delay, schedule: &schedule) { return nil }
      } catch {
        player.fail(MediaError(.unplayable, source: source, reason: "\(error)"))
        return nil
      }
    }
  }

  /// Waits `delay` seconds before the next try. Paused meanwhile, it stops trying (and says nothing) until play, which
  /// tries at once; the time paused is not counted against `schedule`'s budget. False when playback was stopped.
  private func waitBeforeRetry(_ delay: Double, schedule: inout RetrySchedule) -> Bool {
    let deadline = Date(timeIntervalSinceNow: delay)
    var pausedAt: Date? = shared.withLock { $0.schedule.userPaused } ? Date() : nil
    while true {
      let before = pausedAt != nil
      let (stopped, nowPaused) = shared.wait(
        until: { s in s.stopped || s.schedule.userPaused != before }, deadline: before ? nil : deadline,
        then: { s, _ in (s.stopped, s.schedule.userPaused) })
      if stopped { return false }
      if nowPaused {
        if pausedAt == nil { pausedAt = Date() }
        continue
      }
      if let since = pausedAt {  // played after a pause: now
        schedule.paused(for: Date().timeIntervalSince(since))
        return true
      }
      if Date() >= deadline { return true }
    }
  }

  /// What the render thread does next, decided under the player's lock.
  private enum Step {
    case stop
    case seek(target: Double, exact: Bool, track: Int?, delay: Double?, resumeSound: Bool)
    case rebuild(redraw: [VideoFrame], width: Int, height: Int)
    /// A source without pictures broke off and its sound ran out: try it again.
    case soundBrokeOff
    case decode
    case draw(VideoFrame)
  }

  private func drawLoop(_ renderer: FrameDrawer, _ opened: FrameSource) {
    var pending: VideoFrame?
    var firstPictureWait = 0.0
    // The tries of a stream that broke off in the middle; a picture a second past where it broke starts the count
    // again, and so, for sound alone, does playing on for a second past where the last break resumed. (Any picture
    // after a try did: a server that breaks at the same byte every time was tried for ever, each try's seek showing
    // the picture it had stopped at.)
    var reconnects = RetrySchedule(budget: player.retryFor)
    var pictureBrokeAt: Double?
    var soundBrokeAt: Double?
    var warnedShort = false  // that the file ends before its stated length: said once
    while true {
      for notice in opened.newNotices() { player.onEvent?(.warning(notice)) }
      let nothingInHand = pending == nil
      let step = shared.wait(
        until: { s in
          // With no picture in hand, the next is taken from the source once a target is free to draw it into:
          // waiting for one with a decoded picture in hand let the decoder run a picture further ahead (4K HDR10:
          // 24 MB, peak 382-386 -> 362-363 MB; HDR10 1080p 170 -> 164-165 MB), and a picture taken when it can be
          // drawn is checked for lateness then. At the end of the source there is nothing to take until a seek (or
          // a resize, or stop).
          // Nor while the first picture after opening or a seek is on its way to the screen (`FirstPictureHold`).
          let canGoOn =
            !nothingInHand || (!s.schedule.sourceEnded && s.ring.hasFree && s.firstPictureHold == .none)
          return canGoOn || s.stopped || s.pendingSeek != nil || s.ring.needsRebuild || s.soundBrokeOff
        },
        then: { s, _ -> Step in
          if s.stopped { return .stop }
          if let target = s.pendingSeek {
            let (track, delay) = (s.pendingAudioTrack, s.pendingAudioDelay)
            s.pendingSeek = nil
            s.seekingTo = target
            s.pendingAudioTrack = nil
            s.pendingAudioDelay = nil
            s.firstPictureHold = .none
            s.ring.freeReady()
            // Without a picture to wait for, sound restarts the clock by itself.
            return .seek(
              target: target, exact: s.pendingSeekExact, track: track, delay: delay,
              resumeSound: s.schedule.seeked(hasVideo: s.hasVideo))
          }
          if s.soundBrokeOff {
            s.soundBrokeOff = false
            return .soundBrokeOff
          }
          if s.ring.needsRebuild {
            let redraw = s.ring.framesToRedraw(shown: s.shownFrame, size: SlotRing.size(for: s.presentation))
            // A paused picture whose decoded picture was let go is decoded again for the new size (an exact seek to
            // where the clock stands, which is not a seek of the user's); until then the old one is shown scaled.
            if s.schedule.state == .paused, s.pendingSeek == nil, let shown = s.shownFrame, !shown.hasPicture {
              s.pendingSeek = player.clock.time()
              s.pendingSeekExact = true
            }
            s.ring.releaseFree()
            return .rebuild(redraw: redraw, width: s.ring.wantedWidth, height: s.ring.wantedHeight)
          }
          return pending.map(Step.draw) ?? .decode
        })
      switch step {
      case .stop:
        return
      case .seek(let target, let exact, let track, let delay, let resumeSound):
        pending = nil
        firstPictureWait = 0  // each seek waits for its own first picture
        seek(opened, to: target, exact: exact, track: track, delay: delay, resumeSound: resumeSound)
      case .soundBrokeOff:
        let position = player.clock.time()
        if let last = soundBrokeAt, position > last + 1 { reconnects = RetrySchedule(budget: player.retryFor) }
        soundBrokeAt = position
        if !sourceEnded(opened, reconnects: &reconnects, warnedShort: &warnedShort) { return }
      case .rebuild(let redraw, let w, let h):
        do {
          try rebuildRing(renderer, width: w, height: h, redraw: redraw)
        } catch {
          player.fail(MediaError(.unplayable, source: source, reason: "cannot draw at \(w)x\(h) (\(error))"))
          return
        }
      case .decode:
        switch nextFrame(opened, firstPictureWait: &firstPictureWait) {
        case .frame(let frame):
          pending = frame
          if reconnects.made > 0 {
            shared.change { $0.retrying = false }  // the try worked
            if let at = pictureBrokeAt, frame.time > at + 1 {
              reconnects = RetrySchedule(budget: player.retryFor)
              pictureBrokeAt = nil
            }
          }
        case .timedOut: continue
        case .end:
          let made = reconnects.made
          if !sourceEnded(opened, reconnects: &reconnects, warnedShort: &warnedShort) { return }
          if reconnects.made > made && pictureBrokeAt == nil { pictureBrokeAt = player.clock.time() }
        }
      case .draw(let frame):
        // A frame whose whole display interval has passed is not worth drawing.
        let clock = player.clock
        let late = shared.withLock { s in
          let late = !s.schedule.awaitsPicture && clock.isPlaying && frame.time + frame.duration < clock.time()
          if late { s.stats.dropped += 1 }
          return late
        }
        if late {
          pending = nil
          continue
        }
        // A picture swscale converts is drawn into memory targets: the ring is made again for them, once.
        if renderer.convertsOnCPU(frame, toneMapping: player.toneMapping)
          && shared.withLock({ $0.presentation }) == .zeroCopy
        {
          shared.withLock { $0.convertsOnCPU = true }
          player.usePresentation(.memory)
          player.onEvent?(.notice("presentation: swscale on the CPU into memory (the Vulkan device is the CPU)"))
          continue
        }
        guard let slot = takeFreeSlot() else { continue }
        do {
          try renderer.render(frame, into: slot.target, toneMapping: player.toneMapping)
          if frame.pictureBytes > SlotRing.keptPictureBytes { frame.releasePicture() }
        } catch {
          player.fail(MediaError(.unplayable, source: source, reason: "drawing failed (\(error))"))
          return
        }
        let corrupt = opened.health.corruptPackets
        let (peak, device) = (renderer.curvePeak, renderer.deviceName)
        shared.change { s in
          s.ring.drawn(slot, frame: frame)
          if s.schedule.awaitsPicture { s.firstPictureHold = .drawn }
          s.stats.corruptPackets = corrupt
          s.curvePeak = peak
          s.deviceName = device  // a device made on demand, for the first picture swscale could not draw
        }
        pending = nil
      }
    }
  }

  /// Waits for a broken stream's next try, holding the picture, the clock and the sound where they are (the host
  /// hears `buffering` and the retry), then asks for an exact seek to that position: the demuxer's seek opens a new
  /// connection there, and its first picture starts the clock again. Returns false when playback was stopped.
  private func reconnect(attempt: Int, delay: Double, reason: String, schedule: inout RetrySchedule) -> Bool {
    let clock = player.clock
    let position = clock.time()
    clock.pause()
    shared.withLock { $0.audio }?.setPaused(true)
    player.onEvent?(.retry(attempt: attempt, of: schedule.most(), delay: delay, reason: reason))
    guard waitBeforeRetry(delay, schedule: &schedule) else { return false }
    shared.change { s in
      // A seek the user asked for meanwhile goes first, and it tries the connection as well.
      if s.pendingSeek == nil {
        s.pendingSeek = position
        s.pendingSeekExact = true
      }
    }
    return true
  }

  private func seek(
    _ opened: FrameSource, to target: Double, exact: Bool, track: Int?, delay: Double?, resumeSound: Bool
  ) {
    // A new audio delay is set with a seek there (exact), as a track switch is; with both, the switch seeks again.
    let delaySet = delay.flatMap { delay in opened.sound.map { $0.setAudioDelay(delay, at: target) } } != nil
    if let track, let sound = opened.sound {
      do {
        try sound.switchAudio(track: track, at: target)
      } catch {
        player.onEvent?(.warning("\(error)"))
        opened.seek(to: target)
      }
    } else if !delaySet {
      opened.seek(to: target, exact: exact)
    }
    let (audio, subtitles) = shared.withLock { ($0.audio, $0.subtitles) }
    subtitles?.seek(to: target)
    audio?.flushForSeek()
    audio?.setPaused(!resumeSound)
    player.clock.set(target)
    if resumeSound { player.clock.play() }  // it may have been held by a wait for data
  }

  /// The next decoded frame. Waiting for the first picture holds the sound back too, so a video track that never
  /// gives one must not hold it forever (the audio queue fills, the demuxer stops, nothing plays): after
  /// `firstPictureLimit` seconds the video is given up. A wait for data does not count (a stalled network, a
  /// reconnect's new connection: the queues are empty, and the picture comes with the data), unless the source reads
  /// no further all the same (a full queue, or its end: a video track without packets). Counting those gave a stream
  /// that broke off mid-way up for sound alone during its tries, which then never ended.
  /// Seconds between looks for a seek while the next picture is awaited.
  static let seekPoll = 0.1

  private func nextFrame(_ opened: FrameSource, firstPictureWait: inout Double) -> FrameWait {
    guard shared.withLock({ $0.audio != nil && $0.schedule.awaitsPicture && $0.hasVideo }) else {
      // A wait for data (a stalled server) lets a seek asked meanwhile through at once, which breaks the demuxer's
      // blocked read: it waited for the stall to end (15 s), the clock and the tries going wrong meanwhile.
      while true {
        let wait = opened.nextFrame(timeout: Self.seekPoll)
        guard case .timedOut = wait, !shared.withLock({ $0.pendingSeek != nil || $0.stopped }) else { return wait }
      }
    }
    let wait = opened.nextFrame(timeout: 0.25)
    switch wait {
    case .frame: firstPictureWait = 0
    case .end: break
    case .timedOut:
      guard !opened.isStarved || opened.buffered(after: 0).atEnd else { break }
      firstPictureWait += 0.25
      if firstPictureWait >= Self.firstPictureLimit { SoundAttachment(player: player).abandonVideo(opened) }
    }
    return wait
  }

  /// The source gave its last frame: an end, a broken stream, or nothing to show at all. Returns whether the
  /// render thread goes on (false: it failed and stops).
  private func sourceEnded(_ opened: FrameSource, reconnects: inout RetrySchedule, warnedShort: inout Bool) -> Bool {
    // A network stream that broke off is tried again from where it stopped, by the same rule as at the open; once the
    // tries are spent it is an error for the host, not an end.
    var broken = opened.health.readFailure.flatMap { $0.kind == .network ? $0 : nil }
    // The server is asked what the matter is: a 503 is tried again, an expired sign-in or a file gone is not. That
    // may take seconds (a server that does not answer), while the clock and the sound wait where the stream broke,
    // as for a try: they ran on, with the picture still, and the try went to where they had got (past the end).
    let wasRetrying = shared.withLock { $0.retrying }
    let held = broken != nil && holdWhileBroken()
    if broken != nil, let explained = opened.failureExplanation() { broken = explained }
    let retry = broken?.kind == .network ? reconnects.next() : nil
    enum Outcome {
      case none, ended, noPictureWithSound, noPicture
      case broken(MediaError)
      case reconnect(attempt: Int, delay: Double, reason: String)
    }
    // The error state is set with `sourceEnded`, in one critical section: the display must never see the end
    // of a source that failed and call it an end.
    let outcome = shared.change { s -> Outcome in
      guard s.pendingSeek == nil && !s.stopped else { return .none }
      let none = s.hasVideo && s.stats.presented == 0 && !s.ring.hasReady
      if let broken, let retry, !none {
        s.retrying = true
        s.schedule.waitForData()
        return .reconnect(attempt: retry.attempt, delay: retry.delay, reason: broken.reason)
      }
      if none && s.audio != nil { return .noPictureWithSound }
      s.schedule.sourceFinished()
      // Without pictures, the first sign that a try worked is that nothing failed since its seek.
      if !s.hasVideo && broken == nil { s.retrying = false }
      if let broken {
        s.schedule.fail()
        return .broken(none ? broken : broken.afterPlaybackBegan())
      }
      if none {
        s.schedule.fail()
        return .noPicture
      }
      return .ended
    }
    switch outcome {
    case .none:
      // A seek (or stop) came meanwhile: it starts the clock again, and is no try.
      if held { shared.change { $0.retrying = wasRetrying } }
      return true
    case .ended:
      // A file that ends well before the length its header states is said to be cut short: the host would otherwise
      // hear a clean end half way and mark it watched.
      if let until = opened.endedShortAt, let length = opened.duration, !warnedShort {
        warnedShort = true
        let (end, full) = StatsText.clocks(until, length)
        player.onEvent?(.warning("the file ends at \(end) of the \(full) it says it lasts: it seems cut short"))
      } else if let length = opened.duration, !warnedShort, opened.health.corruptPackets > 0,
        case let at = player.clock.time(), at < length - max(2, length / 50)
      {
        // Read to its end, but nothing after this decoded (a download whose rest is zeros): the host would otherwise
        // hear a clean end and mark it watched.
        warnedShort = true
        let (end, full) = StatsText.clocks(at, length)
        player.onEvent?(
          .warning(
            "the file ends at \(end) of the \(full) it says it lasts: the rest is damaged (it cannot be decoded)"))
      }
      if let quiet = opened.liveStreamStalledFor {
        player.onEvent?(
          .warning("the live stream stopped: nothing new came for \(Int(quiet.rounded())) s, so it is taken as ended"))
      }
      return true
    case .noPictureWithSound:
      SoundAttachment(player: player).abandonVideo(opened)  // a broken video track is dropped; the sound plays
      return true
    case .broken(let failure):
      player.onEvent?(.failed(failure))
      return false
    case .reconnect(let attempt, let delay, let reason):
      return reconnect(attempt: attempt, delay: delay, reason: reason, schedule: &reconnects)
    case .noPicture:
      player.onEvent?(.failed(opened.noPictureError(source: source)))
      return false
    }
  }

  /// Holds the clock and the sound where they are, the host hearing `buffering`, while a stream that broke off is
  /// looked into before it is tried again; false, and nothing held, before its first picture (a source that gives
  /// none may play its sound alone) or once a seek or stop has come.
  private func holdWhileBroken() -> Bool {
    let held = shared.change { s -> Bool in
      guard !s.stopped, s.pendingSeek == nil, !(s.hasVideo && s.stats.presented == 0) else { return false }
      s.retrying = true  // the wait is the try's: no refill ends it
      s.schedule.waitForData()
      return true
    }
    guard held else { return false }
    player.clock.pause()
    shared.withLock { $0.audio }?.setPaused(true)
    return true
  }

  /// A free slot of the current ring, waiting a little at a time for one; nil when something else needs handling.
  private func takeFreeSlot() -> VideoSlot? {
    while true {
      let taken = shared.wait(
        until: { s in s.stopped || s.pendingSeek != nil || s.ring.needsRebuild || s.ring.hasFree },
        deadline: Date(timeIntervalSinceNow: 0.05),
        then: { s, _ -> VideoSlot?? in
          if s.stopped || s.pendingSeek != nil || s.ring.needsRebuild { return .some(nil) }
          return s.ring.takeFree().map { .some($0) }
        })
      if let taken { return taken }
    }
  }

  private func rebuildRing(_ renderer: FrameDrawer, width: Int, height: Int, redraw: [VideoFrame]) throws {
    var made: [VideoSlot] = []
    let kind = shared.withLock { $0.presentation }
    for _ in 0..<SlotRing.size(for: kind) {
      let target = try renderer.makeTarget(
        width: width, height: height, exportable: kind == .zeroCopy, readable: kind == .memory)
      made.append(VideoSlot(id: SlotRing.nextID(), target: target))
    }
    // Draw again what was on screen or waiting, at the new size, so a resize while paused stays sharp.
    let drawn = Array(redraw.prefix(made.count))
    for (slot, frame) in zip(made, drawn) {
      try renderer.render(frame, into: slot.target, toneMapping: player.toneMapping)
    }
    shared.change { $0.ring.install(made, drawn: drawn, width: width, height: height) }
  }
}
