import CGtk
import Foundation
import OrbDecode
import OrbPlayer
import OrbRender

/// Where a person left off their own files: where an entry starts, what is remembered when it is left, and the offer
/// to go back there.
extension PlayerWindow {
  /// Where the entry starts: the host's resume point for the launch's first entry, else where the person left off
  /// the file (`--resume auto`; `ask` offers it once the video plays), else the beginning.
  func startPosition() -> Double {
    let hostGave = hostResumeSpent ? nil : options.resumeMs  // (the launch's first opening: `playEntry` spends it)
    remembered = hostGave != nil || options.resume == .no ? nil : memory.entry(for: source)
    if let hostGave { return Double(hostGave) / 1000 }
    return options.resume == .auto ? remembered?.position ?? 0 : 0
  }

  /// Remembers where the entry playing was left (or forgets it, played to its end or hardly at all).
  func rememberPlace() {
    guard options.resume != .no, let player, player.state != .loading, player.state != .error else { return }
    let audio = player.audioTracks.current
    // A file added while it played is not there next time: its number is not kept (it would turn the default off).
    let subtitles = player.subtitles.flatMap { s in (s.current ?? 0) <= s.listedAtStart ? s.current ?? 0 : nil }
    let position = skippedToTheEnd ? player.duration ?? player.position : player.position
    let problem = memory.left(
      source, at: .init(position: position, audioTrack: audio, subtitleTrack: subtitles), duration: player.duration)
    // Said once: the place is lost, and the person would not know why the file no longer offers it.
    if let problem, !memoryProblemTold {
      memoryProblemTold = true
      log("cannot remember where this was left: \(problem)")
      report.warning("cannot remember where this was left: \(problem)")
    }
  }

  /// The remembered place's tracks, once the media is open; with `ask`, the offer to go back there.
  func applyRemembered(_ player: Player) {
    guard let place = remembered else { return }
    if options.resume == .auto { restoreTracks(place, player) }
    guard options.resume == .ask else { return }
    let offer = ResumeOffer(over: overlay, at: place.position)
    offer.onAccept = { [unowned self] in
      guard let player = self.player else { return }
      player.seek(to: place.position)
      self.restoreTracks(place, player)
      self.log("resumed at \(StatsText.clock(place.position))")
    }
    resumeOffer = offer
  }

  /// The tracks chosen when the place was left, except where this launch's command line chose its own (`--aid`,
  /// `--sid`, `--sub-file`): a subtitle file given now was turned off by a remembered "none". The config file's
  /// choices are defaults, which a file's remembered tracks win over.
  func restoreTracks(_ place: ResumeMemory.Entry, _ player: Player) {
    if !options.tracksChosen.audio, let audio = place.audioTrack, audio != player.audioTracks.current,
      audio <= player.audioTracks.count
    {
      player.switchAudioTrack(audio)
    }
    if !options.tracksChosen.subtitles, let subtitles = place.subtitleTrack, let list = player.subtitles,
      subtitles != (list.current ?? 0)
    {
      list.select(subtitles == 0 ? nil : subtitles)
    }
  }
}
