import CGtk
import Foundation
import OrbDecode
import OrbPlayer

/// The controls over the video, in two rows: the position, a seek slider across the whole width and the length; then
/// play/pause, the speed (cycled), the audio track (♪, with more than one) and the subtitle track (CC, with any),
/// each a menu of the tracks with the one playing marked, and at the right mute and a volume slider, fullscreen, and
/// close. Each has a tooltip naming its key and an accessible name. They show when the pointer
/// moves or the video is clicked (and stay while paused) and hide after a few still seconds.
/// Thread-safety: main actor (compiler-checked).
final class TransportBar {
  let widget: UnsafeMutablePointer<GtkWidget>
  private let playButton: UnsafeMutablePointer<GtkWidget>
  private let positionLabel: UnsafeMutablePointer<GtkWidget>
  private let slider: UnsafeMutablePointer<GtkWidget>
  private let durationLabel: UnsafeMutablePointer<GtkWidget>
  private let speedButton: UnsafeMutablePointer<GtkWidget>
  private let audioButton: UnsafeMutablePointer<GtkWidget>
  private let subtitlesButton: UnsafeMutablePointer<GtkWidget>
  private let muteButton: UnsafeMutablePointer<GtkWidget>
  private let volumeSlider: UnsafeMutablePointer<GtkWidget>
  private let fullscreenButton: UnsafeMutablePointer<GtkWidget>
  private let closeButton: UnsafeMutablePointer<GtkWidget>
  private var hideSerial = 0
  /// Milliseconds of stillness after which the bar hides while playing.
  static let hideAfterMs: UInt32 = 3000
  /// The bar's margin (CSS pixels) on every side, which `gtk_widget_measure` leaves out.
  static let margin = 12
  /// The speeds the speed button steps through.
  static let speeds = [0.5, 0.75, 1, 1.25, 1.5, 2]

  var onPlayPause: (() -> Void)?
  /// A seek to a time: `exact`, or a quick one to the key frame before it (while the slider is dragged).
  var onSeek: ((_ seconds: Double, _ exact: Bool) -> Void)?
  var onFullscreen: (() -> Void)?
  /// The CC menu's entries ("Off", then each track), read as it opens; the index of the entry chosen.
  var subtitleEntries: (() -> [TrackEntry])?
  var onSubtitleChosen: ((Int) -> Void)?
  /// The ♪ menu's entries (each track); the index of the entry chosen.
  var audioEntries: (() -> [TrackEntry])?
  var onAudioChosen: ((Int) -> Void)?
  /// The speed asked for (the next in `speeds`).
  var onSpeed: ((Double) -> Void)?
  var onMute: (() -> Void)?
  /// Volume in percent, 0 to 150.
  var onVolume: ((Double) -> Void)?
  var onClose: (() -> Void)?
  /// The bar hid by itself (the pointer can hide too).
  var onHidden: (() -> Void)?
  private var speed = 1.0
  /// Whether the track buttons have tracks to show (`showTracks`).
  private var audioWanted = false
  private var subtitlesWanted = false
  /// The window width the bar was last fitted to (`fit`).
  private var fittedWidth: Int?
  /// The length shown on the slider, seconds (0: unknown).
  private var length = 0.0
  /// The track menu open now (a popover on its button).
  private var menu: UnsafeMutablePointer<GtkWidget>?

  init() {
    widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2)
    gtk_widget_add_css_class(widget, "orb-transport")
    gtk_widget_set_valign(widget, GTK_ALIGN_END)
    gtk_widget_set_hexpand(widget, 1)
    func button(icon: String? = nil, label: String? = nil, tip: String, name: String) -> UnsafeMutablePointer<GtkWidget>
    {
      let made: UnsafeMutablePointer<GtkWidget> =
        icon.map { gtk_button_new_from_icon_name($0) } ?? gtk_button_new_with_label(label ?? "")
      gtk_widget_set_tooltip_text(made, tip)
      orb_set_accessible_label(made, name)
      // A click leaves the keyboard where it was (Space keeps pausing); Tab still reaches the button.
      gtk_widget_set_focus_on_click(made, 0)
      return made
    }
    playButton = button(icon: "media-playback-pause-symbolic", tip: "Play / pause (Space)", name: "Play or pause")
    positionLabel = gtk_label_new("0:00:00")
    durationLabel = gtk_label_new("–")
    for label in [positionLabel, durationLabel] { gtk_widget_add_css_class(label, "orb-time") }
    slider = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 1, 1)
    gtk_scale_set_draw_value(cast(raw(slider)), 0)
    gtk_widget_set_hexpand(slider, 1)
    gtk_widget_set_size_request(slider, 60, -1)  // room to drag in a small window (`fit` leaves the length out)
    // Clicks leave the keyboard where it was: the arrows keep seeking 5 s, and the controls still hide.
    gtk_widget_set_focus_on_click(slider, 0)
    gtk_widget_set_tooltip_text(slider, "Position (Left/Right 5 s, Up/Down 60 s)")
    orb_set_accessible_label(slider, "Position")
    speedButton = button(label: "1×", tip: "Speed ([ and ], Backspace: normal)", name: "Speed")
    audioButton = button(label: "♪", tip: "Audio track (# for the next)", name: "Audio track")
    subtitlesButton = button(label: "CC", tip: "Subtitles (j for the next, or off)", name: "Subtitles")
    muteButton = button(icon: "audio-volume-high-symbolic", tip: "Mute (m)", name: "Mute")
    volumeSlider = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 150, 5)
    gtk_scale_set_draw_value(cast(raw(volumeSlider)), 0)
    gtk_widget_set_size_request(volumeSlider, 90, -1)
    gtk_widget_set_focus_on_click(volumeSlider, 0)
    gtk_widget_set_tooltip_text(volumeSlider, "Volume (9 and 0)")
    orb_set_accessible_label(volumeSlider, "Volume")
    fullscreenButton = button(icon: "view-fullscreen-symbolic", tip: "Fullscreen (f)", name: "Fullscreen")
    closeButton = button(icon: "window-close-symbolic", tip: "Close (q)", name: "Close")
    for hidden in [audioButton, subtitlesButton] { gtk_widget_set_visible(hidden, 0) }  // until there are tracks
    let timeline = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)
    let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4)
    let gap = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0)
    gtk_widget_set_hexpand(gap, 1)
    for child in [positionLabel, slider, durationLabel] { gtk_box_append(cast(raw(timeline)), child) }
    for child in [
      playButton, speedButton, audioButton, subtitlesButton, gap, muteButton, volumeSlider, fullscreenButton,
      closeButton,
    ] {
      gtk_box_append(cast(raw(buttons)), child)
    }
    gtk_box_append(cast(raw(widget)), timeline)
    gtk_box_append(cast(raw(widget)), buttons)
    gtk_widget_set_visible(widget, 0)
    Signals.plain(raw(playButton), "clicked") { [unowned self] in self.onPlayPause?() }
    Signals.plain(raw(fullscreenButton), "clicked") { [unowned self] in self.onFullscreen?() }
    Signals.plain(raw(subtitlesButton), "clicked") { [unowned self] in
      self.openMenu(on: self.subtitlesButton, self.subtitleEntries?() ?? []) { self.onSubtitleChosen?($0) }
    }
    Signals.plain(raw(audioButton), "clicked") { [unowned self] in
      self.openMenu(on: self.audioButton, self.audioEntries?() ?? []) { self.onAudioChosen?($0) }
    }
    Signals.plain(raw(muteButton), "clicked") { [unowned self] in self.onMute?() }
    Signals.plain(raw(closeButton), "clicked") { [unowned self] in self.onClose?() }
    Signals.plain(raw(speedButton), "clicked") { [unowned self] in self.onSpeed?(Self.speed(after: self.speed)) }
    follow(slider, last: \.positionSet) { [unowned self] value, jump in self.scrub(to: value, jump: jump) }
    let hovering = gtk_event_controller_motion_new()!
    Signals.motion(raw(hovering)) { [unowned self] x, _ in self.hover(at: x) }
    gtk_widget_add_controller(slider, hovering)
    follow(volumeSlider, last: \.volumeSet) { [unowned self] value, _ in self.onVolume?(min(150, max(0, value))) }
  }

  /// Calls `moved` for each move a person makes on `scale`: with the pointer or the keys ("change-value", and
  /// whether it jumped), or set by a screen reader. AT-SPI's Value sets the value directly, without "change-value":
  /// any value that neither the pointer, the keys nor the player put there is such a request (not a jump). `last`
  /// keeps the value the pointer, the keys or the player last put there.
  private func follow(
    _ scale: UnsafeMutablePointer<GtkWidget>, last: ReferenceWritableKeyPath<TransportBar, Double>,
    moved: @escaping (Double, _ jump: Bool) -> Void
  ) {
    Signals.rangeChange(raw(scale)) { [unowned self] value, jump in
      moved(value, jump)
      self[keyPath: last] = Self.settled(scale, value)
      return false
    }
    Signals.plain(raw(scale), "value-changed") { [unowned self] in
      let value = gtk_range_get_value(cast(raw(scale)))
      if !self.updating, abs(value - self[keyPath: last]) > 0.001 {
        self[keyPath: last] = value
        moved(value, false)
      }
    }
  }

  /// The sliders' values as last put there by the pointer, the keys or the player.
  private var positionSet = 0.0
  private var volumeSet = 100.0
  /// The player's state is being shown: the sliders' moves are not requests.
  private var updating = false

  /// The value GTK gives a scale after "change-value" asks for `value`: kept within its range and rounded to its
  /// digits.
  private static func settled(_ scale: UnsafeMutablePointer<GtkWidget>, _ value: Double) -> Double {
    let adjustment = gtk_range_get_adjustment(cast(raw(scale)))
    let upper = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
    let within = min(max(value, gtk_adjustment_get_lower(adjustment)), upper)
    let power = pow(10, Double(gtk_scale_get_digits(cast(raw(scale)))))
    return (within * power).rounded() / power
  }

  /// Marks the marker windows on the slider (their start and end, named), as a viewer sees where the intro and the
  /// credits are.
  func mark(_ windows: [(Marker, end: Double)], chapters: [ChapterInfo] = []) {
    gtk_scale_clear_marks(cast(raw(slider)))
    for (marker, end) in windows {
      let name = marker.kind == .intro ? "Intro" : "Credits"
      gtk_scale_add_mark(cast(raw(slider)), marker.start, GTK_POS_TOP, name)
      if end.isFinite { gtk_scale_add_mark(cast(raw(slider)), end, GTK_POS_TOP, nil) }
    }
    // Each chapter's start, a tick under the slider; the pointer over it names the chapter (`hover`).
    for chapter in chapters where chapter.start > 0 {
      gtk_scale_add_mark(cast(raw(slider)), chapter.start, GTK_POS_BOTTOM, nil)
    }
    self.chapters = chapters
  }

  /// The media's chapters, for the slider's tooltip.
  private var chapters: [ChapterInfo] = []

  /// The time under the pointer over the slider, as its tooltip.
  private func hover(at x: Double) {
    guard length > 0 else { return }
    let width = Double(gtk_widget_get_width(slider))
    guard width > 0 else { return }
    let time = min(max(0, x / width), 1) * length
    let chapter = ChapterStep.playing(chapters, at: time).map { "\n\(ChapterStep.name(chapters, $0)) (Page Up/Down)" }
    gtk_widget_set_tooltip_text(slider, "\(StatsText.clock(time)) (Left/Right 5 s, Up/Down 60 s)\(chapter ?? "")")
  }

  /// The slider moved to `value`. Keys seek exactly; the pointer previews at once with key-frame seeks and, once it
  /// has rested for `settleMs`, seeks exactly where it stopped (a click is both).
  private func scrub(to value: Double, jump: Bool) {
    guard jump else { return onSeek?(value, true) ?? () }
    onSeek?(value, false)
    scrubSerial += 1
    let serial = scrubSerial
    MainLoop.after(milliseconds: Self.settleMs) { [weak self] in
      guard let self, self.scrubSerial == serial else { return }
      self.onSeek?(value, true)
    }
  }
  private var scrubSerial = 0
  /// Milliseconds without slider movement after which a drag's preview becomes an exact seek.
  static let settleMs: UInt32 = 250

  /// The speed after `now` on the button: the next step up, after the last the first.
  static func speed(after now: Double) -> Double { speeds.first { $0 > now + 0.001 } ?? speeds[0] }

  /// "1.25×", "2×".
  static func speedText(_ speed: Double) -> String { String(format: "%g×", speed) }

  /// Shows the bar; it hides itself after `hideAfterMs` unless `keep` (paused).
  func reveal(keep: Bool) {
    gtk_widget_set_visible(widget, 1)
    hideSerial += 1
    guard !keep else { return }
    let serial = hideSerial
    MainLoop.after(milliseconds: Self.hideAfterMs) { [weak self] in
      guard let self, self.hideSerial == serial else { return }
      // A keyboard user working the controls (Tab to a button), or a track menu open, keeps them up.
      if self.hasFocus || self.menu != nil { return self.reveal(keep: false) }
      self.hide()
    }
  }

  func hide() {
    closeMenu()
    hideSerial += 1
    gtk_widget_set_visible(widget, 0)
    onHidden?()
  }

  var isVisible: Bool { gtk_widget_get_visible(widget) != 0 }

  /// Gives the keyboard focus to the first control (play/pause).
  func focusFirst() { gtk_widget_grab_focus(playButton) }

  /// Whether the keyboard focus is on one of the controls.
  var hasFocus: Bool {
    guard let root = gtk_widget_get_root(widget), let focus = gtk_root_get_focus(root) else { return false }
    return gtk_widget_is_ancestor(focus, widget) != 0
  }

  /// The bar's height in logical pixels while it is shown, else 0.
  var shownHeight: Int { isVisible ? Int(gtk_widget_get_height(widget)) : 0 }

  /// The height the bar takes when shown, shown or not (GTK measures a hidden widget as 0, so it is measured
  /// shown once, within one turn of the main loop, which draws nothing in between).
  var naturalHeight: Int {
    if let measured { return measured }
    let wasVisible = isVisible
    gtk_widget_set_visible(widget, 1)
    var minimum: Int32 = 0
    var natural: Int32 = 0
    gtk_widget_measure(widget, GTK_ORIENTATION_VERTICAL, -1, &minimum, &natural, nil, nil)
    gtk_widget_set_visible(widget, wasVisible ? 1 : 0)
    measured = Int(natural)
    return Int(natural)
  }
  private var measured: Int?

  /// Shows the CC button when there are subtitle tracks to cycle through; `on` marks one as shown.
  func showSubtitles(tracks: Int, on: Bool) { showTracks(subtitlesButton, visible: tracks > 0, on: on) }

  /// Shows ♪ when there is more than one audio track.
  func showAudio(tracks: Int) { showTracks(audioButton, visible: tracks > 1, on: true) }

  private func showTracks(_ button: UnsafeMutablePointer<GtkWidget>, visible: Bool, on: Bool) {
    if button == audioButton { audioWanted = visible } else { subtitlesWanted = visible }
    gtk_widget_set_visible(button, visible ? 1 : 0)
    if let width = fittedWidth {
      fittedWidth = nil
      fit(width: width)
    }
    if on { gtk_widget_remove_css_class(button, "dim-label") } else { gtk_widget_add_css_class(button, "dim-label") }
  }

  /// Opens a menu of `entries` on `button`, the chosen one pressed (a group of toggle buttons, which the keyboard and
  /// a screen reader work too); choosing one closes it and calls `choose` with its index.
  private func openMenu(
    on button: UnsafeMutablePointer<GtkWidget>, _ entries: [TrackEntry], choose: @escaping (Int) -> Void
  ) {
    closeMenu()
    guard !entries.isEmpty, let popover = gtk_popover_new() else { return }
    gtk_widget_add_css_class(popover, "orb-track-menu")
    let list = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2)!
    var group: UnsafeMutablePointer<GtkWidget>?
    for (index, entry) in entries.enumerated() {
      // Toggle buttons in a group: GTK 4.8 gives a check button no action a screen reader can take.
      let item = gtk_toggle_button_new_with_label(entry.title)!
      gtk_widget_add_css_class(item, "flat")
      if let label = gtk_button_get_child(cast(raw(item))) { gtk_label_set_xalign(opaque(label), 0) }
      if let group { gtk_toggle_button_set_group(cast(raw(item)), cast(raw(group))) } else { group = item }
      gtk_toggle_button_set_active(cast(raw(item)), entry.chosen ? 1 : 0)
      gtk_widget_set_sensitive(item, entry.usable ? 1 : 0)
      if !entry.usable { gtk_widget_set_tooltip_text(item, "Cannot be read") }
      // "clicked", not "toggled": the entry already chosen closes the menu too.
      Signals.plain(raw(item), "clicked") { [unowned self] in
        guard self.menu == popover else { return }
        self.closeMenu()
        choose(index)
      }
      gtk_box_append(cast(raw(list)), item)
    }
    gtk_popover_set_child(cast(raw(popover)), list)
    // The button is held until the popover is unparented: a window closed with the menu open (by the window
    // manager) is destroyed before the deferred unparent runs, which would find its parent freed.
    g_object_ref(raw(button))
    gtk_widget_set_parent(popover, button)
    var released = false  // "closed" may come again (unmapped twice) before the unparent has run
    Signals.plain(raw(popover), "closed") { [unowned self] in
      if self.menu == popover { self.menu = nil }
      guard !released else { return }
      released = true
      // Unparented once the signal is over, not inside GTK's own handling of it.
      MainLoop.after(milliseconds: 0) {
        gtk_widget_unparent(popover)
        g_object_unref(raw(button))
      }
    }
    menu = popover
    gtk_popover_popup(cast(raw(popover)))
    reveal(keep: false)
  }

  /// Closes the track menu, if one is open (the entry it lists may be about to change, or the window to go).
  func closeMenu() {
    guard let open = menu else { return }
    menu = nil
    gtk_popover_popdown(cast(raw(open)))
  }

  /// Leaves out of the bar what does not fit a window `width` pixels wide, the least needed first: the volume slider
  /// (m, 9 and 0 remain), the speed and track buttons (their keys remain), the length. In a small window (a corner
  /// of the screen, 200x150) the bar ran past the window's edge, and the fullscreen and close buttons were gone.
  func fit(width: Int) {
    guard width > 0, width != fittedWidth else { return }
    fittedWidth = width
    let leaving = [volumeSlider, speedButton, audioButton, subtitlesButton, durationLabel]
    func wanted(_ part: UnsafeMutablePointer<GtkWidget>) -> Bool {
      part == audioButton ? audioWanted : part == subtitlesButton ? subtitlesWanted : true
    }
    let shown = isVisible
    gtk_widget_set_visible(widget, 1)  // (GTK measures a hidden widget as 0)
    defer { gtk_widget_set_visible(widget, shown ? 1 : 0) }
    for left in 0...leaving.count {
      for (i, part) in leaving.enumerated() { gtk_widget_set_visible(part, i >= left && wanted(part) ? 1 : 0) }
      var minimum: Int32 = 0
      var natural: Int32 = 0
      gtk_widget_measure(widget, GTK_ORIENTATION_HORIZONTAL, -1, &minimum, &natural, nil, nil)
      if Int(minimum) + 2 * Self.margin <= width { return }
    }
  }

  /// Brings the controls up to date with the player (called a few times a second while visible).
  func update(position: Double, duration: Double?, paused: Bool, speed: Double, volume: Double, muted: Bool) {
    updating = true
    defer { updating = false }
    gtk_button_set_icon_name(
      cast(raw(playButton)), paused ? "media-playback-start-symbolic" : "media-playback-pause-symbolic")
    length = duration ?? 0
    gtk_label_set_text(opaque(positionLabel), StatsText.clock(position))
    gtk_label_set_text(opaque(durationLabel), duration.map(StatsText.clock) ?? "–")
    gtk_widget_set_sensitive(slider, length > 0 ? 1 : 0)
    if length > 0 {
      let range: UnsafeMutablePointer<GtkRange> = cast(raw(slider))
      gtk_range_set_range(range, 0, length)
      gtk_range_set_value(range, min(max(0, position), length))
      positionSet = gtk_range_get_value(range)
    }
    if speed != self.speed {
      self.speed = speed
      gtk_button_set_label(cast(raw(speedButton)), Self.speedText(speed))
    }
    gtk_button_set_icon_name(
      cast(raw(muteButton)), muted || volume == 0 ? "audio-volume-muted-symbolic" : "audio-volume-high-symbolic")
    gtk_range_set_value(cast(raw(volumeSlider)), volume)
    volumeSet = gtk_range_get_value(cast(raw(volumeSlider)))
  }
}

/// One entry of a track menu: its words, whether it is the one playing, and whether it can be chosen (a subtitle file
/// that could not be read cannot). Thread-safety: a value.
struct TrackEntry: Equatable {
  var title: String
  var chosen: Bool
  var usable = true
}
