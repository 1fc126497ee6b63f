import CGtk
import Foundation
import OrbPlayer

/// The controls a mouse user expects over the video: play/pause, the position and length, a seek slider, the
/// subtitle track (CC) and fullscreen. They show when the pointer moves (or while paused) and fade out after a few still seconds.
/// Thread-safety: main thread only.
final class TransportBar {
  let widget: UnsafeMutablePointer<GtkWidget>
  private let playButton: UnsafeMutablePointer<GtkWidget>
  private let timeLabel: UnsafeMutablePointer<GtkWidget>
  private let slider: UnsafeMutablePointer<GtkWidget>
  private let subtitlesButton: UnsafeMutablePointer<GtkWidget>
  private let fullscreenButton: UnsafeMutablePointer<GtkWidget>
  private var hideSerial = 0
  /// Seconds of stillness after which the bar hides while playing.
  static let hideAfterMs: UInt32 = 2500

  var onPlayPause: (() -> Void)?
  var onSeek: ((Double) -> Void)?
  var onFullscreen: (() -> Void)?
  var onSubtitles: (() -> Void)?

  init() {
    widget = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)
    gtk_widget_add_css_class(widget, "orb-transport")
    gtk_widget_set_valign(widget, GTK_ALIGN_END)
    gtk_widget_set_hexpand(widget, 1)
    playButton = gtk_button_new_from_icon_name("media-playback-pause-symbolic")
    gtk_widget_set_tooltip_text(playButton, "Play / pause (Space)")
    timeLabel = gtk_label_new("0:00 / 0:00")
    gtk_widget_add_css_class(timeLabel, "orb-time")
    slider = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 1, 1)
    gtk_scale_set_draw_value(cast(raw(slider)), 0)
    gtk_widget_set_hexpand(slider, 1)
    subtitlesButton = gtk_button_new_with_label("CC")
    gtk_widget_set_tooltip_text(subtitlesButton, "Subtitles: next track or off (j)")
    gtk_widget_set_visible(subtitlesButton, 0)  // until the media has subtitles
    fullscreenButton = gtk_button_new_from_icon_name("view-fullscreen-symbolic")
    gtk_widget_set_tooltip_text(fullscreenButton, "Fullscreen (f)")
    for child in [playButton, timeLabel, slider, subtitlesButton, fullscreenButton] {
      gtk_box_append(cast(raw(widget)), child)
    }
    gtk_widget_set_visible(widget, 0)
    Signals.plain(raw(playButton), "clicked") { [unowned self] in self.onPlayPause?() }
    Signals.plain(raw(fullscreenButton), "clicked") { [unowned self] in self.onFullscreen?() }
    Signals.plain(raw(subtitlesButton), "clicked") { [unowned self] in self.onSubtitles?() }
    Signals.rangeChange(raw(slider)) { [unowned self] value in
      self.onSeek?(value)
      return false
    }
  }

  /// Shows the bar; it hides itself after `hideAfterMs` unless `keep` (paused).
  func reveal(keep: Bool) {
    gtk_widget_set_visible(widget, 1)
    hideSerial += 1
    guard !keep else { return }
    let serial = hideSerial
    MainLoop.after(milliseconds: Self.hideAfterMs) { [weak self] in
      guard let self, self.hideSerial == serial else { return }
      gtk_widget_set_visible(self.widget, 0)
    }
  }

  var isVisible: Bool { gtk_widget_get_visible(widget) != 0 }

  /// The bar's height in logical pixels while it is shown, else 0.
  var shownHeight: Int { isVisible ? Int(gtk_widget_get_height(widget)) : 0 }

  /// Shows the CC button when there are subtitle tracks to cycle through; `on` marks one as shown.
  func showSubtitles(tracks: Int, on: Bool) {
    gtk_widget_set_visible(subtitlesButton, tracks > 0 ? 1 : 0)
    if on {
      gtk_widget_remove_css_class(subtitlesButton, "dim-label")
    } else {
      gtk_widget_add_css_class(subtitlesButton, "dim-label")
    }
  }

  /// Brings the controls up to date with the player (called a few times a second while visible).
  func update(position: Double, duration: Double?, paused: Bool) {
    gtk_button_set_icon_name(
      cast(raw(playButton)), paused ? "media-playback-start-symbolic" : "media-playback-pause-symbolic")
    let length = duration ?? 0
    gtk_label_set_text(opaque(timeLabel), "\(StatsText.clock(position)) / \(duration.map(StatsText.clock) ?? "–")")
    gtk_widget_set_sensitive(slider, length > 0 ? 1 : 0)
    if length > 0 {
      let range: UnsafeMutablePointer<GtkRange> = cast(raw(slider))
      gtk_range_set_range(range, 0, length)
      gtk_range_set_value(range, min(max(0, position), length))
    }
  }
}
