import CGtk
import Foundation

// The one door from C into the app's main-actor code. The app's code is main-actor isolated (OrbApp's default
// isolation), so the compiler checks that nothing of the window is touched off the main thread. GLib calls us back
// on its main context, which runs on the main thread but not as a drain of the main dispatch queue: each trampoline
// here is `nonisolated` (C cannot call isolated code) and enters the app through `onMain`, which checks at run time
// that it is the main thread (a trap that names the cause, never a silent race) and then lets the compiler treat the
// body as isolated.

/// Runs `body` as main-actor code; for C callbacks that GLib makes on the main context. Traps off the main thread.
nonisolated func onMain<T: Sendable>(_ body: @MainActor () -> T) -> T {
  MainActor.assumeIsolated { body() }
}

/// The first statement of every C callback written as a closure literal in this module. The compiler takes such a
/// closure to be main-actor code, as the code around it is, and checks nothing when C calls it (seen with Swift
/// 6.3: called from another thread, it runs there): this check traps instead.
nonisolated func calledFromC() {
  MainActor.preconditionIsolated("GLib called the app back off the main thread")
}

/// A Swift closure carried through a `gpointer`, released by GLib's destroy notify.
nonisolated final class ClosureBox: Sendable {
  let run: @MainActor () -> Bool
  init(_ run: @escaping @MainActor () -> Bool) { self.run = run }
}

nonisolated private func sourceTrampoline(_ data: gpointer?) -> gboolean {
  let box = Unmanaged<ClosureBox>.fromOpaque(data!).takeUnretainedValue()
  return onMain { box.run() } ? 1 : 0
}

nonisolated private func releaseBox(_ data: gpointer?) {
  Unmanaged<ClosureBox>.fromOpaque(data!).release()
}

enum MainLoop {
  /// Runs `body` once on the GTK main thread, soon. Callable from any thread.
  nonisolated static func post(_ body: @escaping @Sendable @MainActor () -> Void) {
    let box = ClosureBox {
      body()
      return false
    }
    g_idle_add_full(G_PRIORITY_DEFAULT, sourceTrampoline, Unmanaged.passRetained(box).toOpaque(), releaseBox)
  }

  /// Calls `body` every `milliseconds` on the main thread while it returns true.
  @discardableResult
  static func every(milliseconds: UInt32, _ body: @escaping @MainActor () -> Bool) -> guint {
    let box = ClosureBox(body)
    return g_timeout_add_full(
      G_PRIORITY_DEFAULT, milliseconds, sourceTrampoline, Unmanaged.passRetained(box).toOpaque(), releaseBox)
  }

  /// Calls `body` once after `milliseconds` on the main thread.
  static func after(milliseconds: UInt32, _ body: @escaping @MainActor () -> Void) {
    every(milliseconds: milliseconds) {
      body()
      return false
    }
  }
}

/// Signal handlers: each signal shape has one trampoline that finds its Swift closure in the user data.
nonisolated final class SignalBox<Handler: Sendable>: Sendable {
  let handler: Handler
  init(_ handler: Handler) { self.handler = handler }
}

nonisolated private func releaseSignalBox(_ data: gpointer?, _ closure: UnsafeMutablePointer<GClosure>?) {
  Unmanaged<AnyObject>.fromOpaque(data!).release()
}

enum Signals {
  /// A drawing area's draw function: cairo's context for this one draw, and the area's width and height.
  typealias Draw = @MainActor (_ cairo: OpaquePointer, _ width: Int32, _ height: Int32) -> Void

  /// Sets `area`'s draw function (`gtk_drawing_area_set_draw_func`) to `handler`, held until the area lets it go.
  static func draw(_ area: UnsafeMutablePointer<GtkWidget>, _ handler: @escaping Draw) {
    let box = Unmanaged.passRetained(SignalBox<Draw>(handler))
    let fn: GtkDrawingAreaDrawFunc = { _, cr, width, height, data in
      guard let cr else { return }
      let box = Unmanaged<SignalBox<Draw>>.fromOpaque(data!).takeUnretainedValue()
      // cairo's context for this one draw: GTK made it on this (the main) thread and keeps no other user of it.
      nonisolated(unsafe) let context = cr
      onMain { box.handler(context, width, height) }
    }
    gtk_drawing_area_set_draw_func(cast(raw(area)), fn, box.toOpaque()) { data in
      Unmanaged<SignalBox<Draw>>.fromOpaque(data!).release()
    }
  }

  typealias Plain = @MainActor () -> Void
  typealias Bool0 = @MainActor () -> Bool
  typealias Key = @MainActor (_ keyval: guint, _ state: GdkModifierType) -> Bool
  typealias Press = @MainActor (_ count: Int32) -> Void

  private static func connect(
    _ instance: UnsafeMutableRawPointer, _ signal: String, _ callback: GCallback,
    _ box: AnyObject
  ) {
    orb_signal_connect(
      instance, signal, callback, Unmanaged.passRetained(box).toOpaque(), releaseSignalBox)
  }

  /// Signals of shape `void (*)(GObject *, gpointer)`: "activate", "realize", "unrealize", …
  static func plain(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping Plain) {
    let fn: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
      let box = Unmanaged<SignalBox<Plain>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler() }
    }
    connect(instance, signal, unsafeBitCast(fn, to: GCallback.self), SignalBox<Plain>(handler))
  }

  /// Signals of shape `gboolean (*)(GObject *, gpointer)`: "close-request".
  static func returningBool(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping Bool0) {
    let fn: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, data in
      let box = Unmanaged<SignalBox<Bool0>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler() } ? 1 : 0
    }
    connect(instance, signal, unsafeBitCast(fn, to: GCallback.self), SignalBox<Bool0>(handler))
  }

  /// GtkEventControllerKey "key-pressed".
  static func keyPressed(_ controller: UnsafeMutableRawPointer, _ handler: @escaping Key) {
    let fn: @convention(c) (gpointer?, guint, guint, GdkModifierType, gpointer?) -> gboolean = {
      _, keyval, _, state, data in
      let box = Unmanaged<SignalBox<Key>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler(keyval, state) } ? 1 : 0
    }
    connect(controller, "key-pressed", unsafeBitCast(fn, to: GCallback.self), SignalBox<Key>(handler))
  }

  typealias Motion = @MainActor (_ x: Double, _ y: Double) -> Void
  /// `jump`: the pointer put the slider there (a click or a drag), not a key.
  typealias RangeChange = @MainActor (_ value: Double, _ jump: Bool) -> Bool

  /// GtkEventControllerMotion "motion", with the pointer's place in the widget.
  static func motion(_ controller: UnsafeMutableRawPointer, _ handler: @escaping Motion) {
    let fn: @convention(c) (gpointer?, Double, Double, gpointer?) -> Void = { _, x, y, data in
      let box = Unmanaged<SignalBox<Motion>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler(x, y) }
    }
    connect(controller, "motion", unsafeBitCast(fn, to: GCallback.self), SignalBox<Motion>(handler))
  }

  typealias Scroll = @MainActor (_ dx: Double, _ dy: Double) -> Bool

  /// GtkEventControllerScroll "scroll", with the steps of the wheel (or the distance of a touchpad's swipe).
  static func scroll(_ controller: UnsafeMutableRawPointer, _ handler: @escaping Scroll) {
    let fn: @convention(c) (gpointer?, Double, Double, gpointer?) -> gboolean = { _, dx, dy, data in
      let box = Unmanaged<SignalBox<Scroll>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler(dx, dy) } ? 1 : 0
    }
    connect(controller, "scroll", unsafeBitCast(fn, to: GCallback.self), SignalBox<Scroll>(handler))
  }

  typealias Response = @MainActor (_ response: Int32) -> Void

  /// GtkNativeDialog "response".
  static func response(_ dialog: UnsafeMutableRawPointer, _ handler: @escaping Response) {
    let fn: @convention(c) (gpointer?, Int32, gpointer?) -> Void = { _, response, data in
      let box = Unmanaged<SignalBox<Response>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler(response) }
    }
    connect(dialog, "response", unsafeBitCast(fn, to: GCallback.self), SignalBox<Response>(handler))
  }

  typealias Drop = @MainActor (_ uris: [String]) -> Void

  /// Files dropped on a drop target (`orb_file_drop_target`): `handler` gets their URIs.
  static func dropFiles(_ target: UnsafeMutableRawPointer, _ handler: @escaping Drop) {
    let fn: @convention(c) (gpointer?, gconstpointer?, Double, Double, gpointer?) -> Void = {
      _, value, _, _, data in
      let box = Unmanaged<SignalBox<Drop>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler(Signals.uris(value)) }
    }
    connect(target, "drop", unsafeBitCast(fn, to: GCallback.self), SignalBox<Drop>(handler))
  }

  /// What a drop carries (a GValue of a file or a file list), as URIs.
  private static func uris(_ value: UnsafeRawPointer?) -> [String] { takeStrings(orb_dropped_uris(value)) }

  /// The strings of a NULL-terminated C array that is ours to free (g_strfreev), freed.
  static func takeStrings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
    guard let list else { return [] }
    let out = strings(list)
    g_strfreev(list)
    return out
  }

  /// The strings of a NULL-terminated C array.
  static func strings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>) -> [String] {
    var out: [String] = []
    var i = 0
    while let s = list[i] {
      out.append(String(cString: s))
      i += 1
    }
    return out
  }

  /// GtkRange "change-value": the user moved the slider to `value`; return true to keep GTK from moving it itself.
  static func rangeChange(_ range: UnsafeMutableRawPointer, _ handler: @escaping RangeChange) {
    let fn: @convention(c) (gpointer?, GtkScrollType, Double, gpointer?) -> gboolean = { _, scroll, value, data in
      let box = Unmanaged<SignalBox<RangeChange>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler(value, scroll == GTK_SCROLL_JUMP) } ? 1 : 0
    }
    connect(range, "change-value", unsafeBitCast(fn, to: GCallback.self), SignalBox<RangeChange>(handler))
  }

  /// GtkGestureClick "pressed".
  static func pressed(_ gesture: UnsafeMutableRawPointer, _ handler: @escaping Press) {
    let fn: @convention(c) (gpointer?, Int32, Double, Double, gpointer?) -> Void = { _, count, _, _, data in
      let box = Unmanaged<SignalBox<Press>>.fromOpaque(data!).takeUnretainedValue()
      return onMain { box.handler(count) }
    }
    connect(gesture, "pressed", unsafeBitCast(fn, to: GCallback.self), SignalBox<Press>(handler))
  }
}

/// Casts between GTK's pointer types (the GTK_WINDOW(…) macros Swift cannot import).
@inline(__always)
func cast<T>(_ p: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<T> {
  p!.assumingMemoryBound(to: T.self)
}

@inline(__always)
func raw<T>(_ p: UnsafeMutablePointer<T>?) -> UnsafeMutableRawPointer {
  UnsafeMutableRawPointer(p!)
}

/// A GTK object pointer as the OpaquePointer Swift imports final GTK types as (GtkPicture, GdkTexture, …).
@inline(__always)
func opaque<T>(_ p: UnsafeMutablePointer<T>?) -> OpaquePointer {
  OpaquePointer(p!)
}

@inline(__always)
func raw(_ p: OpaquePointer?) -> UnsafeMutableRawPointer {
  UnsafeMutableRawPointer(p!)
}
