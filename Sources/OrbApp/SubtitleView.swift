import CGtk
import Foundation
import OrbDecode
import OrbPlayer
import OrbRender

/// The subtitles over the video: the current text cues in a label near the bottom of the picture, those placed at
/// its top (an ASS `{\an8}` cue: a sign, a second speaker) in one there, and those of its middle row (`{\an5}`) in
/// one at its centre, white (or their colours) with a dark outline, wrapped to
/// the picture's width and sized to its height, the bottom one kept above the transport bar while the bar is up; and
/// a bitmap cue (PGS, DVD, DVB) as a picture laid over the video, scaled with it; and the cues of an ASS/SSA script
/// drawn by libass (`ASSRenderer`) as the script places and styles them, as a picture of the part of the video they
/// cover. Asked of the player at every frame of the window's clock; text rebuilt only when the cues change, a script
/// drawn again only when libass says its picture changed (a `\move`, a fade).
/// Thread-safety: main actor (compiler-checked).
final class SubtitleView {
  /// The bottom label, the top one and the middle one.
  private let bottomLabel: UnsafeMutablePointer<GtkWidget>
  private let topLabel: UnsafeMutablePointer<GtkWidget>
  private let middleLabel: UnsafeMutablePointer<GtkWidget>
  private var labels: [(label: UnsafeMutablePointer<GtkWidget>, row: SubtitlePlacement)] {
    [(bottomLabel, .bottom), (topLabel, .top), (middleLabel, .middle)]
  }
  private let bitmap: UnsafeMutablePointer<GtkWidget>
  /// What libass drew, placed over its part of the video.
  private let scriptLayer = ScriptLayer()
  /// libass for the player shown: made on a thread of its own (the media's fonts read, fontconfig asked: tens of
  /// ms, more with many fonts) as soon as a script track is chosen or a script's cue comes.
  private enum ScriptRenderer {
    case none
    case making
    case ready(ASSRenderer)
    /// libass could not start: the cues are shown as text.
    case failed
  }
  private var script = ScriptRenderer.none
  /// The player it is for (another's media carries other fonts), and which of its tracks was looked at.
  private var scriptPlayer: ObjectIdentifier?
  private var scriptTrackSeen: Int?
  /// Bumped with each player, so a renderer made for the last one is not taken.
  private var scriptSerial = 0
  /// Cues of a script are on screen: libass is asked for a picture at every frame.
  private var scriptCues = false
  /// What is shown: the store's generation and the cues' times, so a frame with the same cues changes nothing.
  private var shownKey: (UInt64, [Double])?
  private var shownText = ""
  private var layoutKey: [Int] = []
  /// Text size relative to the default (`--sub-scale`).
  var scale = 1.0
  /// The text shown changed: its plain text ("" when it clears) and the cue's times.
  var onText: ((String, Double?, Double?) -> Void)?

  /// The default text height: this share of the picture's height (mpv's is about 0.076, VLC's about 0.06).
  static let textShare = 0.055

  init(over overlay: UnsafeMutablePointer<GtkWidget>) {
    func textLabel(_ valign: GtkAlign) -> UnsafeMutablePointer<GtkWidget> {
      let label = gtk_label_new(nil)!
      gtk_widget_add_css_class(label, "orb-subtitle")
      gtk_label_set_wrap(opaque(label), 1)
      gtk_label_set_justify(opaque(label), GTK_JUSTIFY_CENTER)
      gtk_widget_set_halign(label, GTK_ALIGN_CENTER)
      gtk_widget_set_valign(label, valign)
      gtk_widget_set_can_target(label, 0)  // clicks go through to the video
      gtk_widget_set_visible(label, 0)
      return label
    }
    bottomLabel = textLabel(GTK_ALIGN_END)
    topLabel = textLabel(GTK_ALIGN_START)
    middleLabel = textLabel(GTK_ALIGN_CENTER)
    bitmap = gtk_picture_new()
    gtk_picture_set_content_fit(opaque(bitmap), GTK_CONTENT_FIT_FILL)
    gtk_picture_set_can_shrink(opaque(bitmap), 1)
    gtk_widget_set_can_target(bitmap, 0)
    gtk_widget_set_visible(bitmap, 0)
    gtk_overlay_add_overlay(opaque(overlay), bitmap)
    gtk_overlay_add_overlay(opaque(overlay), scriptLayer.widget)
    gtk_overlay_add_overlay(opaque(overlay), topLabel)
    gtk_overlay_add_overlay(opaque(overlay), middleLabel)
    gtk_overlay_add_overlay(opaque(overlay), bottomLabel)
  }

  /// Shows the cues of `player` at its position, laid out over `video` (the picture widget) with the transport bar
  /// `barHeight` logical pixels tall at the bottom (0 when hidden).
  func update(_ player: Player, video: UnsafeMutablePointer<GtkWidget>, barHeight: Int) {
    guard let subtitles = player.subtitles else { return }
    if scriptPlayer != ObjectIdentifier(player) {
      dropScripts()
      scriptPlayer = ObjectIdentifier(player)
    }
    if case .none = script, subtitles.current != scriptTrackSeen {
      scriptTrackSeen = subtitles.current
      if let current = scriptTrackSeen, ["ASS", "SSA"].contains(subtitles.tracks[current - 1].format) {
        makeScriptRenderer(player)
      }
    }
    let time = cueTime(player)
    let cues = subtitles.active(at: time)
    let key = (subtitles.generation, cues.flatMap { [$0.start, $0.end] })
    let area = videoArea(video, aspect: player.shownFrame?.displayAspect)
    if shownKey.map({ $0.0 != key.0 || $0.1 != key.1 }) ?? true {
      shownKey = key
      show(cues, area: area, player: player)
    }
    layout(area, barHeight: barHeight)
    if scriptCues || !scriptLayer.place.isEmpty {
      // The picture's shape as shown (pixel aspect and rotation applied), which the area has: libass's text keeps
      // its proportions only when the two agree.
      let storage = player.shownFrame.map {
        VideoGeometry.naturalSize(
          width: $0.width, height: $0.height, sampleAspect: $0.sampleAspect, rotation: $0.rotation)
      }
      drawScripts(at: time, area: area, video: video, storage: storage, barHeight: barHeight)
    }
  }

  /// Makes libass for `player` on a thread of its own; until it is there, the script's cues wait (not shown as text,
  /// which they would be styled and placed otherwise than a moment later).
  private func makeScriptRenderer(_ player: Player) {
    script = .making
    let fonts = player.info?.attachedFonts ?? []
    let serial = scriptSerial
    startThread(named: "orb-libass") {
      let made = Handoff(ASSRenderer(fonts: fonts))
      MainLoop.post { [weak self] in
        guard let self, self.scriptSerial == serial, let renderer = made.take() else { return }
        if let renderer {
          self.script = .ready(renderer)
        } else {
          self.script = .failed
          FileHandle.standardError.write(Data("orb-player: libass could not start; ASS cues are shown as text\n".utf8))
        }
        self.shownKey = nil  // the cues on screen are shown again, now by it
      }
    }
  }

  /// Lets go of libass and its picture (the player is gone, or another one came).
  private func dropScripts() {
    scriptSerial += 1
    (script, scriptPlayer, scriptTrackSeen, scriptCues) = (.none, nil, nil, false)
    scriptLayer.hide()
  }

  /// The time the cues are looked up at: the position, held where it was while playing the clock steps back by less
  /// than `heldStep` (the sound taking the clock over, a file whose sound starts before its first picture): a cue
  /// starting with the picture was shown, cleared and shown again, and the host heard it three times. A seek back
  /// goes further (or is paused: a frame step), and is followed at once.
  private func cueTime(_ player: Player) -> Double {
    let position = player.position
    var time = position
    if let (shown, last) = cueClock, shown == ObjectIdentifier(player), !player.isPaused, position < last,
      position > last - Self.heldStep
    {
      time = last
    }
    cueClock = (ObjectIdentifier(player), time)
    return time
  }
  private var cueClock: (player: ObjectIdentifier, time: Double)?
  static let heldStep = 0.25

  /// Hides everything (the player is gone).
  func clear() {
    cueClock = nil
    for (label, _) in labels { gtk_widget_set_visible(label, 0) }
    gtk_widget_set_visible(bitmap, 0)
    dropScripts()
    if !shownText.isEmpty { onText?("", nil, nil) }
    shownText = ""
    shownKey = nil
  }

  /// The text shown now, for the stats overlay and tests.
  var text: String { shownText }

  private struct Area {
    var x, y, width, height: Double
  }

  /// Where the picture is drawn inside the widget (letterboxed to the video's shape).
  private func videoArea(_ video: UnsafeMutablePointer<GtkWidget>, aspect: Double?) -> Area {
    let w = Double(gtk_widget_get_width(video))
    let h = Double(gtk_widget_get_height(video))
    guard let aspect, aspect > 0, w > 0, h > 0 else { return Area(x: 0, y: 0, width: w, height: h) }
    if w / h > aspect {
      let vw = h * aspect
      return Area(x: (w - vw) / 2, y: 0, width: vw, height: h)
    }
    let vh = w / aspect
    return Area(x: 0, y: (h - vh) / 2, width: w, height: vh)
  }

  private func show(_ cues: [SubtitleCue], area: Area, player: Player) {
    let texts = Self.distinct(cues.filter { $0.bitmaps.isEmpty && !$0.lines.isEmpty })
    let text = texts.map(\.plainText).joined(separator: "\n")
    let scripted = showScripts(cues, player: player)
    for (label, row) in labels {
      let these = texts.filter { $0.placement == row && !(scripted && $0.assEvent != nil) }
      if these.isEmpty {
        gtk_widget_set_visible(label, 0)
      } else {
        gtk_label_set_markup(opaque(label), these.map(\.pangoMarkup).joined(separator: "\n"))
        gtk_widget_set_visible(label, 1)
      }
    }
    layoutKey = []  // new text: measured again, and made smaller if it does not fit
    if text != shownText {
      shownText = text
      onText?(text, texts.first?.start, texts.map(\.end).max())
    }
    showBitmaps(cues.flatMap(\.bitmaps))
  }

  /// Each text once, in order: a script draws a sign in layers (its outline, its fill), each a cue of the same text,
  /// which is told and read out once.
  private static func distinct(_ cues: [SubtitleCue]) -> [SubtitleCue] {
    var seen = Set<String>()
    return cues.filter { seen.insert($0.plainText).inserted }
  }

  /// Gives libass the cues of a script; whether it draws them (false when it could not start: they are text then).
  private func showScripts(_ cues: [SubtitleCue], player: Player) -> Bool {
    let scripted = cues.filter { $0.assEvent != nil }
    scriptCues = !scripted.isEmpty
    if scriptCues, case .none = script {
      makeScriptRenderer(player)  // a script's cue on a track not known as one
    }
    switch script {
    case .none, .failed: return false
    case .making: return true  // they wait for it
    case .ready(let renderer):
      renderer.show(
        scripted.compactMap { cue in cue.assEvent.map { ASSRenderer.Cue($0, start: cue.start, end: cue.end) } })
      // Read out as the labels are.
      orb_set_accessible_label(
        scriptLayer.widget, Self.distinct(scripted).map(\.plainText).filter { !$0.isEmpty }.joined(separator: "\n"))
      return true
    }
  }

  /// The script's cues drawn at `time` for the video's area on screen, at its device pixels, shown where they lie.
  private func drawScripts(
    at time: Double, area: Area, video: UnsafeMutablePointer<GtkWidget>, storage: (width: Int, height: Int)?,
    barHeight: Int
  ) {
    guard case .ready(let renderer) = script else { return }
    let factor = Double(max(1, gtk_widget_get_scale_factor(video)))
    // The part of the picture the transport bar covers, with the gap the labels keep: dialogue goes above it.
    let below = Double(gtk_widget_get_height(video)) - area.y - area.height
    let covered = barHeight > 0 ? max(0, Double(barHeight + Self.barGap) - below) : 0
    let frame = renderer.render(
      at: time, width: Int((area.width * factor).rounded()), height: Int((area.height * factor).rounded()),
      storageWidth: storage?.width ?? 0, storageHeight: storage?.height ?? 0, fontScale: scale,
      hiddenBelow: Int((covered * factor).rounded()), masks: scriptLayer.takesMasks)
    switch frame {
    case .unchanged: break
    case .picture(nil): scriptLayer.hide()
    case .picture(let picture?): scriptLayer.show(picture)
    }
    // Placed again at each frame: the area may have moved since the picture was drawn.
    scriptLayer.layout(
      x: area.x, y: area.y, factor: factor, width: Double(gtk_widget_get_width(video)),
      height: Double(gtk_widget_get_height(video)))
  }

  /// The bitmaps composed on their canvas, as one picture laid over the video.
  private func showBitmaps(_ pictures: [SubtitleBitmap]) {
    guard let first = pictures.first, first.canvasWidth > 0, first.canvasHeight > 0 else {
      gtk_widget_set_visible(bitmap, 0)
      gtk_picture_set_paintable(opaque(bitmap), nil)
      return
    }
    let (cw, ch) = (first.canvasWidth, first.canvasHeight)
    var canvas = [UInt8](repeating: 0, count: cw * ch * 4)
    for picture in pictures { Self.place(picture, on: &canvas, width: cw, height: ch) }
    let bytes = canvas.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
    let texture = gdk_memory_texture_new(Int32(cw), Int32(ch), GDK_MEMORY_R8G8B8A8, bytes, gsize(cw * 4))
    g_bytes_unref(bytes)
    gtk_picture_set_paintable(opaque(bitmap), texture)
    if let texture { g_object_unref(UnsafeMutableRawPointer(texture)) }
    gtk_widget_set_visible(bitmap, 1)
  }

  /// Copies `picture` onto a canvas of straight RGBA rows, clipped to it.
  static func place(_ picture: SubtitleBitmap, on canvas: inout [UInt8], width: Int, height: Int) {
    for row in 0..<picture.height {
      let y = picture.y + row
      guard y >= 0 && y < height else { continue }
      for column in 0..<picture.width {
        let x = picture.x + column
        guard x >= 0 && x < width else { continue }
        let from = (row * picture.width + column) * 4
        let to = (y * width + x) * 4
        guard picture.rgba[from + 3] > 0 else { continue }
        for c in 0..<4 { canvas[to + c] = picture.rgba[from + c] }
      }
    }
  }

  /// Sets the text's size to `size` pixels, or smaller where the cue would not fit the widget (`width` by `height`)
  /// with `inset` left free at its far side: a long cue, or a large `--sub-scale`, ran off the top of the window.
  /// Wrapped text takes room as the square of its size, so each try scales by the root of what is over.
  private func fitText(
    _ label: UnsafeMutablePointer<GtkWidget>, size: Double, width: Double, height: Double, inset: Double
  ) {
    func setSize(_ size: Double) {
      let attributes = pango_attr_list_new()
      pango_attr_list_insert(attributes, pango_attr_size_new_absolute(Int32(size * Double(PANGO_SCALE))))
      gtk_label_set_attributes(opaque(label), attributes)
      pango_attr_list_unref(attributes)
    }
    var size = size
    setSize(size)
    guard gtk_widget_get_visible(label) != 0 else { return }
    // The measure counts the label's margins (the room kept below it): only the rest is the text's.
    let margins = Double(gtk_widget_get_margin_top(label) + gtk_widget_get_margin_bottom(label))
    let room = height - inset - margins
    for _ in 0..<4 {
      var natural: Int32 = 0
      gtk_widget_measure(label, GTK_ORIENTATION_VERTICAL, Int32(width), nil, &natural, nil, nil)
      let text = Double(natural) - margins
      guard text > room, room > 0, size > Self.smallestText else { return }
      size = max(Self.smallestText, size * (room / text).squareRoot() * 0.95)
      setSize(size)
    }
  }

  /// What the text keeps clear above the transport bar's top edge: the bar's own bottom margin (12) and a gap (8).
  static let barGap = 12 + 8

  /// The smallest text a cue is made to fit at, in pixels.
  static let smallestText = 8.0

  /// Sizes the text to the picture and keeps it above the bar; lays the bitmap over the picture.
  private func layout(_ area: Area, barHeight: Int) {
    let textPx = max(12, area.height * Self.textShare * scale)
    let inset = area.height * 0.04
    let side = Int(area.x + area.width * 0.05)
    let widgetHeight = area.height + 2 * area.y
    let bottom = max(Int(area.y + inset), barHeight > 0 ? barHeight + Self.barGap : 0)
    let key = [Int(textPx), side, bottom, Int(area.y + inset), Int(area.x), Int(area.y)]
    guard key != layoutKey, widgetHeight > 0 else { return }
    layoutKey = key
    for (label, _) in labels {
      gtk_widget_set_margin_start(label, Int32(side))
      gtk_widget_set_margin_end(label, Int32(side))
    }
    gtk_widget_set_margin_top(topLabel, Int32(area.y + inset))
    gtk_widget_set_margin_bottom(bottomLabel, Int32(bottom))
    // With several rows up, each may take its share of the height.
    let shown = labels.filter { gtk_widget_get_visible($0.label) != 0 }.count
    let share = widgetHeight / Double(max(1, shown))
    for (label, _) in labels {
      fitText(label, size: textPx, width: area.width + 2 * area.x, height: share, inset: shown > 1 ? 0 : area.y + inset)
    }
    gtk_widget_set_margin_start(bitmap, Int32(area.x))
    gtk_widget_set_margin_end(bitmap, Int32(area.x))
    gtk_widget_set_margin_top(bitmap, Int32(area.y))
    gtk_widget_set_margin_bottom(bitmap, Int32(area.y))
  }
}
