import CGtk
import Foundation
import OrbDecode
import OrbPlayer
import OrbRender

/// What keys and the controls ask for, carried out: the key map's commands, the controls kept current, the stats
/// overlay, the screenshot.
extension PlayerWindow {
  func key(_ keyval: guint, _ state: GdkModifierType) -> Bool {
    if let offer = resumeOffer, offer.isShown, keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter {
      offer.accept()
      return true
    }
    // Enter takes the skip button on screen, as its tooltip says (a focused control has taken Enter before the window
    // hears it).
    if keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter, let marker = skipButton.markerOnScreen {
      skip(marker)
      return true
    }
    // Tab reaches the controls even while they are hidden: it shows them with the first one focused; once they are
    // up, GTK moves the focus along them (and they stay up while one has it).
    if keyval == GDK_KEY_Tab || keyval == GDK_KEY_ISO_Left_Tab || keyval == GDK_KEY_KP_Tab, !transport.isVisible {
      showTransport()
      transport.focusFirst()
      return true
    }
    let shift = (state.rawValue & GDK_SHIFT_MASK.rawValue) != 0
    let control = (state.rawValue & GDK_CONTROL_MASK.rawValue) != 0
    guard let command = KeyCommand(keyval: keyval, shift: shift, control: control) else { return false }
    perform(command)
    return true
  }

  /// Carries out what a key asked for.
  func perform(_ command: KeyCommand) {
    video.wake()  // a paused view that rests shows what the key changed at once
    switch command {
    case .togglePause: togglePause()
    case .quitOrLeaveFullscreen where isFullscreen: gtk_window_unfullscreen(cast(raw(window)))
    case .quit, .quitOrLeaveFullscreen: finish(reason: "user-quit", status: exitStatus)
    case .toggleStats: toggleStats()
    case .toggleFullscreen: toggleFullscreen()
    case .nextFile: go(forward: true)
    case .previousFile: go(forward: false)
    case .showShortcuts: ShortcutsWindow.present(over: window)
    case .screenshot: takeScreenshot()
    case .toggleLoop:
      looping.toggle()
      overlays.showMessage(looping ? "Loop: on" : "Loop: off")
    case .cycleDeinterlace:
      let (mode, message) = KeyCommand.deinterlace(after: deinterlacing)
      deinterlacing = mode
      player?.setDeinterlace(mode)
      overlays.showMessage(message)
      log(message)
    case .nextAudioTrack, .frameStep, .slower, .faster, .normalSpeed, .toggleMute, .volume, .seek, .nextSubtitleTrack,
      .subtitleDelay, .audioDelay, .chapter:
      guard let player else { return }
      performOnPlayer(command, player)
    }
  }

  func performOnPlayer(_ command: KeyCommand, _ player: Player) {
    switch command {
    case .nextAudioTrack:
      let (count, current) = player.audioTracks
      guard count > 1, let current else {
        log(count > 1 ? "no sound to switch" : "only one audio track")
        return
      }
      chooseAudio(current % count + 1)
    case .slower, .faster, .normalSpeed:
      let next = command.speed(after: player.speed)
      player.setSpeed(next)
      overlays.showMessage(String(format: "Speed %g×", next))
    case .toggleMute:
      player.updateAudio { $0.isMuted.toggle() }
      overlays.showMessage(player.dsp.settings.isMuted ? "Muted" : "Sound on")
    case .volume(let step):
      player.updateAudio {
        $0.volumePercent = min(150, max(0, $0.volumePercent + step))
        $0.isMuted = false
      }
      overlays.showMessage("Volume \(Int(player.dsp.settings.volumePercent))%")
    case .seek(let seconds):
      player.seek(to: player.seekBase + seconds)
    case .frameStep(let forward):
      if !player.isPaused { togglePause() }
      let (shown, pending) = player.stepBase
      guard let frame = shown else { return }
      if let pending {
        // A step before the last one's picture came: a picture on from where that one goes.
        return player.seek(to: max(0, pending + (forward ? frame.duration : -frame.duration)))
      }
      // An exact seek shows the picture that starts at or before its target: the next one's start, or just
      // before this one's.
      player.seek(to: forward ? frame.time + frame.duration + 0.0005 : max(0, frame.time - 0.0005))
    case .nextSubtitleTrack:
      guard let subtitles = player.subtitles else { return }
      subtitles.cycle()
      subtitlesChosen(subtitles)
    case .subtitleDelay(let step):
      guard let subtitles = player.subtitles else { return }
      subtitles.delay = ((subtitles.delay + step) * 1000).rounded() / 1000
      overlays.showMessage(String(format: "Subtitle delay %+.0f ms", subtitles.delay * 1000))
    case .audioDelay(let step):
      // Before the media has opened the delay waits for it; a live stream cannot seek to place its sound anew.
      if player.info != nil && player.audioTracks.current == nil { return overlays.showMessage("No sound") }
      guard player.info == nil || player.duration != nil else {
        return overlays.showMessage("No audio delay for a live stream")
      }
      player.setAudioDelay(((player.audioDelay + step) * 1000).rounded() / 1000)
      overlays.showMessage(String(format: "Audio delay %+.0f ms", player.audioDelay * 1000))
      report.settings(viewerSettings(player))
    case .chapter(let forward):
      let chapters = player.info?.chapters ?? []
      guard !chapters.isEmpty else { return overlays.showMessage("No chapters") }
      // From where a seek under way goes (its picture not shown yet), else from the picture shown.
      // Read together, under one lock: a seek landing between two reads would pair its target with the old picture.
      let (shown, pending) = player.stepBase
      let picture = pending == nil ? shown?.duration ?? 0 : 0
      guard
        let index = ChapterStep.target(
          chapters, from: pending ?? player.position, forward: forward, picture: picture)
      else {
        return overlays.showMessage(forward ? "This is the last chapter" : "This is the first chapter")
      }
      player.seek(
        to: ChapterStep.landing(chapters[index].start, shown: shown.map { ($0.time, $0.duration) }))
      overlays.showMessage(ChapterStep.name(chapters, index))
    default:
      break
    }
  }

  /// Saves the picture as shown (with its subtitles, without the controls) and says where.
  func takeScreenshot() {
    // Sound with no cover: a black picture (or its name on one) is no screenshot.
    if let player, !player.hasVideo, player.state != .loading, player.coverArt == nil {
      overlays.showMessage("No picture to save")
      return log("no screenshot: nothing but sound plays")
    }
    let name = windowTitle
    switch Screenshot.save(pictureLayer, name: name, position: player?.position ?? 0) {
    case .success(let path):
      overlays.showMessage("Screenshot: \(path)")
      log("screenshot saved to \(path)")
      report.screenshot(path: path)
    case .failure(let error):
      overlays.showMessage("No screenshot: \(error)")
      log("screenshot failed: \(error)")
      report.warning("no screenshot: \(error)")  // as a saved one is told (`screenshot`)
    }
  }

  /// Shows or hides the stats overlay; while shown it is refreshed twice a second.
  func toggleStats() {
    overlays.toggleStats { [weak self] in
      guard let self, !self.finished, let player = self.player else { return nil }
      let frame = player.shownFrame.map {
        (width: $0.width, height: $0.height, pixelFormat: $0.pixelFormatName, color: $0.color, hdr: $0.hdr)
      }
      return StatsText(
        info: player.info, frame: frame, stats: player.stats,
        presentation: player.convertsOnCPU ? "swscale on the CPU into memory" : self.presentationText,
        device: player.deviceName, toneMapping: self.toneMappingText(player.shownFrame), audio: self.audioText,
        subtitles: player.subtitles.flatMap { s in
          s.tracks.isEmpty
            ? nil
            : (s.current.map { "\($0)/\(s.tracks.count) \(s.tracks[$0 - 1].displayName)" } ?? "off")
              + (s.delay != 0 ? String(format: ", delay %+.1f s", s.delay) : "")
        }, position: player.position, duration: player.duration, video: player.videoStream,
        deinterlace: player.deinterlace, fields: player.shownFrame?.fields
      ).lines.joined(separator: "\n")
    }
  }

  /// The tone-mapping line: only HDR sources are tone-mapped. The peak the curve maps from (measured, or the
  /// metadata's), the content's peak by its mastering display, and MaxCLL when the stream has it.
  func toneMappingText(_ frame: VideoFrame?) -> String? {
    guard let frame, frame.color.isHDR, let params = options.toneMapping.params(for: frame) else { return nil }
    let settings = options.toneMapping
    let peak = player?.curvePeak ?? params.contentPeak
    let from = settings.measuresPeak(params) ? "detected peak" : "peak"
    let cll = frame.hdr.maxCLL > 0 ? ", MaxCLL \(frame.hdr.maxCLL)" : ""
    return "\(settings.curve.rawValue), \(from) \(Int(peak.rounded())) nits (mastering \(Int(params.contentPeak)) nits"
      + "\(cll)), target \(Int(settings.targetPeak)) nits"
  }

  func togglePause() {
    guard let player else { return }
    video.wake()
    player.togglePause()
    report.paused(player.isPaused, at: player.position)
    updateInhibit()
    if transport.isVisible || player.isPaused { showTransport() }
  }

  /// Shows the controls (kept up while paused) and the pointer, and keeps them current while they are up.
  func showTransport() {
    guard player != nil, !finished else { return }
    gtk_widget_set_cursor_from_name(window, "default")
    let wasVisible = transport.isVisible
    transport.fit(width: Int(gtk_widget_get_width(window)))
    transport.reveal(keep: player?.isPaused ?? false)
    updateTransport()
    guard !wasVisible else { return }
    video.wake()  // the subtitles move up above the bar, paused or not
    MainLoop.every(milliseconds: 250) { [weak self] in
      guard let self, !self.finished, self.player != nil, self.transport.isVisible else { return false }
      self.updateTransport()
      return true
    }
  }

  func updateTransport() {
    guard let player else { return }
    let sound = player.dsp.settings
    transport.update(
      position: player.position, duration: player.duration, paused: player.isPaused, speed: player.speed,
      volume: sound.volumePercent, muted: sound.isMuted)
  }

  /// Plays audio track `track` (1-based) from where playback is, and says which.
  func chooseAudio(_ track: Int) {
    guard let player else { return }
    let (count, current) = player.audioTracks
    guard track >= 1, track <= count else { return }
    if track != current { player.switchAudioTrack(track) }
    let text = "Audio: \(track)/\(count) \(Self.audioTrackName(player.info?.audio[track - 1]))"
    overlays.showMessage(text)
    log(text)
  }

  /// Shows subtitle track `track` (1-based; nil: none), and says which.
  func chooseSubtitles(_ track: Int?) {
    guard let subtitles = player?.subtitles else { return }
    if track != subtitles.current { subtitles.select(track) }
    subtitlesChosen(subtitles)
  }

  func subtitlesChosen(_ subtitles: SubtitlePlayback) {
    transport.showSubtitles(tracks: subtitles.tracks.count, on: subtitles.current != nil)
    overlays.showMessage(subtitles.description)
    log(subtitles.description)
  }

  /// The CC menu: "Off", then each track, numbered as `j` steps through them; one that could not be read is shown
  /// but cannot be chosen.
  func subtitleEntries() -> [TrackEntry] {
    guard let subtitles = player?.subtitles, !subtitles.tracks.isEmpty else { return [] }
    let (current, unreadable) = (subtitles.current, subtitles.unreadable)
    return [TrackEntry(title: "Off", chosen: current == nil)]
      + subtitles.tracks.enumerated().map { index, track in
        TrackEntry(
          title: "\(index + 1). \(track.displayName)", chosen: current == index + 1,
          usable: !unreadable.contains(index + 1))
      }
  }

  /// The ♪ menu: each audio track, numbered as `#` steps through them.
  func audioEntries() -> [TrackEntry] {
    guard let player, let tracks = player.info?.audio, tracks.count > 1 else { return [] }
    let current = player.audioTracks.current
    return tracks.enumerated().map { index, track in
      TrackEntry(title: "\(index + 1). \(Self.audioTrackName(track))", chosen: current == index + 1)
    }
  }

  /// "French (AC-3 5.1)", "English (AAC stereo)", "Commentary (Opus stereo)".
  static func audioTrackName(_ track: AudioStreamInfo?) -> String {
    guard let track else { return "" }
    let name = track.language.map(SubtitleLanguage.displayName) ?? track.title ?? "Track"
    let codec =
      ["ac3": "AC-3", "eac3": "E-AC-3", "aac": "AAC", "opus": "Opus", "dts": "DTS", "mp3": "MP3"][
        track.codec] ?? track.codec.uppercased()
    return "\(name) (\(codec) \(track.channelLayout ?? "\(track.channels) channels"))"
  }

  /// What the viewer has chosen now, as the host hears it.
  func viewerSettings(_ player: Player) -> ViewerSettings {
    let audio = player.dsp.settings
    return ViewerSettings(
      volumePercent: Int(audio.volumePercent.rounded()), isMuted: audio.isMuted, speed: player.speed,
      audioTrack: player.audioTracks.current, subtitleTrack: player.subtitles?.current, isFullscreen: isFullscreen,
      audioDelayMs: Int((player.audioDelay * 1000).rounded()))
  }

  var isFullscreen: Bool { gtk_window_is_fullscreen(cast(raw(window))) != 0 }

  func toggleFullscreen() {
    if isFullscreen { gtk_window_unfullscreen(cast(raw(window))) } else { gtk_window_fullscreen(cast(raw(window))) }
  }
}
