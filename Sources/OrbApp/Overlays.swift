import CGtk
import Foundation

/// The text over the video: a short message (speed, volume, "Buffering…"), the stats overlay, the error.
/// Thread-safety: main actor (compiler-checked).
final class Overlays {
  private let overlay: UnsafeMutablePointer<GtkWidget>
  private var osdLabel: UnsafeMutablePointer<GtkWidget>?
  private var osdSerial = 0
  private var statsLabel: UnsafeMutablePointer<GtkWidget>?
  private var errorLabel: UnsafeMutablePointer<GtkWidget>?

  init(over overlay: UnsafeMutablePointer<GtkWidget>) { self.overlay = overlay }

  /// A short message at the top right, gone after a second and a half unless `keep`.
  func showMessage(_ text: String, keep: Bool = false) {
    let label = osdLabel ?? addLabel("orb-osd", valign: GTK_ALIGN_START, halign: GTK_ALIGN_END)
    if osdLabel == nil {
      // A long message (an error's reason) wraps inside a small window: its ends were cut off at both edges.
      gtk_label_set_wrap(opaque(label), 1)
      gtk_label_set_wrap_mode(opaque(label), PANGO_WRAP_WORD_CHAR)
      gtk_label_set_max_width_chars(opaque(label), 60)
    }
    osdLabel = label
    gtk_label_set_text(opaque(label), text)
    gtk_widget_set_visible(label, 1)
    osdSerial += 1
    guard !keep else { return }
    let serial = osdSerial
    MainLoop.after(milliseconds: 1500) { [weak self] in
      guard let self, self.osdSerial == serial, let label = self.osdLabel else { return }
      gtk_widget_set_visible(label, 0)
    }
  }

  func hideMessage() {
    osdSerial += 1
    if let label = osdLabel { gtk_widget_set_visible(label, 0) }
  }

  var statsShown: Bool { statsLabel != nil }

  /// Shows the stats overlay (refreshed with `text` twice a second while shown), or hides it.
  func toggleStats(text: @escaping () -> String?) {
    if let label = statsLabel {
      gtk_overlay_remove_overlay(opaque(overlay), label)
      statsLabel = nil
      return
    }
    let label = addLabel("orb-stats", valign: GTK_ALIGN_START, halign: GTK_ALIGN_START)
    gtk_label_set_xalign(opaque(label), 0)
    // In a window narrower than a line (a 720x576 video, a long file name) each line ends in "…" at its edge instead
    // of being cut off there.
    gtk_label_set_ellipsize(opaque(label), PANGO_ELLIPSIZE_END)
    statsLabel = label
    // Messages ("Muted", "Buffering…") stay over it: an overlay added later is drawn above those before it.
    if let osd = osdLabel {
      g_object_ref(UnsafeMutableRawPointer(osd))
      gtk_overlay_remove_overlay(opaque(overlay), osd)
      gtk_overlay_add_overlay(opaque(overlay), osd)
      g_object_unref(UnsafeMutableRawPointer(osd))
    }
    let refresh = { [weak self] () -> Bool in
      guard let self, let label = self.statsLabel, let lines = text() else { return false }
      gtk_label_set_text(opaque(label), lines)
      return true
    }
    _ = refresh()
    MainLoop.every(milliseconds: 500) { refresh() }
  }

  /// The error, centred, until the window closes.
  func showError(_ text: String) {
    let label =
      errorLabel
      ?? {
        let made = addLabel("orb-error", valign: GTK_ALIGN_CENTER, halign: GTK_ALIGN_CENTER)
        gtk_label_set_wrap(opaque(made), 1)
        return made
      }()
    errorLabel = label
    gtk_label_set_text(opaque(label), text)
  }

  private func addLabel(_ cssClass: String, valign: GtkAlign, halign: GtkAlign) -> UnsafeMutablePointer<GtkWidget> {
    let label = gtk_label_new(nil)!
    gtk_widget_add_css_class(label, cssClass)
    gtk_widget_set_valign(label, valign)
    gtk_widget_set_halign(label, halign)
    gtk_overlay_add_overlay(opaque(overlay), label)
    return label
  }
}
