import CGtk
import Foundation
import OrbPlayer

/// "Resume from 12:34" at the bottom left for a few seconds when a person opens a file they left midway; a click or
/// Enter (the window passes it on) takes it, Space still pauses. Gone after `shownSeconds`, or once used.
/// Thread-safety: main actor (compiler-checked).
final class ResumeOffer {
  private let button: UnsafeMutablePointer<GtkWidget>
  private let overlay: UnsafeMutablePointer<GtkWidget>
  private var gone = false
  var onAccept: (() -> Void)?

  static let shownSeconds: UInt32 = 8

  init(over overlay: UnsafeMutablePointer<GtkWidget>, at position: Double) {
    self.overlay = overlay
    button = gtk_button_new_with_label("Resume from \(StatsText.clock(position))")
    gtk_widget_add_css_class(button, "orb-resume")
    gtk_widget_set_halign(button, GTK_ALIGN_START)
    gtk_widget_set_valign(button, GTK_ALIGN_END)
    gtk_widget_set_margin_start(button, 24)
    gtk_widget_set_margin_bottom(button, 130)
    gtk_widget_set_tooltip_text(button, "Go back to where you left off (Enter)")
    gtk_widget_set_focus_on_click(button, 0)
    gtk_overlay_add_overlay(opaque(overlay), button)
    Signals.plain(raw(button), "clicked") { [unowned self] in self.accept() }
    MainLoop.after(milliseconds: Self.shownSeconds * 1000) { [weak self] in self?.dismiss() }
  }

  /// Whether it is on screen.
  var isShown: Bool { !gone }

  /// Goes back to the remembered place.
  func accept() {
    guard !gone else { return }
    onAccept?()
    dismiss()
  }

  func dismiss() {
    guard !gone else { return }
    gone = true
    gtk_overlay_remove_overlay(opaque(overlay), button)
  }
}
