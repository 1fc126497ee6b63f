import CGtk
import Foundation
import OrbPlayer

/// "Resume from 12:34" at the bottom left for a few seconds when a person opens a file they left midway; it has the
/// keyboard focus, so Enter takes it. Gone after `shownSeconds`, or once used.
/// Thread-safety: main thread only.
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
    gtk_overlay_add_overlay(opaque(overlay), button)
    gtk_widget_grab_focus(button)
    Signals.plain(raw(button), "clicked") { [unowned self] in
      self.onAccept?()
      self.dismiss()
    }
    MainLoop.after(milliseconds: Self.shownSeconds * 1000) { [weak self] in self?.dismiss() }
  }

  func dismiss() {
    guard !gone else { return }
    gone = true
    gtk_overlay_remove_overlay(opaque(overlay), button)
  }
}
