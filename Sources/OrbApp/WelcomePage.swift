import CGtk
import Foundation

/// What the window shows when it was started with nothing to play (from the app grid): the name, a line saying what
/// to do, and an Open button; files dropped on the window play as well.
/// Thread-safety: main actor (compiler-checked).
final class WelcomePage {
  private let page: UnsafeMutablePointer<GtkWidget>
  var onOpen: (() -> Void)?

  init(over overlay: UnsafeMutablePointer<GtkWidget>) {
    page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 14)
    gtk_widget_add_css_class(page, "orb-welcome")
    gtk_widget_set_halign(page, GTK_ALIGN_CENTER)
    gtk_widget_set_valign(page, GTK_ALIGN_CENTER)
    let title = gtk_label_new("Orb Player")!
    gtk_widget_add_css_class(title, "orb-welcome-title")
    let hint = gtk_label_new("Open a video, or drop one on this window.")!
    let open = gtk_button_new_with_label("Open…")!
    gtk_widget_add_css_class(open, "suggested-action")
    gtk_widget_set_halign(open, GTK_ALIGN_CENTER)
    gtk_widget_set_tooltip_text(open, "Choose a video file to play")
    for child in [title, hint, open] { gtk_box_append(cast(raw(page)), child) }
    gtk_overlay_add_overlay(opaque(overlay), page)
    Signals.plain(raw(open), "clicked") { [unowned self] in self.onOpen?() }
    gtk_widget_grab_focus(open)
  }

  func hide() { gtk_widget_set_visible(page, 0) }
}

/// The desktop's own file chooser (a portal's where there is one), for videos.
/// Thread-safety: main actor (compiler-checked).
enum FileChooser {
  /// Asks for one or more files; `done` gets their URIs (nothing when cancelled).
  static func open(over window: UnsafeMutablePointer<GtkWidget>, done: @escaping ([String]) -> Void) {
    let chooser = gtk_file_chooser_native_new(
      "Open a video", cast(raw(window)), GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel")!
    gtk_file_chooser_set_select_multiple(chooser, 1)
    let filter = gtk_file_filter_new()!
    gtk_file_filter_set_name(filter, "Videos")
    gtk_file_filter_add_mime_type(filter, "video/*")
    gtk_file_filter_add_mime_type(filter, "application/vnd.apple.mpegurl")
    gtk_file_chooser_add_filter(chooser, filter)
    g_object_unref(UnsafeMutableRawPointer(filter))
    Signals.response(raw(chooser)) { response in
      let uris =
        response == GTK_RESPONSE_ACCEPT.rawValue
        ? Signals.takeStrings(orb_chosen_uris(UnsafeMutableRawPointer(chooser))) : []
      g_object_unref(UnsafeMutableRawPointer(chooser))
      done(uris)
    }
    gtk_native_dialog_show(cast(raw(chooser)))
  }
}
