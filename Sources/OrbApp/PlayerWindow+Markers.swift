import CGtk
import Foundation
import OrbDecode
import OrbPlayer
import OrbRender

/// The host's skip-intro and skip-credits markers as the play head moves through them, and what skipping does.
extension PlayerWindow {
  /// Shows and hides the skip button as the play head enters and leaves a marker's window (by playing or seeking),
  /// telling the host each time.
  func followMarkers(_ player: Player) {
    guard var timeline = markers, player.state != .loading else { return }
    let position = player.position
    let (left, entered) = timeline.update(position: position)
    markers = timeline
    if let left { report.marker(left, shown: false, end: timeline.end(of: left), at: position) }
    if let entered { report.marker(entered, shown: true, end: timeline.end(of: entered), at: position) }
    if left != nil || entered != nil { skipButton.show(entered) }
    skipButton.layout(
      controlsShown: transport.isVisible, barHeight: transport.naturalHeight, waiting: resumeOffer?.isShown ?? false)
  }

  /// The viewer skipped `marker`: to its end, or for credits that run to the end, the end of playback (`ended`
  /// with reason `credits`, so the host can go on to the next episode); an intro that runs to the end ends the entry
  /// as playing to its end does.
  func skip(_ marker: Marker) {
    guard let player, let timeline = markers else { return }
    let from = player.position
    switch timeline.skip(marker) {
    case .seek(let to):
      report.skip(marker.kind, from: from, to: to)
      player.seek(to: to)
    case .end:
      report.skip(marker.kind, from: from, to: player.duration ?? from)
      // Watched to the end, as far as the place remembered goes: not a place inside the intro or the credits.
      skippedToTheEnd = true
      if marker.kind == .credits { finish(reason: "credits", status: 0) } else { video.onEnded?() }
    }
  }
}
