import CGtk
import Foundation
import OrbDSP
import OrbDecode
import OrbPlayer
import OrbRender

/// The GtkApplication and its one window: its life (start-up off the main thread, the engine for each entry, the
/// error and exit policy) and the widgets it is made of. What keys and controls ask for is in PlayerWindow+Keys, the
/// playlist and welcome page in PlayerWindow+Playlist, where a person left off in PlayerWindow+Resume, the host's
/// markers in PlayerWindow+Markers. Text over the video is `Overlays`, subtitles `SubtitleView`; what the host hears
/// is `HostReport`; the key map is `KeyCommand`.
/// Thread-safety: main actor, as all of OrbApp is (its default isolation), so the compiler refuses any use of the
/// window off the main thread; the engine's events and the workers' results come here through `MainLoop.post`.
final class PlayerWindow {
  let options: Options
  /// The entries played in order; `source` is the one playing.
  var playlist: Playlist
  var source: String
  /// Counts the entries started, so the timers of an entry that has gone stop.
  var entrySerial = 0
  /// How many entries were started (their `file` event told): the MPRIS track of the one playing is this less one.
  var entriesPlayed = 0
  /// A player was made: what a later one plays was not what the launch waited for (`Player.timedFromLaunch`).
  var madePlayer = false
  /// The host's launch (the entries as given) is what markers and the resume point belong to; a drop or an Open
  /// is a person's own choice.
  var playingLaunch = true
  /// The host's resume point is for the launch's first opening of its first entry: gone back to later (`<`), that
  /// entry starts where a person's own would (it started at the host's point again, however far it had played).
  var hostResumeSpent = false
  var welcome: WelcomePage?
  /// Subtitle files dropped while the entry was still opening: added once it has.
  var subtitlesToAdd: [String] = []
  /// Subtitle files dropped with videos: the next entry to start takes them as `subtitlesToAdd`.
  var subtitlesWithNext: [String] = []
  /// Where a person left off their own files (not read or written with `--resume no`).
  var memory = ResumeMemory()
  /// The entry playing was ended by skipping an intro or credits that run to its end: it is remembered as watched.
  var skippedToTheEnd = false
  /// The entry (`entrySerial`) whose pipe's wait for a writer was said.
  var pipeWaitTold: Int?
  /// A failure to write `memory` was said (once a window).
  var memoryProblemTold = false
  /// The remembered place of the entry playing, offered or used at its start.
  var remembered: ResumeMemory.Entry?
  var resumeOffer: ResumeOffer?
  /// The entry's engine that is letting go of the GPU while the next one waits (the process waits for it too).
  var stopping: Player?
  let report: HostReport
  var app: UnsafeMutablePointer<GtkApplication>!
  var window: UnsafeMutablePointer<GtkWidget>!
  var overlay: UnsafeMutablePointer<GtkWidget>!
  /// The picture and its subtitles, under the controls: what a screenshot shows.
  var pictureLayer: UnsafeMutablePointer<GtkWidget>!
  /// The cover of a file of sound alone, shown over the video view (`showCover`), or its name where it has none
  /// (`showSoundCard`); nil for video.
  var cover: UnsafeMutablePointer<GtkWidget>?
  /// The cover as a picture file, for MPRIS, once written; removed with the cover.
  var coverFile: String?
  /// The speed, sound settings and audio delay the last entry was left with, for the next (nil for the first: the
  /// options').
  var carried: (speed: Double, sound: DSPSettings, audioDelay: Double)?
  /// `--loop`, or `L`: an entry that ends plays again from its start.
  lazy var looping = options.loop
  /// `--deinterlace`, or `d`: which pictures are deinterlaced, for every entry.
  lazy var deinterlacing = options.deinterlace
  /// The entry's own title and artist tags, once it is open ("Title — Artist"), as mpv and Celluloid name a window;
  /// nil without a title tag (the file's name then).
  var mediaTitle: String?
  var overlays: Overlays!
  var presentationText = "starting"
  var audioText: String?
  /// Made in `activate`: GTK widgets exist only after GTK's start-up.
  var video: VideoView!
  var transport: TransportBar!
  var subtitleView: SubtitleView!
  var skipButton: SkipButton!
  /// Where the pointer was last seen over the window.
  var pointer: (x: Double, y: Double)?
  /// The host's marker windows, checked against the duration once the media is open.
  var markers: MarkerTimeline?
  var mpris: MPRIS?
  var player: Player?
  var finished = false
  /// `closeDown` has run.
  var closedDown = false
  /// An error was reported: the run ends with it, not with an `ended` event.
  var failed = false
  var sizedToVideo = false
  /// The status the process exits with; kept by the last word, which the signal thread reads when this thread hangs.
  private(set) var exitStatus: Int32 {
    get { report.lastWord.status }
    set { report.lastWord.status = newValue }
  }

  init(options: Options, sources: [String]) {
    self.options = options
    playlist = Playlist(sources)
    source = sources.first ?? ""
    report = HostReport(eventsFd: options.eventsFd, resumeMs: options.resumeMs ?? 0)
  }

  /// The launch's local file, opened and decoding while GTK starts (`EarlyOpen`); the first player takes it, and
  /// anything else lets it go.
  var earlyOpen: EarlyOpen?

  /// The request the player for the entry playing makes of its source; `screen` is the variant for the screen (the
  /// highest before the window exists: it matters only for a master playlist).
  func openRequest(variant screen: VariantChoice) -> EarlyOpen.Request {
    EarlyOpen.Request(
      source: source, start: startPosition(),
      // `--audio-delay`, or the delay the last entry's sound was left with.
      audio: options.noAudio
        ? nil : MediaPipeline.AudioRequest(track: options.audioTrack, delay: carried?.audioDelay ?? options.audioDelay),
      variant: options.variant ?? screen, deinterlace: deinterlacing)
  }

  /// Runs the GTK main loop until the window closes; returns the process exit status.
  func run() -> Int32 {
    // Before any thread starts: it sets environment variables, which no other thread may be reading.
    WindowRenderer.choose(for: options.videoOutput)
    if WindowRenderer.isCairo {
      Self.keepFrameSizedBlocks(width: options.geometry?.width ?? 1280, height: options.geometry?.height ?? 720)
    }
    // A session logging out or a host stopping the player (SIGTERM, SIGHUP), or Ctrl-C in a terminal (SIGINT): the
    // host still hears where playback was. Taken from here on, before GTK starts (80 ms): a host that launched the
    // player and stopped it at once (the viewer chose another episode) heard nothing, not even its resume point.
    let lastWord = report.lastWord
    SignalWatch.start(
      SignalWatch.Hooks(
        onMain: { [unowned self] _ in self.terminate() }, speak: { lastWord.speak() }, status: { lastWord.status },
        flush: { lastWord.flush() }))
    if EarlyOpen.applies(to: source) {
      // Without a GPU, pictures are drawn on the CPU: the first one is drawn beside GTK's start too.
      earlyOpen = EarlyOpen(
        openRequest(variant: .highest), credentials: options.credentials(for: source),
        drawAhead: vulkanWhenNeeded ? drawAhead : nil)
    }
    defer { earlyOpen?.discard() }  // never played: no display, a failure before the window, …
    guard Self.connectDisplay() else {
      let name =
        ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"] ?? ProcessInfo.processInfo.environment["DISPLAY"]
      FileHandle.standardError.write(
        Data("orb-player: cannot open a window: cannot connect to the display \(name ?? "")\n".utf8))
      return 1
    }
    Self.current = self
    orb_on_display_lost(gdk_display_get_default()) { _ in
      // GTK's calls are the main thread's; should another thread's X call fail first, the words are all it can give.
      if Thread.isMainThread {
        MainActor.assumeIsolated { PlayerWindow.current?.displayLost() }
      } else {
        FileHandle.standardError.write(Data("orb-player: lost the connection to the display\n".utf8))
      }
      _exit(1)
    }
    app = gtk_application_new("org.orb.Player", G_APPLICATION_NON_UNIQUE)
    Signals.plain(raw(app), "activate") { [unowned self] in self.activate() }
    var argv: [UnsafeMutablePointer<CChar>?] = [strdup("orb-player"), nil]
    let status = g_application_run(cast(raw(app)), 1, &argv)
    if finished { closeDown() }
    g_object_unref(raw(app))
    // The window is gone: now, off the UI, wait for the engine to let go of the GPU before the process exits.
    player?.waitUntilStopped(timeout: 2)
    stopping?.waitUntilStopped(timeout: 2)
    _ = workers.wait(timeout: .now() + 2)  // a Vulkan init or probe still running must not see the process go
    report.flush()
    return status != 0 ? status : exitStatus
  }

  /// GTK 4.8's cairo renderer makes about three window-sized images a frame and frees them; glibc's malloc gave
  /// their memory back to the kernel each time (mapped blocks, or its heap trimmed), so every frame faulted some
  /// 2,700 pages in again: 1.1 s of system time in 10 s of 1080p30 in a 1280x720 window, a fifth of the player's
  /// CPU. So blocks up to a window's picture (4 bytes a pixel, and 1 MB more) come from the heap, and twice that of
  /// free heap stays mapped for the next frame; the window says when its size changes. Larger blocks are mapped on
  /// their own, as glibc does by default: a 4K decoder's 16 MB planes, kept in FFmpeg's pool anyway, varied peak
  /// memory by two pictures (386-452 MB) from the heap, and frames dropped as it grew.
  static func keepFrameSizedBlocks(width: Int, height: Int) {
    let picture = max(1, width) * max(1, height) * 4
    // glibc takes at most 32 MB as the largest block from the heap (a 4K screen's picture is 33 MB).
    orb_malloc_keep(Int32(min(picture + (1 << 20), 32 << 20)), Int32(min(2 * picture + (1 << 20), 64 << 20)))
  }

  /// cairo's shared memory for the window's uploads, kept between frames.
  private let uploadMemory = X11UploadMemory()
  /// The window's size in pixels that `keepFrameSizedBlocks` was last told.
  private var keptFor = (width: 0, height: 0)
  /// Where giving back start-up's memory stands (`trimStartUp`).
  private var startUpTrim = StartUpTrim.waiting
  private enum StartUpTrim {
    case waiting
    /// The first picture is shown at this refresh and painted after it: the trim waits for the next refresh.
    case pictureShown
    case done
  }

  /// Once the first picture is up, what start-up freed (GTK's theme and widgets being built, the open and the probe)
  /// goes back to the system: malloc keeps freed pages inside its heaps, where playback's own blocks, which come
  /// later and stay, need not land on them. 1080p H.264 in a 1280x720 window, three runs each: peak RSS 146-148 ->
  /// 143 MB; HDR10 1080p 175-181 -> 174-175 MB. On a worker: trimming walks every heap. Only once that picture
  /// has been painted: started at the refresh that showed it, the trim gave back the heap its paint was about to
  /// take, which then faulted 900 pages in again.
  private func trimStartUp(firstPictureShown: Bool) {
    switch (startUpTrim, firstPictureShown) {
    case (.waiting, true): startUpTrim = .pictureShown
    case (.pictureShown, _):
      startUpTrim = .done
      offMainThread("orb-trim", { orb_malloc_trim() }, done: { _ in })
    default: break
    }
  }

  /// Tells `keepFrameSizedBlocks` the window's size when it has changed (each frame; a resize, fullscreen), and keeps
  /// cairo's upload memory for that size. Only GTK's cairo renderer makes such images; with a GPU, malloc keeps its
  /// own defaults.
  private func keepBlocksForWindow() {
    guard video.drawsWithCairo else { return }
    // From the window's first frame, which comes before the first picture is drawn (a black one, or the picture):
    // kept only once the picture was up, the pool was made for the window's first frame and again for the picture's,
    // whose paint faulted its 900 pages in again on the way to the screen. First picture painted, 12 runs each of
    // 1080p30 H.264 in a 1280x720 window (with the ring's targets no longer filled black ahead): median 159 -> 150 ms.
    uploadMemory.keep(for: window)
    let scale = Int(gtk_widget_get_scale_factor(window))
    let size = (width: Int(gtk_widget_get_width(window)) * scale, height: Int(gtk_widget_get_height(window)) * scale)
    guard size.width > 0, size.height > 0, size != keptFor else { return }
    keptFor = size
    Self.keepFrameSizedBlocks(width: size.width, height: size.height)
  }

  /// Connects GTK to the display. A display that is up but busy (a loaded X server with a full listen queue) can
  /// refuse a connection for a moment, so it is asked again for up to a second before the player gives up.
  static func connectDisplay() -> Bool {
    if gtk_init_check() != 0 { return true }
    for _ in 0..<10 {
      usleep(100_000)
      if let display = gdk_display_open(nil) {
        gdk_display_manager_set_default_display(gdk_display_manager_get(), display)
        return true
      }
    }
    return false
  }

  /// The Vulkan device, made on a worker thread while the window opens (nil until it is there).
  var vulkan: Result<VulkanContext, Error>?
  /// No GPU, and pictures go to memory for cairo anyway: no Vulkan device is made unless a picture needs one (a
  /// wide-gamut SDR or rotated one), so SDR and HDR video never load lavapipe and its LLVM
  /// (`FrameDrawer.Device.whenNeeded`).
  lazy var vulkanWhenNeeded = WindowRenderer.isCairo && options.videoOutput == .auto
  /// The surface is realized but the device was not ready yet: playback starts when it is.
  var startWhenVulkanReady = false
  var presented = false

  /// The worker threads still running (the process waits for them before it exits).
  let workers = DispatchGroup()

  /// Work that would block the main thread runs on a worker; `done` gets the result on the main thread.
  func offMainThread<T: Sendable>(
    _ name: String, _ work: @escaping @Sendable () -> T, done: @escaping @MainActor (T) -> Void
  ) {
    let group = workers
    group.enter()
    startThread(named: name) {
      let value = work()
      MainLoop.post { done(value) }
      group.leave()
    }
  }

  /// Ends playback for a stop signal, once the window is there to close (GLib runs the handler when its loop does,
  /// after `activate`).
  private func terminate() {
    guard window != nil else {
      // Before the window exists: the host hears it now, however long the start takes.
      report.ended(reason: "terminated", player: player)
      return MainLoop.after(milliseconds: 10) { [unowned self] in self.terminate() }
    }
    finish(reason: "terminated", status: exitStatus)
  }

  func activate() {
    video = VideoView()
    window = gtk_application_window_new(app)
    gtk_window_set_title(cast(raw(window)), windowTitle)
    gtk_window_set_default_size(cast(raw(window)), 1280, 720)
    if let g = options.geometry {
      // The size asked for, kept when the video opens; the place once the window exists (X11 only).
      gtk_window_set_default_size(cast(raw(window)), Int32(g.width), Int32(g.height))
      sizedToVideo = true
      if let x = g.x, let y = g.y {
        Signals.plain(raw(window), "map") { [unowned self] in
          if orb_move_window(self.window, Int32(x), Int32(y)) == 0 {
            self.log("--geometry: this display places windows itself; only the size is kept")
          }
        }
      }
    }
    // The Vulkan device and the probe of a local file are made on worker threads, so the main thread never waits.
    if !vulkanWhenNeeded {
      offMainThread(
        "orb-vulkan-init", { Result { try VulkanContext() } },
        done: { [unowned self] result in
          self.vulkan = result
          if self.startWhenVulkanReady { self.startPlayback() }
        })
    }
    // A local file or built-in pattern is probed first (milliseconds), so the window opens at the video's size
    // instead of resizing once it plays; a probe that takes longer than `presentWaitMs` does not hold the window
    // back. Network sources size the window when they open.
    let probesFirst = EarlyOpen.applies(to: source) || TestPatternSource.isTestURL(source)
    if probesFirst {
      let (source, early) = (self.source, earlyOpen)
      offMainThread(
        "orb-probe", { early.map { $0.info() } ?? (try? MediaOpener.probe(source)) },
        done: { [unowned self] info in
          if !self.presented, !self.sizedToVideo, let info { self.size(to: info) }
          self.present()
        })
      MainLoop.after(milliseconds: Self.presentWaitMs) { [weak self] in self?.present() }
    }
    overlay = gtk_overlay_new()
    overlays = Overlays(over: overlay)
    pictureLayer = gtk_overlay_new()
    gtk_overlay_set_child(opaque(pictureLayer), video.picture)
    gtk_overlay_set_child(opaque(overlay), pictureLayer)
    gtk_window_set_child(cast(raw(window)), overlay)
    installCSS()
    gtk_widget_add_css_class(window, "orb-video-window")
    // The cairo-drawn video view paints every pixel of its area itself (black where there is no picture), and must
    // be the first thing drawn there for cairo to replay its picture in place (VideoView.paint).
    if video.drawsWithCairo { gtk_widget_add_css_class(window, "orb-self-painted") }

    let keys = gtk_event_controller_key_new()!
    Signals.keyPressed(raw(keys)) { [unowned self] keyval, state in self.key(keyval, state) }
    gtk_widget_add_controller(window, keys)
    let click = gtk_gesture_click_new()!
    Signals.pressed(raw(click)) { [unowned self] count in
      // A click shows or hides the controls (as a tap does on the family's other players); two are fullscreen.
      if count == 2 {
        self.toggleFullscreen()
      } else if self.transport.isVisible {
        self.transport.hide()
      } else {
        self.showTransport()
      }
    }
    gtk_widget_add_controller(video.picture, click)
    // The wheel over the picture: up is louder, down quieter (as VLC and mpv have it); sideways seeks 5 s. Each
    // notch is a step; a touchpad's swipe (in pixels on Wayland, `wheelPixels` a step) steps once it adds up to one.
    let wheel = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES)!
    Signals.scroll(raw(wheel)) { [unowned self] dx, dy in
      let pixels = gtk_event_controller_scroll_get_unit(wheel) == GDK_SCROLL_UNIT_SURFACE
      let scale = pixels ? 1 / Self.wheelPixels : 1
      self.wheel = (self.wheel.x + dx * scale, self.wheel.y + dy * scale)
      while abs(self.wheel.y) >= 1 {
        let up = self.wheel.y < 0
        self.wheel.y += up ? 1 : -1
        self.perform(.volume(up ? 5 : -5))
      }
      while abs(self.wheel.x) >= 1 {
        let right = self.wheel.x > 0
        self.wheel.x += right ? -1 : 1
        self.perform(.seek(right ? 5 : -5))
      }
      return true
    }
    gtk_widget_add_controller(video.picture, wheel)
    subtitleView = SubtitleView(over: pictureLayer)
    subtitleView.scale = options.subtitleScale
    subtitleView.onText = { [unowned self] text, start, end in self.report.cue(text: text, start: start, end: end) }
    skipButton = SkipButton(over: overlay)
    skipButton.onSkip = { [unowned self] marker in self.skip(marker) }
    video.onTick = { [unowned self] in
      self.keepBlocksForWindow()
      if self.transport.isVisible { self.transport.fit(width: Int(gtk_widget_get_width(self.window))) }
      guard let player = self.player else { return }
      self.trimStartUp(firstPictureShown: player.stats.firstFrameMs != nil)
      self.subtitleView.update(player, video: self.video.picture, barHeight: self.transport.shownHeight)
      self.followMarkers(player)
    }
    transport = TransportBar()
    gtk_overlay_add_overlay(opaque(overlay), transport.widget)
    transport.subtitleEntries = { [unowned self] in self.subtitleEntries() }
    transport.onSubtitleChosen = { [unowned self] index in self.chooseSubtitles(index == 0 ? nil : index) }
    transport.onPlayPause = { [unowned self] in self.togglePause() }
    transport.onSeek = { [unowned self] seconds, exact in
      self.video.wake()
      self.player?.seek(to: seconds, exact: exact)
    }
    transport.onFullscreen = { [unowned self] in self.toggleFullscreen() }
    transport.audioEntries = { [unowned self] in self.audioEntries() }
    transport.onAudioChosen = { [unowned self] index in self.chooseAudio(index + 1) }
    transport.onMute = { [unowned self] in self.perform(.toggleMute) }
    transport.onClose = { [unowned self] in self.finish(reason: "user-quit", status: self.exitStatus) }
    transport.onSpeed = { [unowned self] speed in
      self.player?.setSpeed(speed)
      self.overlays.showMessage("Speed \(TransportBar.speedText(speed))")
      self.updateTransport()
    }
    transport.onVolume = { [unowned self] percent in
      self.player?.updateAudio {
        $0.volumePercent = percent
        $0.isMuted = false
      }
      self.updateTransport()
    }
    // The pointer goes with the controls while playing, as in every player.
    transport.onHidden = { [unowned self] in
      if self.player.map({ !$0.isPaused }) ?? false { gtk_widget_set_cursor_from_name(self.window, "none") }
      self.video.wake()  // the subtitles move down with the bar, paused or not
    }
    let motion = gtk_event_controller_motion_new()!
    Signals.motion(raw(motion)) { [unowned self] x, y in
      // GTK also reports the pointer where it already was (around a click): only a move shows the controls.
      guard self.pointer.map({ abs($0.x - x) + abs($0.y - y) > 1 }) ?? true else { return }
      self.pointer = (x, y)
      self.showTransport()
    }
    gtk_widget_add_controller(window, motion)
    Signals.returningBool(raw(window), "close-request") { [unowned self] in
      self.finish(reason: "user-quit", status: self.exitStatus, windowClosing: true)
      return false
    }
    Signals.plain(raw(video.picture), "realize") { [unowned self] in self.startPlayback() }
    video.onEnded = { [unowned self] in
      if self.looping, let player = self.player {
        // Again from the start, without a word to the host: the position going back to 0 says it.
        self.skippedToTheEnd = false
        player.seek(to: 0)
        self.video.attach(player)
      } else if self.playlist.next() {
        self.playEntry()
      } else {
        self.finish(reason: "eof", status: 0)
      }
    }
    if options.fullscreen { gtk_window_fullscreen(cast(raw(window))) }
    if !probesFirst { present() }
    installDrop()
    if playlist.current == nil { showWelcome() }
    let mpris = MPRIS(
      hooks: MPRIS.Hooks(
        player: { [unowned self] in self.player },
        title: { [unowned self] in self.windowTitle },
        art: { [unowned self] in self.coverFile.map { URL(fileURLWithPath: $0).absoluteString } },
        quit: { [unowned self] in self.finish(reason: "user-quit", status: self.exitStatus) },
        raise: { [unowned self] in gtk_window_present(cast(raw(self.window))) },
        playPause: { [unowned self] wantPlaying in
          guard let player = self.player else { return }
          if wantPlaying == nil || wantPlaying == player.isPaused { self.togglePause() }
        },
        go: { [unowned self] forward in self.go(forward: forward) },
        canGo: { [unowned self] in (self.playlist.canGoNext, self.playlist.canGoPrevious) },
        open: { [unowned self] uri in self.play([uri]) },
        track: { [unowned self] in max(0, self.entriesPlayed - 1) }))
    mpris.start()
    self.mpris = mpris
  }

  /// The early open, for the player of the entry it was made for (the launch's first); let go for any other.
  func takeEarlyOpen() -> EarlyOpen? {
    defer { earlyOpen = nil }
    guard let early = earlyOpen else { return nil }
    if playingLaunch && playlist.index == 0 && early.request.source == source { return early }
    early.discard()
    return nil
  }

  /// Milliseconds the window waits for the probe of a local file before it opens at the default size.
  static let presentWaitMs: UInt32 = 250

  func present() {
    guard !presented, !finished else { return }
    presented = true
    gtk_window_present(cast(raw(window)))
    MainLoop.after(milliseconds: Self.openingNoticeMs) { [weak self] in
      guard let self, !self.finished, !self.failed, self.playlist.current != nil,
        self.player.map({ $0.state == .loading }) ?? true
      else { return }
      self.overlays.showMessage("Opening…", keep: true)
      self.waitingShown = true
    }
  }

  /// Milliseconds of opening before the window says "Opening…" (a local file shows its picture before then).
  static let openingNoticeMs: UInt32 = 300

  /// The host's `--title` for what it launched; a file a person dropped or opened is named by itself.
  var windowTitle: String {
    if playingLaunch, let title = options.title, !title.isEmpty { return title }
    if let mediaTitle { return mediaTitle }
    if source.isEmpty { return "Orb Player" }
    if TestPatternSource.isTestURL(source) { return "Orb Player — \(source)" }
    return MediaSource.displayName(source)
  }

  /// The HLS variant for the screen the window is on: the cheapest that fills it (`VariantChoice.fitting`), so a 4K
  /// master plays its 1080p variant on a 1080p screen. The highest when the screen is not known, and for a source
  /// that cannot be a master playlist (a local file not named .m3u8, the built-in patterns): asking X11 for the
  /// screens took 6-9 ms of a local file's first picture.
  func screenVariant() -> VariantChoice {
    let mayHaveVariants =
      MediaSource.isURL(source) ? !TestPatternSource.isTestURL(source) : source.lowercased().hasSuffix(".m3u8")
    guard mayHaveVariants, let native = gtk_widget_get_native(video.picture),
      let surface = gtk_native_get_surface(native),
      let monitor = gdk_display_get_monitor_at_surface(gdk_surface_get_display(surface), surface)
    else { return .highest }
    var area = GdkRectangle()
    gdk_monitor_get_geometry(monitor, &area)
    let scale = Int(gdk_monitor_get_scale_factor(monitor))
    guard area.width > 0, area.height > 0 else { return .highest }
    return .fitting(width: Int(area.width) * scale, height: Int(area.height) * scale)
  }

  /// The window's surface exists now: choose the presentation path and start the engine.
  func startPlayback() {
    guard player == nil, !finished, !source.isEmpty else { return }
    var vulkan: VulkanContext?
    if !vulkanWhenNeeded {
      guard let made = self.vulkan else {
        startWhenVulkanReady = true
        return
      }
      do {
        vulkan = try made.get()
      } catch {
        fail(MediaError(.unplayable, source: source, reason: "no usable Vulkan device (\(error))"))
        return
      }
    }
    entrySerial += 1
    let entry = entrySerial
    let (presentation, why) = video.choosePresentation(requested: options.videoOutput, vulkan: vulkan)
    if options.videoOutput == .zeroCopy && presentation != .zeroCopy {
      log("zero-copy presentation unavailable: \(why); using memory copies")
    }
    let deviceName = vulkan?.deviceName ?? "none until a picture needs one (SDR and HDR are drawn on the CPU)"
    log("presentation: \(presentation.rawValue) (\(why)); Vulkan device: \(deviceName)")
    presentationText = presentation == .zeroCopy ? "zero-copy GL import" : "memory copies (\(why))"
    // The view has no size before its first allocation: the window's default size (the video's own, or the one
    // asked for), which it is about to get, stands for it, so that the first picture is drawn at the size it is
    // shown at. Drawn at 16x16, it was shown blurred until the targets were made again at the window's size, two or
    // three refreshes with no new picture, and at 60 fps the picture after it sometimes came too late and was
    // dropped.
    let allocated = video.pixelSize
    let (w, h) = allocated.0 > 0 && allocated.1 > 0 ? allocated : defaultPixelSize
    let request = openRequest(variant: screenVariant())
    let player = Player(
      // The host's credentials are for what the host launched, never for a file or link a person drops or opens.
      source: source, credentials: playingLaunch ? options.credentials(for: source) : .none, start: request.start,
      paused: options.paused,
      speed: carried?.speed ?? options.speed, presentation: presentation, width: max(w, 16), height: max(h, 16),
      device: vulkan.map { .now($0) } ?? .whenNeeded, audio: request.audio,
      audioSettings: carried?.sound
        ?? DSPSettings(
          equalizerGainsDB: options.equalizer ?? [Double](repeating: 0, count: 10), nightMode: options.nightMode,
          remap: options.remap, volumePercent: Double(options.volume),
          isMuted: options.mute),
      toneMapping: options.toneMapping, subtitleFiles: options.subtitleFiles, subtitles: options.subtitles,
      subtitleDelay: options.subtitleDelay, retryFor: options.retryFor, variant: request.variant,
      deinterlace: request.deinterlace, cpuConversion: options.videoOutput == .auto, memoryPixelOrder: memoryPixelOrder,
      earlyOpen: takeEarlyOpen(), timedFromLaunch: playingLaunch && !madePlayer,
      onEvent: { [unowned self] event in
        // An entry that has gone may still speak (a failure as the next one starts): only the current one is heard.
        MainLoop.post { [unowned self] in if self.entrySerial == entry { self.handle(event) } }
      })
    self.player = player
    report.lastWord.follow(player)
    // Those dropped on the last entry are gone with it; those dropped with this one wait for it to open.
    (subtitlesToAdd, subtitlesWithNext) = (subtitlesWithNext, [])
    transport?.closeMenu()  // it lists the last entry's tracks
    madePlayer = true
    video.attach(player)
    player.start()
    report.file(index: playlist.index ?? 0, count: playlist.count, title: windowTitle)
    entriesPlayed += 1
    // Each stops at the end, at the next entry, or at an error (the window lingers on it; the host has heard the
    // last of this entry: a `state` or `settings` after the error said playback went on).
    MainLoop.every(milliseconds: 1000) { [weak self] in
      guard let self, self.reports(entry) else { return false }
      if let player = self.player { self.report.progress(player) }
      return true
    }
    let opening = Date()
    // A wait for data is told within a tenth of a second, with the position where it began or ended.
    MainLoop.every(milliseconds: 100) { [weak self] in
      guard let self, self.reports(entry), let player = self.player else { return false }
      self.updateWaiting(player, since: opening)
      return true
    }
    MainLoop.every(milliseconds: 500) { [weak self] in
      guard let self, self.reports(entry), let player = self.player else { return false }
      self.updateInhibit()
      self.report.settings(self.viewerSettings(player))
      if player.stats.presented > 0 { self.playlist.played() }
      return true
    }
  }

  /// Whether entry `entry` still has things to tell: it is the one playing, and neither the end nor an error came.
  private func reports(_ entry: Int) -> Bool { !finished && !failed && entrySerial == entry }

  var waitingShown = false
  /// The wheel's scrolling not yet taken as a step (a touchpad's swipe comes in fractions of one).
  var wheel = (x: 0.0, y: 0.0)
  /// A touchpad's swipe this many pixels long is one notch of a wheel.
  static let wheelPixels = 40.0
  /// GtkApplication's cookie while the screensaver and idle suspend are held off (0: not).
  var inhibitCookie: guint = 0

  /// Holds off the screensaver and idle suspend while a video plays (the session manager's inhibitor, through
  /// GtkApplication), and lets go when it pauses, ends, fails or closes.
  func updateInhibit() {
    let playing = !finished && !failed && player.map { $0.state == .playing && !$0.isBuffering } ?? false
    let wanted = playing && (player?.info.map { !$0.video.isEmpty } ?? false)
    if wanted && inhibitCookie == 0 {
      let flags = GtkApplicationInhibitFlags(
        GTK_APPLICATION_INHIBIT_IDLE.rawValue | GTK_APPLICATION_INHIBIT_SUSPEND.rawValue)
      inhibitCookie = gtk_application_inhibit(app, cast(raw(window)), flags, "Playing a video")
    } else if !wanted && inhibitCookie != 0 {
      gtk_application_uninhibit(app, inhibitCookie)
      inhibitCookie = 0
    }
  }

  /// "Connecting…" while a source takes long to open, "Buffering…" while a playing one waits for data; the host
  /// hears `state: buffering` and `state: playing` around the wait.
  func updateWaiting(_ player: Player, since opening: Date) {
    let loading = player.state == .loading
    let connecting = loading && Date().timeIntervalSince(opening) > 1.5
    let nowBuffering = player.isBuffering
    report.buffering(nowBuffering, paused: player.isPaused, at: player.position)
    if player.isRetrying {
      waitingShown = true  // "Reconnecting… (try 3 of 14)" stays up until the source opens
    } else if connecting || nowBuffering {
      overlays.showMessage(connecting ? connectingText() : "Buffering…", keep: true)
      waitingShown = true
    } else if waitingShown && !loading {
      waitingShown = false
      overlays.hideMessage()
    }
  }

  /// What the window says while the entry takes long to open: a network source connects; a pipe waits for its
  /// writer, which is said once in the log too (a named pipe nothing writes to waited without a word).
  private func connectingText() -> String {
    if source.contains("://") { return "Connecting…" }
    guard MediaSource.isEmptyPipe(source) else { return "Opening…" }
    if pipeWaitTold != entrySerial {
      pipeWaitTold = entrySerial
      log("\(source): waiting for something to come through the pipe")
    }
    return "Waiting for the pipe…\nnothing has come through it yet"
  }

  func handle(_ event: Player.Event) {
    switch event {
    case .retry(let attempt, let of, let delay, let reason):
      let text = "Reconnecting… (try \(attempt) of \(of))\n\(reason)"
      overlays.showMessage(text, keep: true)
      waitingShown = true
      log("\(MediaSource.withoutSecrets(source)): \(reason); trying again in \(Int(delay)) s (try \(attempt) of \(of))")
      if let player { report.buffering(true, at: player.position) }
      report.retry(attempt: attempt, of: of, delay: delay, reason: reason)
    case .opened(let info, _):
      if !sizedToVideo, !options.fullscreen { size(to: info) }
      if info.video.isEmpty {
        if let art = player?.coverArt { showCover(art) } else { showSoundCard(info) }
      }
      if let named = info.displayTitle, named != mediaTitle {
        mediaTitle = named
        gtk_window_set_title(cast(raw(window)), windowTitle)
        mpris?.changed()
      }
      report.opened(paused: player?.isPaused ?? false, at: player?.startsAt ?? 0)
      if let player { applyRemembered(player) }
      if !subtitlesToAdd.isEmpty {
        defer { subtitlesToAdd = [] }
        addSubtitles(subtitlesToAdd)
      }
      let asked = playingLaunch && playlist.index == 0 ? [options.intro, options.credits].compactMap { $0 } : []
      if !asked.isEmpty {
        // The host hears a marker it sent that is left out, as it hears other warnings.
        markers = MarkerTimeline(asked, duration: player?.duration) { [unowned self] in
          self.log($0)
          self.report.warning($0)
        }
      }
      transport.mark(
        markers.map { timeline in timeline.markers.map { ($0, timeline.end(of: $0)) } } ?? [], chapters: info.chapters)
      transport.showAudio(tracks: info.audio.count)
      if let subtitles = player?.subtitles {
        transport.showSubtitles(tracks: subtitles.tracks.count, on: subtitles.current != nil)
        if subtitles.current != nil { log(subtitles.description) }
      }
    case .failed(let error):
      fail(error)
    case .notice(let message):
      log(message)
      if message.hasPrefix("audio: ") { audioText = String(message.dropFirst(7)) }
    case .warning(let message):
      log(message)
      report.warning(message)
      overlays.showMessage(message)
      if message.hasPrefix("no audio output") { audioText = "none (\(message))" }
    }
  }

  /// Shows the cover of a file of sound alone where the video would be (it is black), at its shape, under the
  /// subtitles and controls (the window took the cover's shape as a video's, `size(to:)`).
  func showCover(_ art: CoverArt) {
    hideCover()
    let bytes = art.rgba.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
    let texture = gdk_memory_texture_new(
      Int32(art.width), Int32(art.height), GDK_MEMORY_R8G8B8A8, bytes, gsize(art.width * 4))
    g_bytes_unref(bytes)
    guard let texture, let picture = gtk_picture_new_for_paintable(texture) else { return }
    g_object_unref(raw(texture))
    gtk_picture_set_content_fit(opaque(picture), GTK_CONTENT_FIT_CONTAIN)
    gtk_widget_set_can_target(picture, 0)  // clicks and drops go to the window as over a video
    gtk_overlay_add_overlay(opaque(pictureLayer), picture)
    gtk_widget_insert_after(picture, pictureLayer, video.picture)  // drawn over the view, under the subtitles
    cover = picture
    // Desktop media controls show it too (MPRIS's artUrl names a picture file): written off the main thread.
    let entry = entrySerial
    let path = Self.coverPath(entry)
    offMainThread(
      "orb-cover",
      {
        (try? art.rgba.withUnsafeBytes {
          try PNGWriter.write(rgba: $0, width: art.width, height: art.height, to: path)
        }) != nil
      },
      done: { [weak self] written in
        guard written else { return }
        guard let self, !self.closedDown, self.entrySerial == entry, self.cover != nil else {
          unlink(path)  // the entry or the window went while it was written
          return
        }
        self.coverFile = path
        self.mpris?.changed()
      })
  }

  /// A file of sound alone with no cover: what plays, named in the middle of the window (its title and artist, else
  /// the window's title), under a note, where the window was black.
  func showSoundCard(_ info: MediaInfo) {
    hideCover()
    let name = info.displayTitle ?? windowTitle
    guard let label = gtk_label_new(nil), let escaped = g_markup_escape_text(name, -1) else { return }
    gtk_label_set_markup(opaque(label), "<span size=\"300%\">♪</span>\n\(String(cString: escaped))")
    g_free(escaped)
    gtk_label_set_justify(opaque(label), GTK_JUSTIFY_CENTER)
    gtk_label_set_wrap(opaque(label), 1)
    gtk_label_set_max_width_chars(opaque(label), 40)
    gtk_widget_add_css_class(label, "orb-sound-card")
    gtk_widget_set_halign(label, GTK_ALIGN_CENTER)
    gtk_widget_set_valign(label, GTK_ALIGN_CENTER)
    gtk_widget_set_can_target(label, 0)  // clicks and drops go to the window as over a video
    gtk_overlay_add_overlay(opaque(pictureLayer), label)
    gtk_widget_insert_after(label, pictureLayer, video.picture)  // under the subtitles, as a cover is
    cover = label
  }

  /// Takes the cover away (the next entry of a playlist, the end), with its file.
  func hideCover() {
    removeCoverFile()
    guard let cover else { return }
    gtk_overlay_remove_overlay(opaque(pictureLayer), cover)
    self.cover = nil
  }

  func removeCoverFile() {
    if let coverFile { unlink(coverFile) }
    coverFile = nil
  }

  /// Where entry `entry`'s cover is written for MPRIS: the session's runtime folder (private to the user, emptied at
  /// log-out), else the temporary one.
  static func coverPath(_ entry: Int) -> String {
    let folder = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? NSTemporaryDirectory()
    return "\(folder)/orb-player-cover-\(getpid())-\(entry).png"
  }

  /// The window's default size in device pixels: what its content is about to be.
  private var defaultPixelSize: (Int, Int) {
    var width: Int32 = 0
    var height: Int32 = 0
    gtk_window_get_default_size(cast(raw(window)), &width, &height)
    let scale = Int(gtk_widget_get_scale_factor(window))
    return (Int(width) * scale, Int(height) * scale)
  }

  /// How `EarlyOpen` draws the first picture: at the size the window's video view will first have, as
  /// `defaultPixelSize` will say once the window exists (the size asked for, or the video's own, `size(to:)`), at the
  /// scale GDK_SCALE sets (the X11 default of 1 without it). Where that is not the size after all (a window manager
  /// that places the window otherwise, a screen scaled by its settings), the picture is drawn again at the right one.
  private var drawAhead: EarlyOpen.DrawAhead {
    let asked = options.geometry.map { (width: $0.width, height: $0.height) }
    let fullscreen = options.fullscreen
    let scale = ProcessInfo.processInfo.environment["GDK_SCALE"].flatMap { Int($0) }.map { max(1, $0) } ?? 1
    return EarlyOpen.DrawAhead(toneMapping: options.toneMapping, pixelOrder: memoryPixelOrder) { video in
      if fullscreen { return nil }
      let size = asked ?? Self.initialWindowSize(displayWidth: video.displayWidth, displayHeight: video.displayHeight)
      return (size.width * scale, size.height * scale)
    }
  }

  /// The byte order of pictures drawn into memory: cairo's where cairo draws the window.
  private var memoryPixelOrder: PixelOrder { WindowRenderer.isCairo ? .bgra : .rgba }

  /// Opens the window at the video's own size (see `initialWindowSize`), or a sound file's cover's; neither: as it is.
  func size(to info: MediaInfo) {
    guard
      let (width, height) = info.video.first.map({ ($0.displayWidth, $0.displayHeight) })
        ?? info.cover.map({ ($0.width, $0.height) })
    else { return }
    let (w, h) = Self.initialWindowSize(displayWidth: width, displayHeight: height)
    gtk_window_set_default_size(cast(raw(window)), Int32(w), Int32(h))
    sizedToVideo = true
  }

  /// The video's own size, shrunk to fit 1600x900, shape kept; grown to at least 480 wide, but never past 900 high: a
  /// tall video (a phone's recording, 585x1266) is pillarboxed there (it asked for 480x1039, taller than the
  /// screens of many laptops, the controls below their edge).
  nonisolated static func initialWindowSize(displayWidth: Int, displayHeight: Int) -> (width: Int, height: Int) {
    var w = Double(max(1, displayWidth))
    var h = Double(max(1, displayHeight))
    let shrink = min(1, 1600 / w, 900 / h)
    w *= shrink
    h *= shrink
    if w < 480 {
      h = min(h * 480 / w, max(h, 900))
      w = 480
    }
    return (Int(w.rounded()), Int(h.rounded()))
  }

  /// Shows the error over the video, tells the host, and closes after `--error-linger-ms` with status 1; in a
  /// playlist, the entry is skipped with its error event unless it was the last or the third failure in a row.
  func fail(_ error: MediaError) {
    guard !finished else { return }
    if playlist.count > 1, playlist.failed() {
      log("\(error); skipped")
      report.failed(error, player: player, final: false)
      overlays.showMessage("Skipped \(MediaSource.withoutSecrets(error.source)): \(error.reason)")
      playEntry()
      return
    }
    let line = "orb-player: \(error)"
    FileHandle.standardError.write(Data((line + "\n").utf8))
    report.failed(error, player: player, final: true)
    exitStatus = 1
    failed = true
    updateInhibit()
    overlays.hideMessage()
    overlays.showError("Cannot play \(MediaSource.withoutSecrets(error.source))\n\(error.reason)")
    video.detach()
    MainLoop.after(milliseconds: UInt32(options.errorLingerMs)) { [weak self] in
      self?.finish(reason: nil, status: 1)
    }
  }

  /// Ends playback: the `ended` event (unless the run ended in an error), then the window and the loop.
  /// `windowClosing`: called from the window's "close-request", after which GTK destroys the window itself.
  func finish(reason: String?, status: Int32, windowClosing: Bool = false) {
    guard !finished else { return }
    transport?.closeMenu()
    rememberPlace()
    finished = true
    updateInhibit()
    exitStatus = status
    if let reason, !failed {
      // Every way out but an error tells the host the last position, even before playback started.
      report.ended(reason: reason, player: player)
    }
    // The window goes first, and its renderer with the last frame it drew: while that frame's recording of the
    // picture on screen lived, cairo copied the picture (window-sized) when the view let go of it.
    guard windowClosing else {
      gtk_widget_unrealize(window)
      return closeDown()
    }
    // GTK destroys the window when "close-request" returns: the rest waits for that. Unrealized inside the request
    // (closed by the window manager), GTK 4.8 left the window's surface asking the freed window for its size at
    // the next configure event: a crash about one close in three on a loaded machine. The window (and the view in
    // it) is held until then, unrealized, as on every other way out.
    // Should GTK's loop end first (the window was the application's last hold), `run` closes down after it.
    g_object_ref(raw(window))
    MainLoop.after(milliseconds: 0) { [unowned self] in
      self.closeDown()
      g_object_unref(raw(self.window))
    }
  }

  /// The window running, for the display's loss, which comes through C with no context of its own.
  private static weak var current: PlayerWindow?

  /// The X server went away (or a client killed the connection, as xkill does): no window can be shown or closed any
  /// more, and GTK cannot go on. The host hears where playback was (`ended`, `terminated`), the place is remembered,
  /// standard error says why; then the process exits with status 1.
  func displayLost() {
    let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
    let at = player.map { "; stopped at \(StatsText.clock($0.position))" } ?? ""
    log("lost the connection to the display \(display)\(at)")
    removeCoverFile()
    if !finished {
      finished = true
      rememberPlace()
      if !failed { report.ended(reason: "terminated", player: player) }
    }
    report.flush()
  }

  /// Lets go of the pictures, MPRIS and the main loop, once the window is gone. Once.
  func closeDown() {
    guard !closedDown else { return }
    closedDown = true
    video.detach()
    removeCoverFile()  // the widgets may be gone by now (a window the window manager closed)
    mpris?.stop()
    g_application_quit(cast(raw(app)))
  }

  func installCSS() {
    let provider = gtk_css_provider_new()
    let css = """
      .orb-video-window { background: black; }
      .orb-video-window.orb-self-painted { background: none; }
      .orb-stats { color: white; background: rgba(0,0,0,0.7); padding: 10px 14px; margin: 12px; border-radius: 6px;
                   font-family: monospace; font-size: 10pt; }
      .orb-osd { color: white; background: rgba(0,0,0,0.6); padding: 8px 14px; margin: 16px; border-radius: 6px;
                 font-size: 14pt; }
      .orb-transport { background: rgba(0,0,0,0.6); color: white; padding: 6px 12px; margin: \(TransportBar.margin)px;
                       border-radius: 8px; }
      .orb-transport button { color: white; background: none; border: none; box-shadow: none; }
      .orb-track-menu > contents, .orb-track-menu > arrow { background: rgb(28,30,34); color: white;
                                                            border-color: rgba(255,255,255,0.2); }
      .orb-track-menu > contents { padding: 4px; border-radius: 8px; }
      .orb-transport .orb-track-menu button { padding: 6px 14px; border-radius: 5px; }
      .orb-transport .orb-track-menu button:hover { background: rgba(255,255,255,0.12); }
      .orb-transport .orb-track-menu button:checked { background: rgb(53,132,228); }
      .orb-transport .orb-track-menu button:disabled { color: rgba(255,255,255,0.4); }
      .orb-time { font-family: monospace; }
      .orb-sound-card { color: rgba(255,255,255,0.85); font-size: 20pt; }
      .orb-subtitle { color: white; font-weight: 600;
                      text-shadow: 2px 0 black, -2px 0 black, 0 2px black, 0 -2px black,
                                   1px 1px black, -1px -1px black, 1px -1px black, -1px 1px black,
                                   2px 1px black, -2px 1px black, 2px -1px black, -2px -1px black,
                                   1px 2px black, -1px 2px black, 1px -2px black, -1px -2px black; }
      .orb-skip { color: white; background: rgba(0,0,0,0.7); border: 2px solid rgba(255,255,255,0.85);
                  border-radius: 6px; padding: 8px 18px; font-size: 13pt; font-weight: bold; }
      .orb-welcome { color: white; }
      .orb-welcome-title { font-size: 26pt; font-weight: bold; }
      .orb-resume { color: white; background: rgba(0,0,0,0.7); border: 2px solid rgba(255,255,255,0.85);
                    border-radius: 6px; padding: 8px 18px; font-size: 13pt; }
      .orb-error { color: white; background: rgba(0,0,0,0.75); padding: 18px 24px; border-radius: 8px;
                   font-size: 16pt; }
      """
    gtk_css_provider_load_from_data(provider, css, -1)
    gtk_style_context_add_provider_for_display(
      gdk_display_get_default(), OpaquePointer(provider), guint(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
  }

  func log(_ message: String) {
    FileHandle.standardError.write(Data("orb-player: \(message)\n".utf8))
  }
}
