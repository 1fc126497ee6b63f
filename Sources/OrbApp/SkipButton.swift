import CGtk
import Foundation
import OrbPlayer

/// "Skip Intro" / "Skip Credits" at the bottom right of the picture, above the controls: shown while the play head is
/// in a marker's window, on its own for the first `aloneSeconds` of it (a viewer need not move the pointer), then
/// only with the controls. Enter skips while it is on screen (the window's key handler), as its tooltip says;
/// focusable, so Tab reaches it too.
/// Thread-safety: main actor (compiler-checked).
final class SkipButton {
  private let button: UnsafeMutablePointer<GtkWidget>
  /// The marker shown, and when it came up.
  private var shown: (marker: Marker, since: Date)?
  var onSkip: ((Marker) -> Void)?

  /// Seconds the button shows without the controls after the window is entered.
  static let aloneSeconds = 8.0

  init(over overlay: UnsafeMutablePointer<GtkWidget>) {
    button = gtk_button_new_with_label("Skip Intro")
    gtk_widget_add_css_class(button, "orb-skip")
    // A click leaves the keys where they were (Space pauses, not clicks it again), as the controls do.
    gtk_widget_set_focus_on_click(button, 0)
    gtk_widget_set_halign(button, GTK_ALIGN_END)
    gtk_widget_set_valign(button, GTK_ALIGN_END)
    gtk_widget_set_visible(button, 0)
    gtk_overlay_add_overlay(opaque(overlay), button)
    Signals.plain(raw(button), "clicked") { [unowned self] in
      if let marker = self.shown?.marker { self.onSkip?(marker) }
    }
  }

  /// The play head entered `marker`'s window (nil: it is in none).
  func show(_ marker: Marker?) {
    guard let marker else {
      shown = nil
      gtk_widget_set_visible(button, 0)
      return
    }
    shown = (marker, Date())
    let text = marker.kind == .intro ? "Skip Intro" : "Skip Credits"
    gtk_button_set_label(cast(raw(button)), text)
    gtk_widget_set_tooltip_text(button, "\(text) (Enter)")
  }

  /// Whether it is on screen now.
  var isVisible: Bool { gtk_widget_get_visible(button) != 0 }

  /// The marker whose button is on screen now (what Enter skips), nil while none is.
  var markerOnScreen: Marker? { isVisible ? shown?.marker : nil }

  /// On screen alone only at first, then with the controls (`controlsShown`); always just above where the controls
  /// are (`barHeight`, the room they take when shown, their margins included), so it never moves under a pointer
  /// going for it. While another offer that Enter takes is up (`waiting`: the resume offer), it stays hidden, and
  /// its time alone starts once that offer has gone: one thing on screen at a time answers Enter.
  func layout(controlsShown: Bool, barHeight: Int, waiting: Bool) {
    guard let shown else { return }
    if waiting { self.shown?.since = Date() }
    let visible = !waiting && (controlsShown || Date().timeIntervalSince(shown.since) < Self.aloneSeconds)
    if visible != isVisible { gtk_widget_set_visible(button, visible ? 1 : 0) }
    gtk_widget_set_margin_bottom(button, Int32(barHeight + 8))
    gtk_widget_set_margin_end(button, 24)
  }
}
