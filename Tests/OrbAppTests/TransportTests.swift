import Foundation
import OrbTestSupport
import XCTest

/// The controls over the video, used with the mouse as a person would: a click shows and hides them, the speed
/// button changes how fast playback goes, the close button ends it.
final class TransportTests: XCTestCase {
  /// Whether the controls are on screen: the bar's 60% black over the clip's 0x203040 near its left end.
  private func barShown(_ image: RGBImage) -> Bool {
    let rows = (image.height * 3 / 4..<image.height).filter { image.pixel(x: 24, y: $0).b < 0x30 }
    return rows.count > 20
  }

  private func positions(_ player: BackgroundPlayer) -> [Int] {
    player.events.filter { $0["event"] as? String == "progress" }.compactMap { $0["position_ms"] as? Int }
  }

  func testClickTogglesTheControlsAndTheirButtonsWork() throws {
    try Screen.requireDisplay()
    let title = "transport2-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", try MarkerAppTests.clip(seconds: 20)])
    defer { _ = player.wait(timeout: 1) }
    let w = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    usleep(700_000)
    XCTAssertFalse(barShown(try Screen.grab(title: title)), "the controls start hidden")
    let (cx, cy) = (w.x + w.width / 2, w.y + w.height / 3)
    _ = Tool.run("xdotool", ["mousemove", "\(cx)", "\(cy)"])
    _ = Tool.run("xdotool", ["mousemove", "\(cx + 4)", "\(cy)"])
    usleep(400_000)
    XCTAssertTrue(barShown(try Screen.grab(title: title)), "moving the pointer shows the controls")
    _ = Tool.run("xdotool", ["click", "1"])
    usleep(400_000)
    XCTAssertFalse(barShown(try Screen.grab(title: title)), "a click on the video hides them")
    _ = Tool.run("xdotool", ["click", "1"])
    usleep(400_000)
    let shown = try Screen.grab(title: title)
    Screen.keep(title: title, as: "transport-controls")
    XCTAssertTrue(barShown(shown), "a second click shows them again")
    // The speed button, second in the row of buttons: 1× → 1.25×.
    let barY = w.y + w.height - 35
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + 87)", "\(barY)", "click", "1"])
    let before = positions(player).count
    usleep(2_300_000)
    let after = positions(player).dropFirst(before)
    if let first = after.first, let last = after.last, after.count >= 2 {
      let rate = Double(last - first) / Double(1000 * (after.count - 1))
      XCTAssertEqual(rate, 1.25, accuracy: 0.15, "position per second after the speed button: \(Array(after))")
    } else {
      XCTFail("no progress after the speed button: \(player.stdout)")
    }
    XCTAssertTrue(player.stderr.isEmpty || !player.stderr.contains("error"), player.stderr)
    // Close: the last button.
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width - 42)", "\(barY)"])
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width - 41)", "\(barY)", "click", "1"])
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "user-quit", player.stdout)
  }
}

/// Every control of the bar, worked through the accessible tree as a screen reader works them, changes what the
/// host hears: the state for play/pause, the `settings` event for speed, mute, volume and the two track buttons,
/// a seek for the position slider, and the end for close.
final class TransportControlTests: XCTestCase {
  /// 20 s with two audio tracks and a subtitle track that is not shown until asked for.
  static func clip() throws -> String {
    let srt = try TestMedia.file(
      named: "controls.srt", contents: SubtitleMedia.srt([(0, 20, "A cue for the whole clip")]))
    return try TestMedia.path(
      "controls.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x203040:size=640x360:rate=25:duration=20", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=20", "-f", "lavfi", "-i",
        "sine=frequency=660:sample_rate=48000:duration=20", "-i", srt, "-map", "0:v", "-map", "1:a", "-map", "2:a",
        "-map", "3:s", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-c:s", "srt",
        "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fre", "-disposition:s:0", "0",
      ])
  }

  /// Waits up to 8 s for an event that `matches`, after the first `after` events.
  private func waitFor(_ player: BackgroundPlayer, after: Int, _ matches: ([String: Any]) -> Bool) -> [String: Any]? {
    player.waitForEvent(after: after, timeout: 8, matches)
  }

  private func settings(_ player: BackgroundPlayer, after: Int, _ matches: @escaping ([String: Any]) -> Bool)
    -> [String: Any]?
  {
    waitFor(player, after: after) { $0["event"] as? String == "settings" && matches($0) }
  }

  /// The player on `clip()`, paused, in a window titled after `name`, with `arguments`; once the window is up.
  private func startPaused(_ name: String, _ arguments: [String]) throws -> (
    title: String, player: BackgroundPlayer, pid: Int32, window: (x: Int, y: Int, width: Int, height: Int)
  ) {
    let title = "\(name)-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title] + arguments + ["--paused", try Self.clip()])
    let window = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    return (title, player, player.process.processIdentifier, window)
  }

  /// Moves the pointer over the window `w` (twice: GTK takes only a move for one), which shows the controls.
  static func movePointer(over w: (x: Int, y: Int, width: Int, height: Int)) {
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width / 2)", "\(w.y + w.height / 3)"])
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width / 2 + 5)", "\(w.y + w.height / 3)"])
  }

  /// The wheel over the picture: three notches down make it 15 points quieter, one up 5 louder (as in VLC and mpv;
  /// it did nothing); sideways is a seek of 5 s.
  func testTheWheelOverThePictureSetsTheVolume() throws {
    try Screen.requireDisplay()
    let (title, player, _, w) = try startPaused("wheel", ["--events-fd", "1", "--resume-ms", "1000"])
    defer { _ = player.wait(timeout: 1) }
    usleep(500_000)
    Self.movePointer(over: w)
    _ = Tool.run("xdotool", ["click", "--repeat", "3", "--delay", "50", "5"])
    XCTAssertNotNil(settings(player, after: 0) { $0["volume"] as? Int == 85 }, player.stdout)
    _ = Tool.run("xdotool", ["click", "4"])
    XCTAssertNotNil(settings(player, after: 0) { $0["volume"] as? Int == 90 }, player.stdout)
    _ = Tool.run("xdotool", ["click", "7"])  // right
    XCTAssertNotNil(
      waitFor(player, after: 0) { e in
        e["event"] as? String == "progress" && abs((e["position_ms"] as? Int ?? 0) - 6000) < 50
      }, player.stdout)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  func testEachControlChangesWhatTheHostHears() throws {
    try Screen.requireDisplay()
    try Accessibility.require()
    let (title, player, pid, w) = try startPaused("controls", ["--events-fd", "1"])
    defer { _ = player.wait(timeout: 1) }
    // The first settings: the defaults, the first audio track, subtitles off.
    let first = try XCTUnwrap(settings(player, after: 0) { _ in true }, player.stdout)
    XCTAssertEqual(first["volume"] as? Int, 100)
    XCTAssertEqual(first["muted"] as? Bool, false)
    XCTAssertEqual(first["speed"] as? Double, 1)
    XCTAssertEqual(first["audio_track"] as? Int, 1)
    XCTAssertTrue(first["subtitle_track"] is NSNull, "\(first)")
    XCTAssertEqual(first["fullscreen"] as? Bool, false)
    // The controls show on pointer motion and, paused, stay.
    Self.movePointer(over: w)
    let tree = try Accessibility.wait(pid) { t in t.all.contains { $0.name == "Subtitles" } }
    let names = Set(tree.all.filter { $0.role == "push button" || $0.role == "slider" }.map(\.name))
    XCTAssertEqual(
      names,
      [
        "Play or pause", "Speed", "Audio track", "Subtitles", "Mute", "Fullscreen", "Close", "Position", "Volume",
      ], "the controls a screen reader finds")

    var n = player.events.count
    try Accessibility.click(pid, "Speed")
    XCTAssertNotNil(settings(player, after: n) { $0["speed"] as? Double == 1.25 }, "speed: \(player.stdout)")
    n = player.events.count
    try Accessibility.click(pid, "Mute")
    XCTAssertNotNil(settings(player, after: n) { $0["muted"] as? Bool == true }, "mute: \(player.stdout)")
    n = player.events.count
    try Accessibility.set(pid, slider: "Volume", to: 50)
    let volume = settings(player, after: n) { $0["volume"] as? Int == 50 }
    XCTAssertNotNil(volume, "the volume slider: \(player.stdout)")
    XCTAssertEqual(volume?["muted"] as? Bool, false, "moving the volume unmutes")
    // ♪ and CC open a menu of the tracks, the one playing marked; choosing one plays it.
    n = player.events.count
    try Accessibility.click(pid, "Audio track")
    // (GTK 4.8 names its toggle buttons push buttons, pressed or not.)
    func entries(_ tree: Accessibility.Node) -> [Accessibility.Node] {
      tree.all.filter { $0.role == "push button" && ($0.name == "Off" || $0.name.contains(". ")) }
    }
    let audioMenu = try Accessibility.wait(pid) { t in !entries(t).isEmpty }
    let audioItems = entries(audioMenu)
    XCTAssertEqual(audioItems.map(\.name), ["1. English (AAC mono)", "2. French (AAC mono)"], "\(audioMenu)")
    XCTAssertEqual(audioItems.map(\.checked), [true, false])
    try Accessibility.click(pid, "2. French (AAC mono)", role: "push button")
    XCTAssertNotNil(settings(player, after: n) { $0["audio_track"] as? Int == 2 }, "♪: \(player.stdout)")
    n = player.events.count
    try Accessibility.click(pid, "Subtitles")
    let subtitleMenu = try Accessibility.wait(pid) { t in t.all.contains { $0.name == "Off" } }
    let subtitleItems = entries(subtitleMenu)
    XCTAssertEqual(subtitleItems.map(\.name), ["Off", "1. SRT"], "\(subtitleMenu)")
    XCTAssertEqual(subtitleItems.map(\.checked), [true, false])
    try Accessibility.click(pid, "1. SRT", role: "push button")
    XCTAssertNotNil(settings(player, after: n) { $0["subtitle_track"] as? Int == 1 }, "CC: \(player.stdout)")
    XCTAssertNotNil(
      waitFor(player, after: n) {
        $0["event"] as? String == "cue" && $0["text"] as? String == "A cue for the whole clip"
      },
      "the chosen track's cue: \(player.stdout)")
    // The position slider seeks exactly where it is set; paused, the progress says so.
    n = player.events.count
    try Accessibility.set(pid, slider: "Position", to: 12)
    let moved = waitFor(player, after: n) {
      $0["event"] as? String == "progress" && abs(($0["position_ms"] as? Int ?? 0) - 12000) <= 40
    }
    XCTAssertNotNil(moved, "the position slider: \(player.stdout)")
    n = player.events.count
    try Accessibility.click(pid, "Play or pause")
    XCTAssertNotNil(
      waitFor(player, after: n) { $0["event"] as? String == "state" && $0["state"] as? String == "playing" },
      "play: \(player.stdout)")
    n = player.events.count
    try Accessibility.click(pid, "Play or pause")
    XCTAssertNotNil(
      waitFor(player, after: n) { $0["event"] as? String == "state" && $0["state"] as? String == "paused" },
      "pause: \(player.stdout)")
    try Accessibility.click(pid, "Close")
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "user-quit", player.stdout)
    XCTAssertGreaterThan(ended?["position_ms"] as? Int ?? 0, 11900, "the end's position is after the seek")
  }

  /// The window closed by the window manager while a track menu is open (its popover held by the button): a quit
  /// like any other, without a complaint from GTK (run with fatal criticals, a widget used after it was freed ends
  /// the process).
  func testClosingTheWindowWithATrackMenuOpenIsAQuit() throws {
    try Screen.requireDisplay()
    try Accessibility.require()
    let manager = try WindowManager()
    defer { manager.stop() }
    let (title, player, pid, w) = try startPaused("menu-close", ["--events-fd", "1"])
    defer { _ = player.wait(timeout: 1) }
    Self.movePointer(over: w)
    try Accessibility.wait(pid) { t in t.all.contains { $0.name == "Audio track" } }
    try Accessibility.click(pid, "Audio track")
    let menu = try Accessibility.wait(pid) { t in t.all.contains { $0.name.hasPrefix("2. ") } }
    XCTAssertTrue(menu.all.contains { $0.name.hasPrefix("2. ") }, "no menu: \(menu)")
    XCTAssertTrue(Screen.closeThroughWindowManager(title: title))
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    XCTAssertEqual(Orb.toolkitComplaints(player.stderr), [])
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "user-quit", player.stdout)
  }

  /// The fullscreen button fills the screen (with a window manager to grant it) and the host hears it; a second
  /// click gives the window back its size.
  func testTheFullscreenButtonFillsTheScreen() throws {
    try Screen.requireDisplay()
    try Accessibility.require()
    let manager = try WindowManager()
    defer { manager.stop() }
    let title = "fullscreen-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(
      ["--title", title, "--events-fd", "1", "--paused", try MarkerAppTests.clip(seconds: 20)])
    defer { _ = player.wait(timeout: 1) }
    let pid = player.process.processIdentifier
    let w = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(settings(player, after: 0) { $0["fullscreen"] as? Bool == false }, player.stdout)
    Self.movePointer(over: w)
    try Accessibility.wait(pid) { t in t.all.contains { $0.name == "Fullscreen" } }
    var n = player.events.count
    try Accessibility.click(pid, "Fullscreen")
    XCTAssertNotNil(settings(player, after: n) { $0["fullscreen"] as? Bool == true }, player.stdout)
    let full = try XCTUnwrap(Screen.geometry(title: title))
    XCTAssertEqual([full.width, full.height], [1920, 1080], "the whole Xvfb screen")
    n = player.events.count
    _ = Tool.run("xdotool", ["mousemove", "960", "500"])
    _ = Tool.run("xdotool", ["mousemove", "965", "500"])
    try Accessibility.wait(pid) { t in t.all.contains { $0.name == "Fullscreen" } }
    try Accessibility.click(pid, "Fullscreen")
    XCTAssertNotNil(settings(player, after: n) { $0["fullscreen"] as? Bool == false }, player.stdout)
    let back = try XCTUnwrap(Screen.geometry(title: title))
    XCTAssertEqual([back.width, back.height], [w.width, w.height], "the window's own size again")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  /// While playing, the controls hide about 3 s after the pointer last moved. Tab brings them back with play/pause
  /// focused, moves along them, Space works the focused one (instead of pausing), and they stay up while one has the
  /// keyboard.
  func testTheControlsHideOnTimeAndTheKeyboardReachesThem() throws {
    try Screen.requireDisplay()
    try Accessibility.require()
    let title = "keyboard-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", try MarkerAppTests.clip(seconds: 30)])
    defer { _ = player.wait(timeout: 1) }
    let pid = player.process.processIdentifier
    let w = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    let shown = { (tree: Accessibility.Node) in tree.all.contains { $0.name == "Play or pause" } }
    let focused = { (tree: Accessibility.Node) in tree.all.first { $0.focused && $0.role == "push button" }?.name }
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width / 2)", "\(w.y + w.height / 3)"])
    _ = Tool.run("xdotool", ["mousemove", "\(w.x + w.width / 2 + 5)", "\(w.y + w.height / 3)"])
    let moved = Date()
    XCTAssertTrue(shown(try Accessibility.wait(pid, until: shown)), "the pointer's motion shows the controls")
    let hidden = try Accessibility.wait(pid, timeout: 8) { !shown($0) }
    let after = Date().timeIntervalSince(moved)
    XCTAssertFalse(shown(hidden), "the controls stayed up while playing")
    XCTAssertGreaterThan(after, 2.5, "they hid \(after) s after the pointer stopped, not about 3 s")
    XCTAssertLessThan(after, 6, "they hid only \(after) s after the pointer stopped")

    Screen.press("Tab", title: title)
    let first = try Accessibility.wait(pid) { focused($0) == "Play or pause" }
    XCTAssertEqual(focused(first), "Play or pause", "Tab shows the controls with the first one focused")
    Screen.press("Tab", title: title)
    let second = try Accessibility.wait(pid) { focused($0) == "Speed" }
    XCTAssertEqual(focused(second), "Speed", "a second Tab moves to the speed button")
    let n = player.events.count
    Screen.press("space", title: title)
    XCTAssertNotNil(settings(player, after: n) { $0["speed"] as? Double == 1.25 }, "Space on Speed: \(player.stdout)")
    usleep(4_500_000)
    XCTAssertTrue(shown(try Accessibility.tree(pid)), "the controls hid while one had the keyboard")
    XCTAssertFalse(
      player.events.dropFirst(n).contains { $0["event"] as? String == "state" && $0["state"] as? String == "paused" },
      "Space on a focused button paused instead: \(player.stdout)")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  /// In a small window (200x150, a corner of the screen) the controls fit it: the volume slider, the speed and the
  /// track buttons (each has its key) are left out, and fullscreen and close stay (the bar ran past the window's
  /// edge, and they were gone).
  func testInASmallWindowTheControlsThatMatterStay() throws {
    try Screen.requireDisplay()
    try Accessibility.require()
    let (title, player, pid, w) = try startPaused("small", ["--geometry", "200x150"])
    defer { _ = player.wait(timeout: 1) }
    usleep(500_000)
    Self.movePointer(over: w)
    let tree = try Accessibility.wait(pid) { t in t.all.contains { $0.name == "Close" } }
    let names = Set(tree.all.filter { $0.role == "push button" || $0.role == "slider" }.map(\.name))
    XCTAssertEqual(names, ["Play or pause", "Mute", "Fullscreen", "Close", "Position"], "\(names)")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }
}
