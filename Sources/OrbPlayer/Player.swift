import Foundation
import OrbDSP
import OrbDecode
import OrbRender

/// The engine: opens the media, runs the render thread that draws frames ahead into a small ring of
/// targets, and tells the display which target to show at each refresh, against the `MediaClock`.
/// Commands (`togglePause`, `seek`, `setSpeed`, `stop`) may come from any thread; `frameToShow` and `release`
/// come from the display (the GTK main thread). Events are delivered on the render thread: post them on.
/// Thread-safety: Safe; shared state is guarded by `lock`.
///
/// Lock order (a lock may be taken while holding only those before it; never the other way):
/// `Player.lock` → `MediaClock.lock` → `AudioPlayback.lock` → `MediaPipeline.lock` → a `BoundedQueue`'s lock.
/// PipeWire's thread-loop lock (taken by `AudioPlayback.setPaused` and `AudioOutput`) is never taken while holding
/// `Player.lock`: such calls are collected under the lock and made after it is let go.
public final class Player: @unchecked Sendable {
  public enum State: String, Sendable {
    case loading, playing, paused, ended, error
  }

  /// How targets are made: exportable to GL (zero-copy), or copied to host memory after each draw.
  public enum Presentation: String, Sendable {
    case zeroCopy = "zero-copy"
    case memory
  }

  public enum Event: Sendable {
    /// The media opened; the render device's name.
    case opened(MediaInfo, device: String)
    case failed(MediaError)
    /// Something the user should hear about once, playback going on (e.g. "no audio output").
    case notice(String)
  }

  /// What the display should do at this refresh.
  public enum Display {
    /// Show this slot now (and release it when the display no longer needs it).
    case show(VideoSlot)
    /// Keep showing what is there.
    case keep
    /// Playback reached the end of the media.
    case ended
  }

  public let source: String
  public let clock: MediaClock
  /// How targets are made now (it can fall back from zero-copy to memory while playing).
  public var presentation: Presentation { lock.withLock { presentationValue } }
  private var presentationValue: Presentation
  /// What the media holds, once opened.
  public var info: MediaInfo? { lock.withLock { infoValue } }
  /// The Vulkan device drawing the frames, once opened.
  public var deviceName: String { lock.withLock { deviceNameValue } }
  /// Receives the player's events, on the render thread (post them on). Set once, at construction.
  private let onEvent: (@Sendable (Event) -> Void)?

  private let headers: [String]
  private let audioRequest: MediaPipeline.AudioRequest?
  private let makeProcessor: (() -> AudioProcessing)?
  /// The audio chain: speed, EQ, night mode, remap, volume. Settings may change from any thread.
  public let dsp: DSPChain
  private var audio: AudioPlayback?
  private var hasVideo = true
  /// Render thread only: how long it has waited for the first picture.
  private var firstPictureWait = 0.0
  private let renderContext: VulkanContext?
  /// How HDR frames are brought to SDR.
  public let toneMapping: ToneMapping
  private let startPosition: Double
  /// Cancels the source's blocking I/O on `stop`, also while it is still opening (a server that never answers).
  private let cancellation = Cancellation()
  private let lock = NSCondition()
  // Guarded by `lock`:
  private var ring: SlotRing
  private var stopped = false
  /// The render thread has finished (it holds nothing of the GPU any more).
  private var renderDone = false
  /// Where playback stands: the phase, the user's pause, the end of the source (the scheduling policy).
  private var schedule: PresentationState
  private var pendingSeek: Double?
  private var infoValue: MediaInfo?
  private var deviceNameValue = ""
  /// With a pending seek: the audio track (1-based) to switch to there.
  private var pendingAudioTrack: Int?
  /// No output could be opened for the sound: its audio is not decoded, so it cannot show that it played.
  private var soundDiscarded = false
  private var statsValue = PlaybackStats()
  private var shownFrameValue: VideoFrame?
  private var media: FrameSource?
  private var thread: Thread?

  /// - Parameters:
  ///   - start: seconds into the media to begin at (`--resume-ms`).
  ///   - width, height: the first target size in pixels; the display updates it with `setTargetSize`.
  public init(
    source: String, headers: [String] = [], start: Double = 0, paused: Bool = false, speed: Double = 1,
    presentation: Presentation, width: Int, height: Int, clock: MediaClock = MediaClock(),
    renderContext: VulkanContext? = nil, audio: MediaPipeline.AudioRequest? = nil,
    audioSettings: DSPSettings = DSPSettings(), audioProcessor: (() -> AudioProcessing)? = nil,
    toneMapping: ToneMapping = ToneMapping(), onEvent: (@Sendable (Event) -> Void)? = nil
  ) {
    self.onEvent = onEvent
    self.toneMapping = toneMapping
    audioRequest = audio
    makeProcessor = audioProcessor
    var settings = audioSettings
    settings.speed = speed
    dsp = DSPChain(sampleRate: audio?.sampleRate ?? 48000, settings: settings)
    self.renderContext = renderContext
    self.source = source
    self.headers = headers
    startPosition = start
    schedule = PresentationState(paused: paused)
    presentationValue = presentation
    ring = SlotRing(width: width, height: height)
    self.clock = clock
    clock.setSpeed(speed)
    clock.set(start)  // while opening, the position is where playback will begin (the host's resume point)
  }

  /// Starts opening and decoding on the render thread.
  public func start() {
    let t = Thread { [self] in
      renderLoop()
      lock.withLock {
        renderDone = true
        lock.broadcast()
      }
    }
    t.name = "orb-render"
    t.stackSize = 8 << 20
    lock.withLock { thread = t }
    t.start()
  }

  /// Stops the engine: the audio feed, the decoders and the render thread, waiting (up to `timeout` seconds; 0: not
  /// at all, for the main thread) for the render thread to let go of the GPU, so a process can exit cleanly right
  /// after. The display may keep what it holds.
  public func stop(timeout: Double = 2) {
    lock.lock()
    let wasStopped = stopped
    stopped = true
    let m = media
    let playback = audio
    let started = thread != nil
    lock.broadcast()
    lock.unlock()
    cancellation.cancel()  // an open or read blocked on the network returns now
    playback?.stop()
    clock.setMaster(nil)
    m?.close()  // wakes a render thread blocked on decode
    if started && !wasStopped && timeout > 0 { waitUntilStopped(timeout: timeout) }
  }

  /// Waits (up to `timeout` seconds) for the render thread to finish after `stop`; true once it has.
  @discardableResult
  public func waitUntilStopped(timeout: Double) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    lock.lock()
    defer { lock.unlock() }
    while thread != nil && !renderDone {
      if !lock.wait(until: deadline) { break }
    }
    return thread == nil || renderDone
  }

  public var state: State { lock.withLock { schedule.state } }

  /// Waiting for data, whatever the cause (a slow, stalled or reconnecting network source, a trickle): the source
  /// ran dry while a picture or sound was due, so the clock is held until a second of media is in hand again (as
  /// mpv's cache pause does). The window says "Buffering…" and the host hears `state: buffering`. Never a pause, a
  /// seek, or decoding more slowly than real time.
  public var isBuffering: Bool { lock.withLock { schedule.isBuffering } }

  /// Media seconds read ahead that end a wait for data.
  static let refillSeconds = 1.0
  private var isStopping: Bool { lock.withLock { stopped } }
  public var stats: PlaybackStats {
    let (value, playback) = lock.withLock { (statsValue, audio) }
    var stats = value
    stats.audioUnderruns = playback?.underruns ?? 0
    return stats
  }
  /// Media seconds now.
  public var position: Double { clock.time() }
  public var duration: Double? { lock.withLock { media?.duration } }

  public func togglePause() {
    // PipeWire is told after the lock is let go: its loop lock is not one to wait on while holding ours.
    let change: (AudioPlayback, Bool)? = lock.withLock {
      guard let (runs, soundHeld) = schedule.togglePause() else { return nil }
      if schedule.userPaused { clock.pause() } else if runs { clock.play() }
      return audio.map { ($0, soundHeld) }
    }
    if let (playback, paused) = change { playback.setPaused(paused) }
  }

  public var isPaused: Bool { lock.withLock { schedule.userPaused } }

  /// Playback speed, 0.25...4; sound keeps its pitch (WSOLA) and the picture follows the sound.
  public func setSpeed(_ speed: Double) {
    let s = min(4, max(0.25, speed))
    clock.setSpeed(s)
    dsp.updateSettings { $0.speed = s }
  }

  public var speed: Double { dsp.settings.speed }

  /// Changes the audio chain's settings (volume, mute, EQ, night mode, remap) from any thread.
  public func updateAudio(_ change: (inout DSPSettings) -> Void) { dsp.updateSettings(change) }

  /// Moves playback to `seconds` of media time (clamped at 0).
  public func seek(to seconds: Double) {
    lock.withLock {
      pendingSeek = max(0, seconds)
      lock.broadcast()
    }
  }

  /// The frame on screen, as the decoder gave it (for the stats overlay).
  public var shownFrame: VideoFrame? { lock.withLock { shownFrameValue } }

  /// The audio tracks of the media, and the one playing (1-based; nil without sound).
  public var audioTracks: (count: Int, current: Int?) {
    lock.withLock {
      let tracks = infoValue?.audio ?? []
      guard let playing = media?.sound?.audioStream, audio != nil else { return (tracks.count, nil) }
      return (tracks.count, tracks.firstIndex { $0.index == playing.index }.map { $0 + 1 })
    }
  }

  /// Switches sound to audio track `track` (1-based) where playback is now: picture and sound stay in step.
  public func switchAudioTrack(_ track: Int) {
    let here = clock.time()
    lock.withLock {
      pendingSeek = here
      pendingAudioTrack = track
      lock.broadcast()
    }
  }

  /// Switches how targets are made (e.g. to memory copies when GL import fails): the ring is made anew.
  public func usePresentation(_ new: Presentation) {
    lock.withLock {
      guard presentationValue != new else { return }
      presentationValue = new
      ring.invalidate()  // forces the render thread to rebuild, drawing again what was waiting
      lock.broadcast()
    }
  }

  /// The display's size in pixels: targets are drawn at it, so scaling happens once, in the shader.
  public func setTargetSize(width: Int, height: Int) {
    lock.withLock {
      if ring.want(width: width, height: height) { lock.broadcast() }
    }
  }

  /// Called at each display refresh with the host time (CLOCK_MONOTONIC ns) the picture will appear at.
  /// - Parameter refreshInterval: nanoseconds between display refreshes: a frame is shown at the refresh nearest
  ///   its time, so presented frames sit within half a refresh of the clock, on both sides.
  public func frameToShow(presentationTime: UInt64, refreshInterval: UInt64 = 0) -> Display {
    lock.lock()
    var startSound: AudioPlayback?
    var holdSound: AudioPlayback?
    var display = frameToShowLocked(
      presentationTime, refreshInterval, startSound: &startSound, holdSound: &holdSound)
    // The end came with no picture shown and no sound decoded: the file could not be played at all.
    var nothingPlayed: SourceHealth?
    if case .ended = display, statsValue.presented == 0, !soundDiscarded, let health = media?.health,
      !health.decodedAnything
    {
      schedule.fail()
      display = .keep
      nothingPlayed = health
    }
    lock.unlock()
    startSound?.setPaused(false)
    holdSound?.setPaused(true)
    if let nothingPlayed {
      let refused = nothingPlayed.refusedPicture
      onEvent?(
        .failed(
          MediaError(
            .unplayable, source: source,
            reason: refused ?? "nothing in it could be decoded: no picture and almost no sound (damaged or cut short)"))
      )
    }
    return display
  }

  /// Measures what `PresentationState` needs at this refresh and carries out what it decides.
  private func frameToShowLocked(
    _ presentationTime: UInt64, _ refreshInterval: UInt64, startSound: inout AudioPlayback?,
    holdSound: inout AudioPlayback?
  ) -> Display {
    let ready = ring.ready
    let phase = schedule.phase
    let refresh = PresentationState.Refresh(
      host: presentationTime, now: clock.time(at: presentationTime),
      // Half a refresh, in media time (it runs `speed` times faster than the host's).
      halfRefresh: Double(refreshInterval) / 2e9 * clock.speed, clockPlaying: clock.isPlaying,
      ready: ready.map { PresentationState.Frame(time: $0.time, duration: $0.frame!.duration) },
      shown: shownFrameValue.map { PresentationState.Frame(time: $0.time, duration: $0.duration) },
      hasVideo: hasVideo, starved: phase == .running ? (media?.isStarved ?? false) : false,
      refilled: phase == .buffering ? refilledLocked() : false,
      soundFinished: schedule.sourceEnded ? (audio?.finished(at: presentationTime) ?? true) : false)
    let decision = schedule.refresh(refresh)
    switch decision.clock {
    case .start(let time):
      clock.set(time)
      if !schedule.userPaused { clock.play() }
    case .resume: clock.play()
    case .hold: clock.pause()
    case nil: break
    }
    if decision.startSound { startSound = audio }
    if decision.holdSound { holdSound = audio }
    if decision.repeated { statsValue.repeated += 1 }
    for late in ready.prefix(decision.dropped) {
      ring.free(late)
      statsValue.dropped += 1
    }
    if decision.ended { return .ended }
    guard let index = decision.show else { return .keep }
    let chosen = ready[index]
    chosen.state = .shown
    // A frame drawn again at a new size is not a new frame.
    if chosen.frame !== shownFrameValue { statsValue.presented += 1 }
    shownFrameValue = chosen.frame
    statsValue.avOffset = decision.avOffset ?? 0
    lock.broadcast()
    return .show(chosen)
  }

  /// The display no longer needs `slot`: the render thread may draw into it again.
  public func release(_ slot: VideoSlot) {
    lock.withLock {
      if slot.state == .shown { ring.free(slot) }
      lock.broadcast()
    }
  }

  /// Whether a wait for data can end: `refillSeconds` read ahead of the position, or the end of the source (for a
  /// stream without timestamps: anything in hand again).
  private func refilledLocked() -> Bool {
    guard let source = media else { return true }
    let (ahead, atEnd) = source.buffered(after: clock.time())
    if atEnd { return true }
    return (ahead ?? (source.isStarved ? 0 : .infinity)) >= Self.refillSeconds
  }

  private func fail(_ error: MediaError) {
    lock.withLock { schedule.fail() }
    onEvent?(.failed(error))
  }

  // MARK: render thread

  private func renderLoop() {
    let renderer: Renderer
    do {
      renderer = try Renderer(context: renderContext)
    } catch {
      fail(MediaError(.unplayable, source: source, reason: "no usable Vulkan device (\(error))"))
      return
    }
    let opened: FrameSource
    do {
      opened = try MediaOpener.open(
        source, headers: headers, start: startPosition, audio: audioRequest, cancellation: cancellation,
        limit: PictureLimit.forDevice(maxSide: renderer.context.maxImageSize))
    } catch let error as MediaError {
      if !isStopping { fail(error) }
      return
    } catch {
      fail(MediaError(.unplayable, source: source, reason: "\(error)"))
      return
    }
    let isStopped: Bool = lock.withLock {
      media = opened
      infoValue = opened.info
      deviceNameValue = renderer.context.deviceName
      return stopped
    }
    if isStopped {
      opened.close()
      return
    }
    onEvent?(.opened(opened.info, device: renderer.context.deviceName))
    for notice in opened.notices { onEvent?(.notice(notice)) }
    startAudio(opened)

    var pending: VideoFrame?
    while true {
      lock.lock()
      if stopped {
        lock.unlock()
        break
      }
      if let target = pendingSeek {
        let track = pendingAudioTrack
        pendingSeek = nil
        pendingAudioTrack = nil
        ring.freeReady()
        // Without a picture to wait for, sound restarts the clock by itself.
        let resumeSound = schedule.seeked(hasVideo: hasVideo)
        lock.unlock()
        pending = nil
        if let track, let sound = opened.sound {
          do {
            try sound.switchAudio(track: track, at: target)
          } catch {
            onEvent?(.notice("\(error)"))
            opened.seek(to: target)
          }
        } else {
          opened.seek(to: target)
        }
        audio?.flushForSeek()
        audio?.setPaused(!resumeSound)
        clock.set(target)
        if resumeSound { clock.play() }  // it may have been held by a wait for data
        continue
      }
      if ring.needsRebuild {
        let redraw = ring.framesToRedraw(shown: shownFrameValue)
        let (w, h) = (ring.wantedWidth, ring.wantedHeight)
        lock.unlock()
        do {
          try rebuildRing(renderer, width: w, height: h, redraw: redraw)
        } catch {
          fail(MediaError(.unplayable, source: source, reason: "cannot draw at \(w)x\(h) (\(error))"))
          return
        }
        continue
      }
      if pending == nil && schedule.sourceEnded {
        lock.wait()
        lock.unlock()
        continue
      }
      lock.unlock()

      if pending == nil {
        if lock.withLock({ audio != nil && schedule.awaitsPicture && hasVideo }) {
          // Waiting for the first picture holds the sound back too; a video track that never gives one must not
          // hold it forever (the audio queue fills, the demuxer stops, nothing plays).
          switch opened.nextFrame(timeout: 0.25) {
          case .frame(let frame):
            pending = frame
            firstPictureWait = 0
          case .end: pending = nil
          case .timedOut:
            firstPictureWait += 0.25
            if firstPictureWait >= Self.firstPictureLimit { abandonVideo(opened) }
            continue
          }
        } else {
          pending = opened.nextFrame()
        }
        if pending == nil {
          // A network stream that broke off is an error for the host, not an end.
          let broken = opened.health.readFailure.flatMap { $0.kind == .network ? $0 : nil }
          enum Outcome {
            case none, ended, noPictureWithSound, noPicture
            case broken(MediaError)
          }
          // The error state is set with `sourceEnded`, in one critical section: the display must never see the end
          // of a source that failed and call it an end.
          let outcome = lock.withLock { () -> Outcome in
            guard pendingSeek == nil && !stopped else { return .none }
            let none = hasVideo && statsValue.presented == 0 && !ring.hasReady
            if none && audio != nil { return .noPictureWithSound }
            schedule.sourceFinished()
            if let broken {
              schedule.fail()
              return .broken(broken)
            }
            if none {
              schedule.fail()
              return .noPicture
            }
            return .ended
          }
          switch outcome {
          case .none, .ended:
            continue
          case .noPictureWithSound:
            abandonVideo(opened)  // a broken video track is dropped; the sound plays
            continue
          case .broken(let failure):
            onEvent?(.failed(failure))
            return
          case .noPicture:
            onEvent?(.failed(opened.noPictureError(source: source)))
            return
          }
        }
      }
      guard let frame = pending else { continue }
      // A frame whose whole display interval has passed is not worth drawing.
      let late: Bool = lock.withLock {
        !schedule.awaitsPicture && clock.isPlaying && frame.time + frame.duration < clock.time()
      }
      if late {
        lock.withLock { statsValue.dropped += 1 }
        pending = nil
        continue
      }
      guard let slot = takeFreeSlot() else { continue }
      do {
        try renderer.render(frame, into: slot.target, toneMapping: toneMapping)
      } catch {
        fail(MediaError(.unplayable, source: source, reason: "drawing failed (\(error))"))
        return
      }
      lock.withLock {
        slot.frame = frame
        slot.state = .ready
        statsValue.corruptPackets = opened.health.corruptPackets
      }
      pending = nil
    }
    opened.close()
  }

  /// Sound through PipeWire, which then drives the clock; without PipeWire the video plays on the host clock.
  private func startAudio(_ opened: FrameSource) {
    lock.withLock { hasVideo = opened.hasVideo }
    guard let sound = opened.sound else { return }
    let output: AudioOutput
    do {
      output = try AudioOutput(mediaName: lock.withLock { infoValue?.source } ?? source)
    } catch {
      sound.stopAudio()
      lock.withLock { soundDiscarded = true }
      onEvent?(.notice("no audio output (\(error)); playing without sound"))
      return
    }
    output.setActive(false)  // until the first picture starts the clock
    onEvent?(.notice("audio: PipeWire, \(output.sampleRate) Hz stereo; the picture follows the sound"))
    let name = lock.withLock { infoValue?.source } ?? source
    let playback = AudioPlayback(
      sound: sound, output: output, processor: makeProcessor?() ?? dsp,
      reconnect: { try AudioOutput(mediaName: name) }, clockTime: { [clock] in clock.time() },
      onOutputLost: { [weak self] in
        self?.onEvent?(.notice("no audio output (PipeWire went away); playing on without sound"))
      },
      onOutputRestored: { [weak self] in
        guard let self else { return }
        self.onEvent?(.notice("audio: PipeWire is back"))
        self.seek(to: self.clock.time())  // refill from here, so sound and picture start together
      })
    let soundRuns = lock.withLock { () -> Bool? in
      audio = playback
      guard !opened.hasVideo else { return nil }
      // Nothing to wait for: sound starts the clock.
      let runs = schedule.soundAlone(videoGivenUp: false)
      if runs { clock.play() }
      return runs
    }
    if let soundRuns { playback.setPaused(!soundRuns) }  // outside our lock: it takes PipeWire's
    clock.setMaster(playback)
    playback.start()
  }

  /// Seconds of waiting for a first picture, with sound ready, after which the video is given up.
  static let firstPictureLimit = 4.0

  /// The video gave no picture: play the sound alone, on its own clock.
  private func abandonVideo(_ source: FrameSource) {
    source.stopVideo()
    let (playback, paused) = lock.withLock { () -> (AudioPlayback?, Bool) in
      hasVideo = false
      let runs = schedule.soundAlone(videoGivenUp: true)
      if runs { clock.play() }
      return (audio, !runs)
    }
    playback?.setPaused(paused)
    onEvent?(.notice("no picture could be decoded from the video; playing the sound only"))
  }

  /// A free slot of the current ring, waiting a little for one; nil when something else needs handling.
  private func takeFreeSlot() -> VideoSlot? {
    lock.lock()
    defer { lock.unlock() }
    while true {
      if stopped || pendingSeek != nil || ring.needsRebuild { return nil }
      if let slot = ring.takeFree() { return slot }
      lock.wait(until: Date(timeIntervalSinceNow: 0.05))
    }
  }

  private func rebuildRing(_ renderer: Renderer, width: Int, height: Int, redraw: [VideoFrame]) throws {
    var made: [VideoSlot] = []
    let kind = presentation
    for _ in 0..<SlotRing.size {
      let target = try renderer.makeTarget(
        width: width, height: height, exportable: kind == .zeroCopy, readable: kind == .memory)
      made.append(VideoSlot(id: SlotRing.nextID(), target: target))
    }
    // Draw again what was on screen or waiting, at the new size, so a resize while paused stays sharp.
    for (slot, frame) in zip(made, redraw) {
      try renderer.render(frame, into: slot.target, toneMapping: toneMapping)
      slot.frame = frame
      slot.state = .ready
    }
    lock.withLock {
      ring.install(made, width: width, height: height)
      lock.broadcast()
    }
  }
}
