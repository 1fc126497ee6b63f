import Foundation
import OrbTestSupport
import XCTest

/// Runs the built `orb-player` binary.
enum Orb {
  static func run(_ arguments: [String], timeout: Double = 60) -> ToolResult {
    Tool.run(OrbBinary.path, arguments, timeout: timeout)
  }

  /// The JSON event lines in `output` (what `--events-fd` wrote), in order; other lines are skipped.
  static func events(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  /// Calls the MPRIS object of the player with process id `pid` on the session bus with gdbus; its output.
  static func gdbus(_ pid: Int32, _ arguments: [String]) -> String {
    let r = Tool.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.mpris.MediaPlayer2.orbplayer.instance\(pid)", "--object-path",
        "/org/mpris/MediaPlayer2",
      ] + arguments, timeout: 20)
    return r.stdout + r.stderr
  }

  /// GLib's and GTK's warnings and criticals in standard error: a widget used after it was freed, a failed
  /// assertion in GTK.
  static func toolkitComplaints(_ stderr: String) -> [String] {
    stderr.split(separator: "\n").map(String.init).filter { $0.contains("-CRITICAL **") || $0.contains("-WARNING **") }
  }

  /// The lines of standard error that are errors (the player also logs, e.g., its presentation path).
  static func errorLines(_ result: ToolResult) -> [String] {
    result.stderr.split(separator: "\n").map(String.init).filter { $0.contains("cannot") }
  }
}

/// A window under the test session's X server (Xvfb): find it by title, grab it as a picture.
enum Screen {
  /// Fails the test unless a display is there; outside CI a missing display skips.
  static func requireDisplay() throws {
    try Requirement.require(ProcessInfo.processInfo.environment["DISPLAY"] != nil, "no DISPLAY (Xvfb)")
  }

  /// The window's position and size on the root window, or nil while it is not mapped.
  static func geometry(title: String) -> (x: Int, y: Int, width: Int, height: Int)? {
    let result = Tool.run("xwininfo", ["-name", title], timeout: 10)
    guard result.succeeded else { return nil }
    func value(_ key: String) -> Int? {
      result.stdout.split(separator: "\n").first { $0.contains(key) }
        .flatMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
    }
    guard let x = value("Absolute upper-left X"), let y = value("Absolute upper-left Y"), let w = value("Width"),
      let h = value("Height"), result.stdout.contains("IsViewable")
    else { return nil }
    return (x, y, w, h)
  }

  /// Waits for the window to be mapped.
  static func waitForWindow(title: String, timeout: Double = 20) -> (x: Int, y: Int, width: Int, height: Int)? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
      if let g = geometry(title: title) { return g }
      usleep(200_000)
    }
    return nil
  }

  /// A screenshot of the window's area.
  static func grab(title: String) throws -> RGBImage {
    let path = NSTemporaryDirectory() + "orb-shot-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try capture(title: title, to: path)
    return try RGBImage(png: path)
  }

  /// A screenshot of a window that has stopped changing (a paused picture once the controls and labels have moved
  /// into place): grabs until two in a row are the same, at most `tries` times; the last one.
  static func grabSettled(title: String, tries: Int = 8) throws -> RGBImage {
    var last = try grab(title: title)
    for _ in 1..<tries {
      usleep(150_000)
      let next = try grab(title: title)
      if next.bytes == last.bytes { return next }
      last = next
    }
    return last
  }

  /// The X window id of the window titled exactly `title`.
  static func windowID(_ title: String) -> String {
    Tool.run("xdotool", ["search", "--name", "^\(title)$"]).stdout.split(separator: "\n").first.map(String.init) ?? ""
  }

  /// Each key after its pause (seconds), in order: what a person types at a window, waiting to see each answer.
  static func type(_ keys: [(pause: Double, key: String)], title: String) {
    for (pause, key) in keys {
      usleep(UInt32(pause * 1_000_000))
      press(key, title: title)
    }
  }

  /// Focuses the window and types `key` (an xdotool key name) into it.
  static func press(_ key: String, title: String) { press(key, times: 1, title: title) }

  /// `key` pressed `times` times, `gapMs` apart (a held key repeats every 30-50 ms).
  static func press(_ key: String, times: Int, gapMs: Int = 30, title: String) {
    let id = windowID(title)
    _ = Tool.run("xdotool", ["windowfocus", "--sync", id])
    _ = Tool.run("xdotool", ["key", "--window", id, "--delay", "\(gapMs)"] + Array(repeating: key, count: times))
  }

  /// Asks the window manager to close the window, as its title bar's close button or a taskbar does (wmctrl -c): a
  /// `_NET_CLOSE_WINDOW` message to the root window, which the window manager (`WindowManager`) turns into
  /// WM_DELETE_WINDOW for the window. Sent with libX11 through python3's ctypes; false when it could not be sent.
  @discardableResult
  static func closeThroughWindowManager(title: String) -> Bool {
    let script = #"""
      import ctypes, sys
      x = ctypes.CDLL("libX11.so.6")
      x.XOpenDisplay.restype = ctypes.c_void_p
      x.XOpenDisplay.argtypes = [ctypes.c_char_p]
      x.XInternAtom.restype = ctypes.c_ulong
      x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
      x.XDefaultRootWindow.restype = ctypes.c_ulong
      x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
      x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
      x.XFlush.argtypes = x.XCloseDisplay.argtypes = [ctypes.c_void_p]
      class ClientMessage(ctypes.Structure):
          _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                      ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                      ("format", ctypes.c_int), ("data", ctypes.c_long * 5)]
      class Event(ctypes.Union):
          _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]
      d = x.XOpenDisplay(None)
      if not d: sys.exit("no display")
      e = Event()
      e.xclient.type = 33  # ClientMessage
      e.xclient.window = int(sys.argv[1])
      e.xclient.message_type = x.XInternAtom(d, b"_NET_CLOSE_WINDOW", 0)
      e.xclient.format = 32
      e.xclient.data[0] = 0  # CurrentTime
      e.xclient.data[1] = 2  # from a pager or taskbar, as wmctrl says
      mask = (1 << 19) | (1 << 20)  # SubstructureNotify | SubstructureRedirect
      if not x.XSendEvent(d, x.XDefaultRootWindow(d), 0, mask, ctypes.byref(e)): sys.exit("XSendEvent failed")
      x.XFlush(d)
      x.XCloseDisplay(d)
      """#
    let id = windowID(title)
    guard !id.isEmpty else { return false }
    return Tool.run("/usr/bin/python3", ["-c", script, id], timeout: 20).succeeded
  }

  /// Keeps a copy of a screenshot for people to look at when `ORB_SCREENSHOT_DIR` is set.
  static func keep(title: String, as name: String) {
    guard let dir = ProcessInfo.processInfo.environment["ORB_SCREENSHOT_DIR"] else { return }
    try? capture(title: title, to: "\(dir)/\(name).png")
  }

  /// Writes the window's area, as the X server shows it, to a PNG at `path`.
  private static func capture(title: String, to path: String) throws {
    guard let g = geometry(title: title) else { throw TestMediaError("window '\(title)' is not on screen") }
    let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ":0"
    let result = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-y", "-f", "x11grab", "-video_size", "\(g.width)x\(g.height)", "-i",
        "\(display)+\(g.x),\(g.y)", "-frames:v", "1", path,
      ], timeout: 30)
    guard result.succeeded else { throw TestMediaError("screenshot failed: \(result.stderr)") }
  }
}

/// A window manager on the test display for the length of one test (Openbox): the suite runs without one, as
/// GTK's own windows do not need it, but fullscreen is something the window manager grants.
final class WindowManager {
  private let process = Child()

  /// Starts Openbox and waits until it manages the screen (it owns the WM_S0 selection); fails the test (skips
  /// outside CI) when it is not installed.
  init() throws {
    let found = Tool.run("sh", ["-c", "command -v openbox"]).succeeded
    try Requirement.require(found, "openbox is not installed (scripts/setup.sh installs it)")
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openbox", "--sm-disable"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let deadline = Date(timeIntervalSinceNow: 10)
    while Date() < deadline {
      if Tool.run("xprop", ["-root", "_NET_SUPPORTING_WM_CHECK"]).stdout.contains("window id") { return }
      usleep(100_000)
    }
    throw TestMediaError("openbox did not start managing the display within 10 s")
  }

  /// Stops it; the windows it managed stay where they are.
  func stop() {
    guard process.isRunning else { return }
    process.terminate()
    process.waitUntilExit()
  }

  deinit { stop() }
}

/// A player process started in the background, its output collected.
final class BackgroundPlayer: @unchecked Sendable {
  let process = Child()
  private let out = Pipe()
  private let err = Pipe()
  private var outData = Data()
  private var errData = Data()
  private let lock = NSLock()

  /// - Parameters:
  ///   - environment: variables set for the player on top of the test's own.
  ///   - input: its standard input: /dev/null unless a test gives it something to read (`-`), never the test's own.
  init(_ arguments: [String], environment: [String: String] = [:], input: Any = FileHandle.nullDevice) throws {
    process.executableURL = URL(fileURLWithPath: OrbBinary.path)
    process.arguments = arguments
    process.standardInput = input
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    process.standardOutput = out
    process.standardError = err
    out.fileHandleForReading.readabilityHandler = { [weak self] h in
      let d = h.availableData
      self?.lock.withLock { self?.outData.append(d) }
    }
    err.fileHandleForReading.readabilityHandler = { [weak self] h in
      let d = h.availableData
      self?.lock.withLock { self?.errData.append(d) }
    }
    try process.run()
  }

  var stdout: String { lock.withLock { String(decoding: outData, as: UTF8.self) } }
  var stderr: String { lock.withLock { String(decoding: errData, as: UTF8.self) } }

  /// Waits for exit; kills the process after `timeout` seconds. Returns the exit status, nil when killed.
  func wait(timeout: Double) -> Int32? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while process.isRunning && Date() < deadline { usleep(50_000) }
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
      return nil
    }
    process.waitUntilExit()
    usleep(100_000)  // let the pipe handlers drain
    return process.terminationStatus
  }

  /// The JSON event lines written so far to stdout (`--events-fd 1`).
  var events: [[String: Any]] { Orb.events(stdout) }

  /// The paths the `screenshot` events gave, in order.
  var screenshots: [String] {
    events.filter { $0["event"] as? String == "screenshot" }.compactMap { $0["path"] as? String }
  }

  /// A player with its window titled `title` (`--title`, and events on stdout), once the window is there.
  static func window(
    _ args: [String], title: String, environment: [String: String] = [:], input: Any = FileHandle.nullDevice
  ) throws -> BackgroundPlayer {
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(
      ["--title", title, "--events-fd", "1"] + args, environment: environment, input: input)
    guard Screen.waitForWindow(title: title) != nil else {
      _ = player.wait(timeout: 1)
      throw TestMediaError("the window never appeared: \(player.stderr)")
    }
    return player
  }

  /// A home folder of the test's own (screenshots land in its Pictures), removed when the test ends: the
  /// environment that points the player at it.
  static func temporaryHome(for test: XCTestCase) throws -> [String: String] {
    let home = NSTemporaryDirectory() + "orb-home-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: home) }
    return ["HOME": home, "XDG_CONFIG_HOME": "\(home)/.config"]
  }

  /// Waits up to `timeout` seconds for an event that `matches`, among those after the first `after`; the first one.
  func waitForEvent(after: Int = 0, timeout: Double = 10, _ matches: ([String: Any]) -> Bool) -> [String: Any]? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    repeat {
      if let found = events.dropFirst(after).first(where: matches) { return found }
      usleep(50_000)
    } while Date() < deadline
    return nil
  }

  deinit {
    if process.isRunning { process.terminate() }
  }
}
