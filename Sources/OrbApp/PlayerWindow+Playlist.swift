import CGtk
import Foundation
import OrbDecode
import OrbPlayer
import OrbRender

/// The window's playlist: moving between entries (each one's engine stops before the next starts), files dropped
/// or opened, and the welcome page when there is nothing to play.
extension PlayerWindow {
  /// Plays the playlist's current entry: the one playing stops (its render thread lets go of the GPU, which the next
  /// one's needs to itself), then the next starts in the same window.
  func playEntry() {
    guard let next = playlist.current, !finished else { return }
    hostResumeSpent = true
    welcome?.hide()
    rememberPlace()
    skippedToTheEnd = false
    resumeOffer?.dismiss()
    let old = player
    // The viewer's volume, mute, speed and sound settings go on to the next entry, as in mpv, VLC and Celluloid (the
    // next file was loud again after a mute).
    if let old { carried = (old.speed, old.dsp.settings, old.audioDelay) }
    stopping = old ?? stopping
    player = nil
    entrySerial += 1
    video.detach()
    subtitleView.clear()
    skipButton.show(nil)
    hideCover()
    markers = nil
    source = next
    mediaTitle = nil
    gtk_window_set_title(cast(raw(window)), windowTitle)
    mpris?.changed()
    let start = { [weak self] in
      guard let self, !self.finished else { return }
      self.startPlayback()
    }
    guard let old else { return start() }
    MainLoop.every(milliseconds: 20) { [weak self] in
      guard old.waitUntilStopped(timeout: 0) else { return true }
      if self?.stopping === old { self?.stopping = nil }
      start()
      return false
    }
  }

  /// Moves through the playlist (`>`/`<`, MPRIS Next/Previous).
  func go(forward: Bool) {
    guard forward ? playlist.next() : playlist.previous() else {
      overlays.showMessage(forward ? "This is the last file" : "This is the first file")
      return
    }
    playEntry()
    // Which one, and where it stands in the list (the window only changed).
    overlays.showMessage("\((playlist.index ?? 0) + 1)/\(playlist.count): \(windowTitle)")
  }

  /// Files or URLs dropped on the window, or chosen with Open: they play from the first, instead of what played.
  /// Subtitle files alone, while a video plays, are added to it instead and the last one shown (as mpv and VLC do):
  /// they were played as media, and failed. Subtitle files dropped with videos (a film and its subtitles chosen
  /// together in a file manager) are added to the first video, not played as entries of their own.
  func play(_ entries: [String]) {
    guard !entries.isEmpty else { return }
    let paths = entries.map(MediaSource.filePath)
    let isSubtitles = { (path: String) in MediaSource.isLocal(path) && SubtitleChoice.isSubtitleFile(path) }
    if paths.allSatisfy(isSubtitles), let player {
      guard player.state != .loading else {
        // Still opening: added once it has (`.opened`), instead of replacing it.
        subtitlesToAdd += paths
        return
      }
      return addSubtitles(paths)
    }
    let media = zip(entries, paths).filter { !isSubtitles($0.1) }.map(\.0)
    subtitlesWithNext = media.isEmpty ? [] : paths.filter(isSubtitles)
    playingLaunch = false
    playlist.replace(with: media.isEmpty ? entries : media)
    playEntry()
  }

  func installDrop() {
    guard let target = orb_file_drop_target(window) else { return }
    Signals.dropFiles(target) { [unowned self] uris in self.play(uris) }
  }

  /// Subtitle files dropped on the playing video: added as tracks, the last one shown (read again if it showed).
  func addSubtitles(_ paths: [String]) {
    guard let player, let subtitles = player.subtitles, player.hasVideo else {
      return overlays.showMessage("No video to show subtitles over")
    }
    guard let added = paths.compactMap({ subtitles.add(file: $0) }).last else {
      return overlays.showMessage("Cannot read \((paths.last.map { ($0 as NSString).lastPathComponent }) ?? "")")
    }
    subtitles.select(added)  // even when it is the one shown: it is read again, as it may have changed
    subtitlesChosen(subtitles)
  }

  /// No file given (started from the app grid): a page with an Open button, and drops welcome.
  func showWelcome() {
    let page = WelcomePage(over: overlay)
    page.onOpen = { [unowned self] in
      FileChooser.open(over: self.window) { [weak self] uris in self?.play(uris) }
    }
    welcome = page
    present()
  }
}
