import Foundation
import OrbDSP
import OrbDecode
import OrbRender

/// The engine: opens the media, runs the render thread (`RenderLoop`) that draws frames ahead into a small ring of
/// targets, and tells the display which target to show at each refresh (`frameToShow`, in PlayerDisplay.swift),
/// against the `MediaClock`. Commands (`togglePause`, `seek`, `setSpeed`, `stop`) may come from any thread;
/// `frameToShow` and `release` come from the display (the GTK main thread). Events are delivered on the render
/// thread (and one, the explained failure of a network source that played nothing, on a worker thread of the
/// display's, `explaining`, which `stop` waits for): post them on.
/// Thread-safety: Safe; what changes is one `PlayerState` behind `shared`, the rest is constant.
///
/// Lock order (a lock may be taken while holding only those before it; never the other way):
/// `Player.shared` → `MediaClock` → `AudioPlayback` → the source's state (`MediaPipeline`) → a `BoundedQueue`.
/// A `Cancellation`'s wakers, then a pipe's `Spool` state, are last of all: `interrupt` runs them under the
/// source's state, and they take nothing else; nothing interrupts or cancels while holding a spool's state.
/// PipeWire's thread-loop lock (taken by `AudioPlayback.setPaused` and `AudioOutput`) is never taken while holding
/// `Player.shared`: such calls are collected under the lock and made after it is let go. Events are sent with no
/// lock held.
public final class Player: Sendable {
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
    /// How the engine plays, said once for the log (e.g. "audio: PipeWire, 48000 Hz stereo").
    case notice(String)
    /// Something left out or changed that the user and the host should hear of, playback going on (e.g. "no audio
    /// output", an HLS rendition that could not be loaded).
    case warning(String)
    /// A network source failed to open: try `attempt` of `of` comes in `delay` seconds, for `reason`.
    case retry(attempt: Int, of: Int, delay: Double, reason: String)
  }

  /// What the display should do at this refresh.
  public enum Display: Sendable {
    /// Show this picture now (and release it when the display no longer needs it).
    case show(ShownPicture)
    /// Keep showing what is there.
    case keep
    /// Playback reached the end of the media.
    case ended
  }

  public let source: String
  public let clock: MediaClock
  /// The audio chain: speed, EQ, night mode, remap, volume. Settings may change from any thread.
  public let dsp: DSPChain
  /// How HDR frames are brought to SDR.
  public let toneMapping: ToneMapping

  let onEvent: (@Sendable (Event) -> Void)?
  let credentials: Credentials
  let audioRequest: MediaPipeline.AudioRequest?
  let makeProcessor: (@Sendable () -> AudioProcessing)?
  /// Where the render thread's Vulkan device comes from (`FrameDrawer.Device`).
  let device: FrameDrawer.Device
  let startPosition: Double
  let subtitleFiles: [String]
  let subtitleRequest: SubtitleRequest
  let subtitleDelay: Double
  /// On a Vulkan device that is the CPU (or with none, `FrameDrawer.Device.whenNeeded`), SDR pictures are converted
  /// with swscale into memory targets instead of by the shader; the presentation turns to memory for them.
  let cpuConversion: Bool
  /// The byte order of pictures in memory targets (`Renderer.memoryPixelOrder`): BGRA for a window cairo draws.
  let memoryPixelOrder: PixelOrder
  /// Seconds of waiting between tries to open a network source that failed (`RetrySchedule`).
  let retryFor: Double
  /// The HLS variant to play (`--hls-bitrate`).
  let variant: VariantChoice
  /// Cancels the source's blocking I/O on `stop`, also while it is still opening (a server that never answers).
  let cancellation = Cancellation()
  /// The display's worker asking a server why nothing played (`frameToShow`); `stop` waits for it, so that no event
  /// comes after it returns.
  let explaining = DispatchGroup()
  /// The source opened before the player was made (a local file, while the window started), taken at the open when
  /// it was opened as this player would open it.
  let earlyOpen: EarlyOpen?
  let shared: Locked<PlayerState>

  /// - Parameters:
  ///   - start: seconds into the media to begin at (`--resume-ms`).
  ///   - width, height: the first target size in pixels; the display updates it with `setTargetSize`.
  ///   - timedFromLaunch: the first picture is timed from the process's launch (`stats.firstFrameMs`); false: from
  ///     now (a later entry of a playlist, a file dropped on the window).
  ///   - onEvent: receives the player's events, on the render thread or `explaining`'s worker (post them on).
  public init(
    source: String, credentials: Credentials = .none, start: Double = 0, paused: Bool = false, speed: Double = 1,
    presentation: Presentation, width: Int, height: Int, clock: MediaClock = MediaClock(),
    device: FrameDrawer.Device = .now(nil), audio: MediaPipeline.AudioRequest? = nil,
    audioSettings: DSPSettings = DSPSettings(), audioProcessor: (@Sendable () -> AudioProcessing)? = nil,
    toneMapping: ToneMapping = ToneMapping(), subtitleFiles: [String] = [],
    subtitles subtitleRequest: SubtitleRequest = .automatic, subtitleDelay: Double = 0,
    retryFor: Double = RetrySchedule.fiveMinutes, variant: VariantChoice = .highest,
    deinterlace: DeinterlaceMode = .auto, cpuConversion: Bool = false,
    memoryPixelOrder: PixelOrder = .rgba, earlyOpen: EarlyOpen? = nil, timedFromLaunch: Bool = true,
    onEvent: (@Sendable (Event) -> Void)? = nil
  ) {
    self.earlyOpen = earlyOpen
    self.cpuConversion = cpuConversion
    self.memoryPixelOrder = memoryPixelOrder
    self.retryFor = retryFor
    self.variant = variant
    self.subtitleFiles = subtitleFiles
    self.subtitleRequest = subtitleRequest
    self.subtitleDelay = subtitleDelay
    self.onEvent = onEvent
    self.toneMapping = toneMapping
    audioRequest = audio
    makeProcessor = audioProcessor
    var settings = audioSettings
    settings.speed = speed
    dsp = DSPChain(sampleRate: audio?.sampleRate ?? 48000, settings: settings)
    self.device = device
    self.source = source
    self.credentials = credentials
    startPosition = start
    var initial = PlayerState(
      presentation: presentation, ring: SlotRing(width: width, height: height),
      schedule: PresentationState(paused: paused), startsAt: start)
    initial.deinterlace = deinterlace
    initial.audioDelay = audio?.delay ?? 0
    if !timedFromLaunch { initial.openingFrom = HostTime.now() }
    shared = Locked(initial)
    self.clock = clock
    clock.setSpeed(speed)
    clock.set(start)  // while opening, the position is where playback will begin (the host's resume point)
  }

  /// Starts opening and decoding on the render thread.
  public func start() {
    shared.withLock { $0.renderStarted = true }
    startThread(named: "orb-render", stackSize: 8 << 20) { [self] in
      RenderLoop(player: self).run()
      shared.change { $0.renderDone = true }
    }
  }

  /// Stops the engine: the audio feed, the decoders and the render thread, waiting (up to `timeout` seconds; 0: not
  /// at all, for the main thread) for the render thread to let go of the GPU, so a process can exit cleanly right
  /// after. The display may keep what it holds.
  public func stop(timeout: Double = 2) {
    let (wasStopped, media, playback, started, subtitles) = shared.change { s in
      defer { s.stopped = true }
      return (s.stopped, s.media, s.audio, s.renderStarted, s.subtitles)
    }
    cancellation.cancel()  // an open or read blocked on the network returns now
    earlyOpen?.discard()  // unless the render thread took it
    subtitles?.close()
    playback?.stop()
    clock.setMaster(nil)
    media?.close()  // wakes a render thread blocked on decode
    if started && !wasStopped && timeout > 0 { waitUntilStopped(timeout: timeout) }
    _ = explaining.wait(timeout: .now() + max(timeout, 0.1))  // its request returns at the cancellation
  }

  /// Waits (up to `timeout` seconds) for the render thread to finish after `stop`; true once it has.
  @discardableResult
  public func waitUntilStopped(timeout: Double) -> Bool {
    shared.wait(
      until: { !$0.renderStarted || $0.renderDone }, deadline: Date(timeIntervalSinceNow: timeout),
      then: { _, done in done })
  }

  public var state: State { shared.withLock { $0.schedule.state } }

  /// How targets are made now (it can fall back from zero-copy to memory while playing).
  public var presentation: Presentation { shared.withLock { $0.presentation } }
  /// What the media holds, once opened.
  public var info: MediaInfo? { shared.withLock { $0.info } }
  /// The video stream playing (for an HLS master playlist, the variant chosen), once opened.
  public var videoStream: VideoStreamInfo? { shared.withLock { $0.media?.videoStream } }
  /// The Vulkan device drawing the frames, once opened.
  public var deviceName: String { shared.withLock { $0.deviceName } }

  /// Waiting for data, whatever the cause (a slow, stalled or reconnecting network source, a trickle): the source
  /// ran dry while a picture or sound was due, so the clock is held until a second of media is in hand again (as
  /// mpv's cache pause does). The window says "Buffering…" and the host hears `state: buffering`. Never a pause, a
  /// seek, or decoding more slowly than real time.
  public var isBuffering: Bool {
    // Paused, a wait for data (or for a try, which waits for play) is a pause to whoever asks.
    shared.withLock { !$0.schedule.userPaused && ($0.schedule.isBuffering || $0.retrying) }
  }

  /// Waiting to try a network source again (it failed to open).
  public var isRetrying: Bool { shared.withLock { $0.retrying } }

  public var stats: PlaybackStats {
    let (value, playback) = shared.withLock { ($0.stats, $0.audio) }
    var stats = value
    stats.audioUnderruns = playback?.underruns ?? 0
    return stats
  }
  /// Media seconds now. Past the stated length by less than `endOvershoot` (the sound's last packet outlasting the
  /// pictures: 8.019 s of an 8 s file), it reads as the length: a host's "watched" went past 100 %. Further past, the
  /// length was wrong, and the clock is told as it is.
  public var position: Double {
    let time = clock.time()
    guard let length = duration, length > 0, time > length, time < length + Self.endOvershoot else { return time }
    return length
  }
  static let endOvershoot = 0.5
  public var duration: Double? { shared.withLock { $0.media?.duration } }
  /// The picture of a source of sound alone (its cover), once it is open; nil without one.
  public var coverArt: CoverArt? { shared.withLock { $0.media?.coverArt } }

  public func togglePause() {
    // PipeWire is told after the lock is let go: its loop lock is not one to wait on while holding ours.
    let clock = clock
    // A change: a render thread waiting to retry a source hears a pause (it stops trying) and a play (it tries now).
    let change: (AudioPlayback, Bool)? = shared.change { s in
      guard let (runs, soundHeld) = s.schedule.togglePause() else { return nil }
      if s.schedule.userPaused { clock.pause() } else if runs { clock.play() }
      return s.audio.map { ($0, soundHeld) }
    }
    if let (playback, paused) = change { playback.setPaused(paused) }
  }

  public var isPaused: Bool { shared.withLock { $0.schedule.userPaused } }

  /// Whether the source has pictures to show (true until it is open): sound alone has none.
  public var hasVideo: Bool { shared.withLock { $0.hasVideo } }

  /// Grows with every change of the player's state that its threads wake for (a pause or play, a seek, a picture
  /// drawn or handed back, a resize, the end): a display that stopped asking at every refresh while paused looks at
  /// it to know when to ask again.
  public var changeCount: UInt64 { shared.changeCount }

  /// Playback speed, 0.25...4; sound keeps its pitch (WSOLA) and the picture follows the sound.
  public func setSpeed(_ speed: Double) {
    let s = min(4, max(0.25, speed))
    clock.setSpeed(s)
    dsp.updateSettings { $0.speed = s }
  }

  public var speed: Double { dsp.settings.speed }

  /// Changes the audio chain's settings (volume, mute, EQ, night mode, remap) from any thread.
  public func updateAudio(_ change: (inout DSPSettings) -> Void) { dsp.updateSettings(change) }

  /// Moves playback to `seconds` of media time (clamped at 0): exactly, or (not `exact`) to the key frame before it,
  /// which shows sooner (a preview while the slider is dragged; the release seeks exactly).
  public func seek(to seconds: Double, exact: Bool = true) {
    let target = max(0, seconds)
    shared.change { s in
      s.pendingSeek = target
      s.seekAskedAt = HostTime.now()
      s.pendingSeekExact = exact
      s.seeksAsked = (s.seeksAsked.count + 1, target)
    }
  }

  /// Where a seek is going that has not shown its picture yet: one asked for and not yet taken, or taken and
  /// awaiting its picture; nil when none is. What a seek relative to now starts from (`seekBase`).
  public var seekPending: Double? { stepBase.pending }

  /// The frame on screen and `seekPending`, read together: a frame step counts from the second, else the first.
  public var stepBase: (shown: VideoFrame?, pending: Double?) {
    shared.withLock { s in (s.shownFrame, s.pendingSeek ?? (s.schedule.awaitsPicture ? s.seekingTo : nil)) }
  }

  /// What a seek by an offset (an arrow key, MPRIS `Seek`) starts from: where a seek still under way goes, else the
  /// position. Presses of a held key come faster than a seek shows its picture (a key frame seconds back is decoded
  /// up to the target), and each counted from the position that had not moved yet: ten of +5 s went 36 s.
  public var seekBase: Double { seekPending ?? position }

  /// How many seeks were asked for (`seek(to:)`: keys, the bar, clients, a loop back to the start, a frame step),
  /// and the last one's target: what MPRIS announces as Seeked. The player's own repositioning (a reconnect where
  /// it broke off) is not one.
  public var seeksAsked: (count: Int, target: Double) { shared.withLock { $0.seeksAsked } }

  /// Where playback begins (media seconds): the resume point asked for, or 0 when that is past the end.
  public var startsAt: Double { shared.withLock { $0.startsAt } }

  /// The subtitle tracks and the cues shown, once the media is open (nil before).
  public var subtitles: SubtitlePlayback? { shared.withLock { $0.subtitles } }

  /// The peak the last HDR picture drawn was tone-mapped from, nits: the metadata's, or the one measured in the
  /// pictures with `ToneMapping.peakDetect` (for the stats overlay); nil for SDR.
  public var curvePeak: Double? { shared.withLock { $0.curvePeak } }

  /// Whether SDR pictures are converted by swscale on the CPU (a CPU Vulkan device), not by the shader.
  public var convertsOnCPU: Bool { shared.withLock { $0.convertsOnCPU } }

  /// The frame on screen, as the decoder gave it (for the stats overlay).
  public var shownFrame: VideoFrame? { shared.withLock { $0.shownFrame } }

  /// The audio tracks of the media, and the one playing (1-based; nil without sound).
  public var audioTracks: (count: Int, current: Int?) {
    shared.withLock { s in
      let tracks = s.info?.audio ?? []
      guard let playing = s.media?.sound?.audioStream, s.audio != nil else { return (tracks.count, nil) }
      return (tracks.count, tracks.firstIndex { $0.index == playing.index }.map { $0 + 1 })
    }
  }

  /// Which pictures are deinterlaced (`--deinterlace`, the `d` key).
  public var deinterlace: DeinterlaceMode { shared.withLock { $0.deinterlace } }

  /// Deinterlaces by `mode` from the next picture decoded; a paused picture is decoded again to show it.
  public func setDeinterlace(_ mode: DeinterlaceMode) {
    let media = shared.change { s -> FrameSource? in
      s.deinterlace = mode
      return s.media
    }
    media?.setDeinterlace(mode)  // before the seek below flushes the decoder
    let here = clock.time()
    shared.change { s in
      guard s.schedule.userPaused, s.pendingSeek == nil else { return }
      s.pendingSeek = here
      s.pendingSeekExact = true
    }
  }

  /// Seconds the sound is heard after its picture (negative: before); 0 unless set (`setAudioDelay`).
  public var audioDelay: Double { shared.withLock { $0.audioDelay } }

  /// The most the sound is set apart from its picture either way (`setAudioDelay`): a wireless headset's delay is a
  /// few tenths of a second. To play the sound earlier the demuxer reads the pictures that far ahead, which its video
  /// packet queue (512 packets, 64 MB) holds for 2 s of a 120 fps or 250 Mb/s stream.
  public static let mostAudioDelay = 2.0

  /// Plays the sound `seconds` after its picture (negative: before; within `mostAudioDelay`), as mpv's
  /// `audio-delay` does, from where playback is: a seek there (as for a track switch) places the sound anew, that
  /// much later on the timeline the clock and the pictures follow, so each moment's sound is heard that long after
  /// its picture (in media time: at twice the speed, half as long). After an exact seek the sound starts with the
  /// picture: the demuxer lands the delay before the target, where the target's sound is (`Demuxer`). After a quick
  /// one (the slider dragged), which shows the key frame before the target, a positive delay's sound starts after
  /// that much silence.
  /// A delay from the start is the audio request's (`MediaPipeline.AudioRequest.delay`), with no seek.
  public func setAudioDelay(_ seconds: Double) {
    let delay = min(max(seconds, -Self.mostAudioDelay), Self.mostAudioDelay)
    let here = seekBase
    shared.change { s in
      guard s.audioDelay != delay else { return }
      s.audioDelay = delay
      s.pendingAudioDelay = delay
      if s.pendingSeek == nil {
        s.pendingSeek = here
        s.pendingSeekExact = true
      }
    }
  }

  /// Switches sound to audio track `track` (1-based) where playback is now: picture and sound stay in step.
  public func switchAudioTrack(_ track: Int) {
    let here = clock.time()
    shared.change { s in
      s.pendingSeek = here
      s.pendingSeekExact = true
      s.pendingAudioTrack = track
    }
  }

  /// Switches how targets are made (e.g. to memory copies when GL import fails): the ring is made anew.
  public func usePresentation(_ new: Presentation) {
    shared.change { s in
      guard s.presentation != new else { return }
      s.presentation = new
      s.ring.invalidate()  // forces the render thread to rebuild, drawing again what was waiting
    }
  }

  /// The display's size in pixels: targets are drawn at it, so scaling happens once, in the shader.
  public func setTargetSize(width: Int, height: Int) {
    shared.change { _ = $0.ring.want(width: width, height: height) }
  }

  /// Playback failed: the state says so, then the host hears why.
  func fail(_ error: MediaError) {
    shared.withLock { $0.schedule.fail() }
    onEvent?(.failed(error))
  }
}
