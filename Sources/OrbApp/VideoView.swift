import CGtk
import Foundation
import OrbPlayer
import OrbRender

/// The widget that shows the player's frames: a GtkPicture whose paintable is replaced at each new frame,
/// paced by a tick callback on the window's frame clock.
/// Zero-copy: the render target's memory, exported by Vulkan as an fd, is imported once per ring slot into a GL
/// texture (GL_EXT_memory_object_fd) and wrapped as a GdkGLTexture. Fallback: the slot's pixels are copied into
/// a GdkMemoryTexture. Where GTK draws with cairo (`WindowRenderer`), the widget is a GtkDrawingArea that paints the
/// slot's BGRA pixels straight from its memory: GTK 4.8's cairo renderer turns every memory texture into floats
/// and back, a quarter of the whole CPU at 1080p. Thread-safety: main actor (compiler-checked).
final class VideoView {
  let picture: UnsafeMutablePointer<GtkWidget>
  /// GTK draws with cairo, and so does this view (see above).
  let drawsWithCairo = WindowRenderer.isCairo
  /// What the drawing area paints (cairo mode): the picture held for it, its slot kept out of the ring until the
  /// next one replaces it, and the cairo surface over the slot's memory, made at its first paint and kept for the
  /// next (a paused picture under a moving overlay is painted many times).
  private var painted: ShownPicture?
  private var paintedSurface: OpaquePointer?
  /// Pictures replaced (cairo mode), their slots not yet handed back. GTK's cairo nodes record the surface painted,
  /// and cairo copies a surface's pixels for such a recording when the surface is destroyed before it: a window-sized
  /// allocation and copy a frame, had each surface gone at once. So a replaced picture is let go once a frame drawn
  /// without it has been rendered (the tick after its replacement's paint), when no recording of it is left.
  private var replaced: [Replaced] = []
  private struct Replaced {
    let picture: ShownPicture
    let surface: OpaquePointer?
    /// A paint has happened since: once that frame is rendered, no recording of this picture is left.
    var paintedOver = false
  }
  private(set) var player: Player?
  private var glContext: OpaquePointer?
  private var imported: [Int: (texture: GLuint, memory: GLuint, slot: Weak<VideoSlot>)] = [:]
  private var tickID: guint = 0
  /// Refreshes in a row that had nothing new to show while paused, or for sound alone; at `refreshesBeforeRest` the
  /// view stops asking at every refresh, so that GTK's frame clock stops too: a paused window ran it 60 times a second
  /// for nothing (GTK's frame, X traffic, the player's lock), 2.1 % of a core here against 0.4 % resting (mpv,
  /// paused, takes none), and with the sound's feed (`AudioPlayback.write`) the process woke 790 times a second, now
  /// 35.
  private var idleRefreshes = 0
  private static let refreshesBeforeRest = 30
  /// While resting: a timer that looks 20 times a second whether the player changed (`Player.changeCount`: a seek
  /// drawn, a picture to show, a resume from anywhere), the view's size did, or the subtitles' cues did (a track chosen
  /// while paused is read a moment later: its cue showed only at the next change), and starts the refreshes again;
  /// what it saw when the rest began. Sound alone, playing, it is the refresh itself (`refreshSoundOnly`).
  private var rest: (timer: guint, changes: UInt64, size: (Int, Int), cues: UInt64)?
  /// Where GTK gets no presentation times and draws with cairo (X11 without a compositor, Xvfb), nothing waits for
  /// a vertical blank: a picture is on screen once its frame is painted. Microseconds from a frame's start to the end
  /// of its paint, smoothed over frames that painted a new picture; measured on `paintClock`'s "after-paint". It
  /// moves by at most a millisecond a frame: the first paints of a window are slow, and a prediction that leapt
  /// with them made a picture late.
  private var paintDelayUs = 0.0
  private var paintClock: OpaquePointer?
  /// A new picture was handed over in this frame: its paint is measured.
  private var newPicturePainted = false
  var onEnded: (() -> Void)?
  /// At every frame of the window's clock, after the picture is chosen (subtitles follow it).
  var onTick: (() -> Void)?

  init() {
    if drawsWithCairo {
      picture = gtk_drawing_area_new()
      Signals.draw(picture) { [unowned self] cr, w, h in self.paint(cr, w, h) }
    } else {
      picture = gtk_picture_new()
      gtk_picture_set_can_shrink(opaque(picture), 1)
      gtk_picture_set_content_fit(opaque(picture), GTK_CONTENT_FIT_FILL)
    }
    gtk_widget_set_hexpand(picture, 1)
    gtk_widget_set_vexpand(picture, 1)
  }

  /// Paints the picture held (cairo mode) over the whole area, black before there is one. The window paints no
  /// background of its own under this view (`PlayerWindow.installCSS`), so the area is still clear when GTK's cairo
  /// renderer composites this view's recording: cairo then replays the recording straight into the window's picture.
  /// Over a painted background it first replayed it into a window-sized image of its own, a 3.7 MB allocation and a
  /// copy of every pixel at each frame (1080p30 H.264, 10 s: 2.92-2.99 -> 2.68-2.78 CPU s, peak RSS 124 -> 120 MB).
  private func paint(_ cr: OpaquePointer, _ width: Int32, _ height: Int32) {
    for i in replaced.indices { replaced[i].paintedOver = true }
    guard let target = painted?.slot.target, width > 0, height > 0, let surface = surface(over: target) else {
      cairo_set_source_rgb(cr, 0, 0, 0)
      cairo_paint(cr)
      return
    }
    cairo_save(cr)
    let (sx, sy) = (Double(width) / Double(target.width), Double(height) / Double(target.height))
    if abs(sx - sy) > 0.005 {
      // Drawn for a view of another shape (the window manager gave the window another size than the one asked for,
      // until the ring is drawn again at the new one): the picture and its bars keep their shape, centred, the
      // rest black, instead of stretched out of shape.
      cairo_set_source_rgb(cr, 0, 0, 0)
      cairo_paint(cr)
      let scale = min(sx, sy)
      cairo_translate(
        cr, (Double(width) - Double(target.width) * scale) / 2, (Double(height) - Double(target.height) * scale) / 2)
      cairo_scale(cr, scale, scale)
    } else {
      cairo_scale(cr, sx, sy)
    }
    cairo_set_source_surface(cr, surface, 0, 0)
    cairo_paint(cr)
    cairo_restore(cr)
  }

  /// The cairo surface over the painted picture's memory, made once a picture.
  private func surface(over target: RenderTarget) -> OpaquePointer? {
    if let paintedSurface { return paintedSurface }
    // cairo only reads it: the pointer is mutable because its API is.
    guard let pixels = target.pixels?.baseAddress else { return nil }
    paintedSurface = cairo_image_surface_create_for_data(
      UnsafeMutablePointer(mutating: pixels.assumingMemoryBound(to: UInt8.self)), CAIRO_FORMAT_RGB24,
      Int32(target.width), Int32(target.height), Int32(target.width * 4))
    return paintedSurface
  }

  /// Holds `shown` for the drawing area (cairo mode); the one before is let go once no recording of it is left, or
  /// at once (cairo then copies what a recording still needs) when two are already waiting, so that a window GTK
  /// does not draw (minimized) still hands its slots back. Its memory is in BGRA: the player is made with that
  /// `memoryPixelOrder` whenever this view draws with cairo.
  private func hold(_ shown: ShownPicture, player: Player) {
    let target = shown.slot.target
    guard target.pixels != nil else {
      player.release(shown)
      return
    }
    if let old = painted { replaced.append(Replaced(picture: old, surface: paintedSurface)) }
    if replaced.count > 2 { letGo(replaced.removeFirst(), player: player) }
    painted = shown
    paintedSurface = nil
    gtk_widget_queue_draw(picture)
  }

  /// Hands back the replaced pictures a rendered frame no longer shows (all of them with `everything`).
  private func letGoReplaced(everything: Bool = false) {
    guard let player else { return }
    while let first = replaced.first, everything || first.paintedOver {
      letGo(replaced.removeFirst(), player: player)
    }
  }

  private func letGo(_ entry: Replaced, player: Player) {
    if let surface = entry.surface { cairo_surface_destroy(surface) }
    player.release(entry.picture)
  }

  /// Chooses how frames reach GTK. Needs the window realized (its surface makes the GL context).
  /// - Returns: the path, and why when it is the memory fallback.
  func choosePresentation(requested: VideoOutput, vulkan: VulkanContext?) -> (Player.Presentation, String) {
    if requested == .memory { return (.memory, "as requested") }
    // Cairo paints memory; a GL texture would only be read back for it.
    if drawsWithCairo { return (.memory, "GTK draws with cairo") }
    guard let vulkan, vulkan.canExportMemory else { return (.memory, "the Vulkan device cannot export memory") }
    guard let native = gtk_widget_get_native(picture), let surface = gtk_native_get_surface(native) else {
      return (.memory, "no window surface")
    }
    var error: UnsafeMutablePointer<GError>?
    guard let context = gdk_surface_create_gl_context(surface, &error) else {
      let why = error.map { String(cString: $0.pointee.message) } ?? "unknown"
      g_clear_error(&error)
      return (.memory, "no GL context (\(why))")
    }
    if gdk_gl_context_realize(context, &error) == 0 {
      let why = error.map { String(cString: $0.pointee.message) } ?? "unknown"
      g_clear_error(&error)
      g_object_unref(UnsafeMutableRawPointer(context))
      return (.memory, "GL context failed (\(why))")
    }
    gdk_gl_context_make_current(context)
    guard orb_gl_has_memory_object_fd() != 0 else {
      g_object_unref(UnsafeMutableRawPointer(context))
      return (.memory, "GL lacks GL_EXT_memory_object_fd")
    }
    var uuid = [UInt8](repeating: 0, count: 16)
    orb_gl_device_uuid(&uuid)
    // Memory can only be shared by GL and Vulkan on the same device; all-zero means GL cannot tell.
    if uuid != [UInt8](repeating: 0, count: 16) && uuid != vulkan.deviceUUID {
      g_object_unref(UnsafeMutableRawPointer(context))
      return (.memory, "GL and Vulkan run on different devices")
    }
    // Memory layouts are the driver's own: the spec allows sharing only between the same driver build
    // (EXT_external_objects: matching device and driver UUIDs). Where GL cannot tell (zeros), we go by the device.
    var driver = [UInt8](repeating: 0, count: 16)
    orb_gl_driver_uuid(&driver)
    if driver != [UInt8](repeating: 0, count: 16) && driver != vulkan.driverUUID {
      g_object_unref(UnsafeMutableRawPointer(context))
      return (.memory, "GL and Vulkan use different drivers")
    }
    glContext = context
    let renderer = orb_gl_renderer().map { String(cString: $0) } ?? "GL"
    return (.zeroCopy, "GL import on \(renderer)")
  }

  /// Starts showing `player`'s frames at each display refresh.
  func attach(_ player: Player) {
    self.player = player
    endRest()
    startRefreshes()
  }

  /// Asks the player at each refresh of the window's frame clock (`tick`), unless it does already.
  private func startRefreshes() {
    idleRefreshes = 0
    guard tickID == 0 else { return }
    let box = Unmanaged.passRetained(SignalBox<Signals.Bool0> { [unowned self] in self.tick() }).toOpaque()
    let fn: GtkTickCallback = { _, _, data in
      let box = Unmanaged<SignalBox<Signals.Bool0>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler() } ? 1 : 0
    }
    tickID = gtk_widget_add_tick_callback(picture, fn, box) { data in
      Unmanaged<SignalBox<Signals.Bool0>>.fromOpaque(data!).release()
    }
  }

  /// The player may have changed while the view rested (a key, a button): it asks again at once, not at its next look.
  func wake() {
    if endRest() && player != nil { startRefreshes() }
  }

  /// Stops the resting timer; whether the view was resting.
  @discardableResult
  private func endRest() -> Bool {
    guard let rest else { return false }
    g_source_remove(rest.timer)
    self.rest = nil
    return true
  }

  /// Stops asking at each refresh (`tick` then returns false) until the player or the view's size changes.
  private func beginRest(_ player: Player) {
    tickID = 0
    let timer = MainLoop.every(milliseconds: 50) { [unowned self] in
      guard let rest = self.rest, let player = self.player else { return false }
      if !player.hasVideo && !player.isPaused { return self.refreshSoundOnly(player) }
      // Cues that came after the rest began (a track chosen while paused, read a moment later) wake it too.
      let cues = player.subtitles?.generation ?? 0
      if player.changeCount == rest.changes && self.pixelSize == rest.size && player.isPaused && cues == rest.cues {
        return true
      }
      self.rest = nil
      self.startRefreshes()
      return false
    }
    rest = (timer, player.changeCount, pixelSize, player.subtitles?.generation ?? 0)
  }

  /// What a refresh does for sound without pictures, 20 times a second while resting: the player starts and holds the
  /// sound, sees a wait for data and the end; the subtitles and markers follow (`onTick`). Its time is now: there is
  /// no picture to present later. A sound file took 4.0 % of a core here with the frame clock at 60 Hz, 2.6 % so
  /// (mpv, its window shown: 3.1 %).
  private func refreshSoundOnly(_ player: Player) -> Bool {
    if case .ended = player.frameToShow(presentationTime: HostTime.now()) {
      rest = nil
      onEnded?()
      return false
    }
    onTick?()
    return true
  }

  func detach() {
    if tickID != 0 { gtk_widget_remove_tick_callback(picture, tickID) }
    tickID = 0
    endRest()
    player?.stop(timeout: 0)  // the main thread never waits; the process waits once the window is gone
    // What GL imported goes with the player; the picture lets go of its last texture first.
    if drawsWithCairo {
      if let old = painted { replaced.append(Replaced(picture: old, surface: paintedSurface)) }
      painted = nil
      paintedSurface = nil
      letGoReplaced(everything: true)
      gtk_widget_queue_draw(picture)
    } else {
      gtk_picture_set_paintable(opaque(picture), nil)
    }
    if let context = glContext {
      gdk_gl_context_make_current(context)
      for entry in imported.values { orb_gl_delete_import(entry.texture, entry.memory) }
      imported.removeAll()
    }
  }

  /// Size in device pixels the picture occupies.
  var pixelSize: (Int, Int) {
    let scale = Int(gtk_widget_get_scale_factor(picture))
    return (Int(gtk_widget_get_width(picture)) * scale, Int(gtk_widget_get_height(picture)) * scale)
  }

  private func tick() -> Bool {
    guard let player else { return false }
    letGoReplaced()
    let (w, h) = pixelSize
    if w > 0 && h > 0 { player.setTargetSize(width: w, height: h) }
    let clock = gtk_widget_get_frame_clock(picture)
    let (frameTime, interval, presentation) = Self.refreshInfo(clock)
    // Ask for the frame that will be on screen when this refresh is presented (times in µs of CLOCK_MONOTONIC):
    // GDK's prediction where the compositor reports presentation times, else the next refresh, when a buffer swapped
    // now is shown; cairo's pictures are shown as they are painted (see `paintDelayUs`).
    let predictedUs: gint64
    if presentation > 0 {
      predictedUs = presentation
    } else if drawsWithCairo {
      measurePaints(on: clock)
      predictedUs = frameTime + gint64(paintDelayUs)
    } else {
      predictedUs = frameTime + interval
    }
    let refreshNs = UInt64(interval) * 1000
    switch player.frameToShow(presentationTime: UInt64(max(0, predictedUs)) * 1000, refreshInterval: refreshNs) {
    case .show(let picture):
      show(picture, player: player)
      idleRefreshes = 0
    case .keep: idleRefreshes = player.isPaused || !player.hasVideo ? idleRefreshes + 1 : 0
    case .ended:
      tickID = 0
      onEnded?()
      return false
    }
    onTick?()
    // Every picture replaced is let go first: that takes a frame rendered without it.
    if idleRefreshes >= Self.refreshesBeforeRest && replaced.isEmpty {
      beginRest(player)
      return false
    }
    return true
  }

  /// `clock`'s current frame time, its refresh interval (60 Hz where GDK knows none) and the presentation time GDK
  /// predicts for the frame (0 where it has none), in µs of CLOCK_MONOTONIC.
  private static func refreshInfo(_ clock: OpaquePointer?) -> (
    frameTime: gint64, interval: gint64, presentation: gint64
  ) {
    let frameTime = gdk_frame_clock_get_frame_time(clock)
    var interval: gint64 = 0
    var presentation: gint64 = 0
    gdk_frame_clock_get_refresh_info(clock, frameTime, &interval, &presentation)
    return (frameTime, interval > 0 ? interval : 16_667, presentation)
  }

  /// Measures, from now on, how long `clock`'s frames take to paint a new picture (cairo mode).
  private func measurePaints(on clock: OpaquePointer?) {
    guard let clock, clock != paintClock else { return }
    paintClock = clock
    Signals.plain(UnsafeMutableRawPointer(clock), "after-paint") { [weak self] in
      guard let self, self.newPicturePainted, let clock = self.paintClock else { return }
      self.newPicturePainted = false
      let (frameTime, interval, _) = Self.refreshInfo(clock)
      let painted = g_get_monotonic_time()
      self.player?.picturePainted(at: UInt64(max(0, painted)) * 1000)
      let took = min(max(0, Double(painted - frameTime)), Double(interval))
      self.paintDelayUs += min(max((took - self.paintDelayUs) / 8, -1000), 1000)
    }
  }

  private func show(_ picture: ShownPicture, player: Player) {
    if drawsWithCairo {
      newPicturePainted = true
      return hold(picture, player: player)
    }
    let slot = picture.slot
    let w = Int32(slot.target.width)
    let h = Int32(slot.target.height)
    let texture: OpaquePointer?
    if player.presentation == .zeroCopy, let context = glContext, glTexture(for: slot, context: context) == nil {
      // GL refused the memory after all: say so once, and let the player draw copies from now on.
      FileHandle.standardError.write(Data("orb-player: GL import failed; presentation: memory copies\n".utf8))
      player.release(picture)
      player.usePresentation(.memory)
      return
    }
    if player.presentation == .zeroCopy, let context = glContext, let name = glTexture(for: slot, context: context) {
      let release = Unmanaged.passRetained(SlotRelease(player: player, picture: picture)).toOpaque()
      texture = gdk_gl_texture_new(
        context, name, w, h,
        { data in
          calledFromC()
          let box = Unmanaged<SlotRelease>.fromOpaque(data!).takeRetainedValue()
          box.player.release(box.picture)
        }, release)
    } else if let pixels = slot.target.pixels {
      // The texture borrows the slot's memory, without a copy: the slot goes back to the render thread when GTK
      // lets go of the texture (as with the GL import).
      let release = Unmanaged.passRetained(SlotRelease(player: player, picture: picture)).toOpaque()
      let bytes = g_bytes_new_with_free_func(
        pixels.baseAddress, gsize(pixels.count),
        { data in
          calledFromC()
          let box = Unmanaged<SlotRelease>.fromOpaque(data!).takeRetainedValue()
          box.player.release(box.picture)
        }, release)
      texture = gdk_memory_texture_new(w, h, GDK_MEMORY_R8G8B8A8_PREMULTIPLIED, bytes, gsize(w) * 4)
      g_bytes_unref(bytes)
    } else {
      player.release(picture)
      return
    }
    guard let texture else { return }
    gtk_picture_set_paintable(opaque(self.picture), texture)
    g_object_unref(UnsafeMutableRawPointer(texture))
  }

  /// The GL texture over `slot`'s memory, imported on first use. Imports of slots that are gone are deleted.
  private func glTexture(for slot: VideoSlot, context: OpaquePointer) -> GLuint? {
    if let known = imported[slot.id] { return known.texture }
    gdk_gl_context_make_current(context)
    for (id, entry) in imported where entry.slot.value == nil {
      orb_gl_delete_import(entry.texture, entry.memory)
      imported[id] = nil
    }
    guard let fd = slot.target.exportMemoryFd() else { return nil }
    var memory: GLuint = 0
    var taken: gboolean = 0
    let name = orb_gl_import_rgba8(
      fd, GLuint64(slot.target.allocationSize), Int32(slot.target.width), Int32(slot.target.height), 1, &memory,
      &taken)
    guard name != 0 else {
      if taken == 0 { close(fd) }
      return nil
    }
    imported[slot.id] = (name, memory, Weak(slot))
    return name
  }
}

/// What a GdkGLTexture's destroy notify needs to hand its slot back.
private final class SlotRelease {
  let player: Player
  let picture: ShownPicture
  init(player: Player, picture: ShownPicture) {
    self.player = player
    self.picture = picture
  }
}

final class Weak<T: AnyObject> {
  weak var value: T?
  init(_ value: T) { self.value = value }
}
