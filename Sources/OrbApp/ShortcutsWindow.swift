import CGtk
import Foundation

/// `?`: GTK's shortcuts window listing every key the player answers to (the `KeyCommand` map), grouped as a person
/// looks for them.
/// Thread-safety: main actor (compiler-checked).
enum ShortcutsWindow {
  /// Groups of (what it does, GTK accelerators) as the window lists them.
  static let groups: [(title: String, keys: [(String, String)])] = [
    (
      "Playback",
      [
        ("Pause or play", "space k p"), ("Seek 5 s back or forward", "Left Right"),
        ("Seek 1 s back or forward", "<Shift>Left <Shift>Right"), ("Seek 60 s back or forward", "Down Up"),
        ("One frame forward or back (pauses)", "period comma"), ("Slower, faster", "bracketleft bracketright"),
        ("Normal speed", "BackSpace"), ("Next chapter, this one's start or the one before", "Page_Down Page_Up"),
        ("Next, previous file", "greater less"), ("Loop the file, or not", "<Shift>l"),
      ]
    ),
    (
      "Sound and subtitles",
      [
        ("Mute", "m"), ("Volume down, up", "9 0"), ("Next audio track", "numbersign"),
        ("Next subtitle track, then off", "j"), ("Subtitles 100 ms earlier, later", "z x"),
        ("Sound 100 ms earlier, later", "<Control>minus <Control>plus"),
      ]
    ),
    (
      "Window",
      [
        ("Fullscreen", "f"), ("Leave fullscreen, else quit", "Escape"), ("Quit", "q"), ("Stats overlay", "i"),
        ("Screenshot to Pictures", "s"), ("Deinterlace: marked pictures, all, none", "d"), ("This list", "question"),
      ]
    ),
  ]

  /// Its title bar's words (it had the program's name).
  static let title = "Keyboard shortcuts"

  /// Opens the window over `parent`.
  static func present(over parent: UnsafeMutablePointer<GtkWidget>) {
    func escape(_ s: String) -> String {
      s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;")
    }
    var xml = """
      <interface><object class="GtkShortcutsWindow" id="shortcuts"><property name="modal">1</property>
      <child><object class="GtkShortcutsSection"><property name="section-name">keys</property>
      """
    for group in groups {
      xml += "<child><object class=\"GtkShortcutsGroup\"><property name=\"title\">\(escape(group.title))</property>"
      for (title, accelerator) in group.keys {
        xml += """
          <child><object class="GtkShortcutsShortcut"><property name="title">\(escape(title))</property>\
          <property name="accelerator">\(escape(accelerator))</property></object></child>
          """
      }
      xml += "</object></child>"
    }
    xml += "</object></child></object></interface>"
    let builder = gtk_builder_new_from_string(xml, -1)
    defer { g_object_unref(UnsafeMutableRawPointer(builder)) }
    guard let window = gtk_builder_get_object(builder, "shortcuts") else { return }
    let widget: UnsafeMutablePointer<GtkWidget> = cast(UnsafeMutableRawPointer(window))
    gtk_window_set_transient_for(cast(raw(widget)), cast(raw(parent)))
    gtk_window_set_title(cast(raw(widget)), title)
    // `?` again (or q) closes it, before its search box takes the key as text; Escape closes it as GTK's own does.
    let keys = gtk_event_controller_key_new()!
    gtk_event_controller_set_propagation_phase(keys, GTK_PHASE_CAPTURE)
    Signals.keyPressed(raw(keys)) { keyval, _ in
      guard keyval == GDK_KEY_question || keyval == GDK_KEY_q || keyval == GDK_KEY_Q else { return false }
      gtk_window_close(cast(raw(widget)))
      return true
    }
    gtk_widget_add_controller(widget, keys)
    gtk_window_present(cast(raw(widget)))
  }
}
