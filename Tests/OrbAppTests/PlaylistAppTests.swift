import Foundation
import OrbTestSupport
import XCTest

/// Several files on the command line play in order in one window, as the family's other players do: an entry that
/// cannot be played is skipped with its error, three in a row stop, and `>`/`<` move between them. Started with
/// nothing, the window welcomes.
final class PlaylistAppTests: XCTestCase {
  private func files(_ player: BackgroundPlayer) -> [[String: Any]] {
    player.events.filter { $0["event"] as? String == "file" }
  }

  func testEntriesPlayInOrderAndOneThatCannotPlayIsSkipped() throws {
    try Screen.requireDisplay()
    let a = try Clips.moving(seconds: 3)
    let b = try MarkerAppTests.clip(seconds: 3)
    let player = try BackgroundPlayer(["--events-fd", "1", "/nowhere/missing.mkv", a, b])
    XCTAssertEqual(player.wait(timeout: 40), 0, player.stderr)
    let entries = files(player)
    XCTAssertEqual(entries.compactMap { $0["index"] as? Int }, [0, 1, 2], player.stdout)
    XCTAssertEqual(entries.compactMap { $0["count"] as? Int }, [3, 3, 3])
    XCTAssertEqual(entries.last?["title"] as? String, (b as NSString).lastPathComponent)
    let errors = player.events.filter { $0["event"] as? String == "error" }
    XCTAssertEqual(errors.count, 1, player.stdout)
    XCTAssertEqual(errors.first?["kind"] as? String, "missing")
    let ended = player.events.filter { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended.count, 1, "one end, after the last entry: \(player.stdout)")
    XCTAssertEqual(ended.first?["reason"] as? String, "eof")
    // The last entry's first picture is timed from when it started, not from the launch, 3 s of playing before.
    let first = try XCTUnwrap((ended.first?["stats"] as? [String: Any])?["first_frame_ms"] as? Int, player.stdout)
    XCTAssertLessThan(first, 1500, "timed from the launch? \(player.stdout)")
  }

  func testThreeFailuresInARowStop() throws {
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(
      [
        "--events-fd", "1", "--error-linger-ms", "0", "/nowhere/1.mkv", "/nowhere/2.mkv", "/nowhere/3.mkv",
        try Clips.moving(seconds: 3),
      ])
    XCTAssertEqual(player.wait(timeout: 30), 1, player.stderr)
    XCTAssertEqual(player.events.filter { $0["event"] as? String == "error" }.count, 3, player.stdout)
    XCTAssertEqual(files(player).compactMap { $0["index"] as? Int }, [0, 1, 2], "the fourth never started")
  }

  /// What the viewer set while watching (volume, mute, speed, audio delay) goes on to the next entry, as in mpv, VLC
  /// and Celluloid: the next file was loud again after a mute.
  func testTheViewersSoundAndSpeedGoOnToTheNextEntry() throws {
    try Screen.requireDisplay()
    let title = "carry-\(UUID().uuidString.prefix(6))"
    let clip = try AudioAppTests.clipWithSound()
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", clip, clip])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(500_000)
    for key in ["9", "9", "m", "bracketright", "ctrl+plus"] {
      Screen.press(key, title: title)
      usleep(150_000)
    }
    Screen.press("greater", title: title)
    XCTAssertNotNil(
      player.waitForEvent { $0["event"] as? String == "file" && $0["index"] as? Int == 1 }, player.stdout)
    let at = player.events.lastIndex { $0["event"] as? String == "file" } ?? 0
    let settings = try XCTUnwrap(
      player.waitForEvent(after: at) { $0["event"] as? String == "settings" },
      "no settings for entry 1: \(player.stdout)")
    XCTAssertEqual(settings["volume"] as? Int, 90, player.stdout)
    XCTAssertEqual(settings["muted"] as? Bool, true, player.stdout)
    XCTAssertEqual(settings["speed"] as? Double, 1.25, player.stdout)
    XCTAssertEqual(settings["audio_delay_ms"] as? Int, 100, player.stdout)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  func testGreaterAndLessMoveBetweenEntries() throws {
    try Screen.requireDisplay()
    let title = "playlist-\(UUID().uuidString.prefix(6))"
    let clip = try MarkerAppTests.clip(seconds: 20)
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", "--resume-ms", "3000", clip, clip])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_000_000)
    Screen.press("greater", title: title)
    // The window says which entry it went to, and where it stands in the list.
    try Accessibility.require()
    let said = try Accessibility.wait(player.process.processIdentifier) { tree in
      tree.all.contains { $0.role == "label" && $0.text == "2/2: \(title)" }
    }
    XCTAssertTrue(
      said.all.contains { $0.role == "label" && $0.text == "2/2: \(title)" },
      "\(said.all.filter { $0.role == "label" }.map(\.text))")
    usleep(1_000_000)
    Screen.press("less", title: title)
    usleep(1_500_000)
    Screen.press("less", title: title)  // at the first: nothing happens
    usleep(500_000)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    XCTAssertEqual(files(player).compactMap { $0["index"] as? Int }, [0, 1, 0], player.stdout)
    let states = player.events.filter { $0["event"] as? String == "state" }
    XCTAssertEqual(states.count, 3, "each entry started playing: \(player.stdout)")
    // The host's resume point is the launch's first opening's: back at the first entry, it starts from the start.
    XCTAssertEqual(states.compactMap { $0["position_ms"] as? Int }, [3000, 0, 0], player.stdout)
  }

  /// A file dragged from another application (a GTK 4 window offering it as a file list, as Files does) and dropped
  /// on the player plays instead of what played, named by itself rather than by the host's title.
  func testAFileDroppedOnTheWindowPlaysInstead() throws {
    let dropped = try Clips.moving(seconds: 3)
    let (player, title) = try playerWithDrop(of: [dropped])
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    let entries = files(player)
    XCTAssertEqual(
      entries.compactMap { $0["title"] as? String }, [title, (dropped as NSString).lastPathComponent], player.stdout)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", "the dropped clip played to its end: \(player.stdout)")
    XCTAssertEqual(ended?["position_ms"] as? Int ?? 0, 3000, accuracy: 100)
  }

  /// A video and a subtitle file chosen together and dropped: the video plays with the subtitles shown. The
  /// subtitle file was a second entry of the playlist, which failed as holding only subtitles.
  func testAVideoDroppedWithASubtitleFilePlaysWithIt() throws {
    let dropped = try Clips.moving(seconds: 3)
    let srt = try TestMedia.file(named: "dropped-with.srt", contents: SubtitleMedia.srt([(0, 3, "Dropped together")]))
    let (player, title) = try playerWithDrop(of: [dropped, srt])
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    XCTAssertEqual(
      files(player).compactMap { $0["title"] as? String }, [title, (dropped as NSString).lastPathComponent],
      player.stdout)
    XCTAssertTrue(
      player.events.contains { $0["event"] as? String == "cue" && $0["text"] as? String == "Dropped together" },
      player.stdout)
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "error" }, player.stdout)
    XCTAssertEqual(player.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "eof")
  }

  /// A player (20 s of a plain clip) onto which `paths` are dragged from another application and dropped, and its
  /// title.
  private func playerWithDrop(of paths: [String]) throws -> (BackgroundPlayer, String) {
    try Screen.requireDisplay()
    let python = "/usr/bin/python3"
    let hasGtk = Tool.run(python, ["-c", "import gi; gi.require_version('Gtk', '4.0')"]).succeeded
    try Requirement.require(hasGtk, "python3-gi's GTK 4 bindings are not installed")
    let source = Child()
    source.executableURL = URL(fileURLWithPath: python)
    source.arguments = ["-c", Self.dragSource] + paths
    source.standardError = FileHandle.nullDevice
    try source.run()
    defer { if source.isRunning { source.terminate() } }
    let title = "drop-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(
      ["--title", title, "--events-fd", "1", "--geometry", "640x360+800+400", try MarkerAppTests.clip(seconds: 20)])
    addTeardownBlock { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(Screen.waitForWindow(title: "orb-drag-source"), "the drag source's window did not show")
    // Press on the source (at the screen's corner, where an unmanaged window maps), move in steps onto the
    // player, release.
    _ = Tool.run("xdotool", ["mousemove", "100", "100", "mousedown", "1"])
    usleep(300_000)
    for x in stride(from: 150, through: 1100, by: 150) {
      _ = Tool.run("xdotool", ["mousemove", "\(x)", "\(min(580, 100 + x / 2))"])
      usleep(120_000)
    }
    usleep(400_000)
    _ = Tool.run("xdotool", ["mouseup", "1"])
    // The drop is taken before the source goes.
    _ = player.waitForEvent {
      $0["event"] as? String == "file" && $0["index"] as? Int == 0 && $0["title"] as? String != title
    }
    return (player, title)
  }

  /// A small GTK 4 window that offers the files in argv[1...] to whatever it is dragged onto.
  private static let dragSource = #"""
    import gi, sys
    gi.require_version('Gtk', '4.0'); gi.require_version('Gdk', '4.0')
    from gi.repository import Gtk, Gdk, Gio, GLib
    app = Gtk.Application(application_id='org.orb.DragSource', flags=Gio.ApplicationFlags.NON_UNIQUE)
    def activate(a):
        window = Gtk.ApplicationWindow(application=a, title='orb-drag-source')
        label = Gtk.Label(label='drag me')
        source = Gtk.DragSource(actions=Gdk.DragAction.COPY)
        def prepare(s, x, y):
            files = Gdk.FileList.new_from_list([Gio.File.new_for_path(p) for p in sys.argv[1:]])
            return Gdk.ContentProvider.new_for_value(files)
        source.connect('prepare', prepare)
        label.add_controller(source)
        window.set_child(label)
        window.set_default_size(200, 200)
        window.present()
    app.connect('activate', activate)
    GLib.timeout_add_seconds(60, app.quit)
    app.run([])
    """#

  /// From the app grid, with no file: a welcome page with an Open button (not a test pattern), and `q` quits.
  func testWithoutAFileTheWindowWelcomes() throws {
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(["--events-fd", "1"])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: "Orb Player"), player.stderr)
    usleep(800_000)
    let shot = try Screen.grab(title: "Orb Player")
    Screen.keep(title: "Orb Player", as: "welcome")
    // The middle third across (the X server's own cursor may sit elsewhere).
    let bright = (0..<shot.height).filter { y in
      stride(from: shot.width / 3, to: shot.width * 2 / 3, by: 2).contains { x in
        let p = shot.pixel(x: x, y: y)
        return p.r > 200 && p.g > 200 && p.b > 200
      }
    }
    XCTAssertGreaterThan(bright.count, 20, "the welcome text and its button")
    XCTAssertTrue((bright.min() ?? 0) > shot.height / 4 && (bright.max() ?? 0) < shot.height * 3 / 4, "centred")
    XCTAssertTrue(files(player).isEmpty, "nothing plays: \(player.stdout)")
    let corner = (0..<shot.height / 8).contains { y in
      (shot.width * 3 / 4..<shot.width).contains { x in shot.pixel(x: x, y: y).r > 200 }
    }
    XCTAssertFalse(corner, "no \"Opening…\" when there is nothing to open")
    // Black around the text: the video area paints itself black before any picture, where the window (drawn with
    // cairo) paints no background of its own under it.
    for (x, y) in [(4, shot.height / 2), (shot.width - 5, shot.height / 2), (shot.width / 2, shot.height - 5)] {
      let p = shot.pixel(x: x, y: y)
      XCTAssertTrue(p.r < 16 && p.g < 16 && p.b < 16, "(\(x), \(y)) is \(p), not black")
    }
    Screen.press("q", title: "Orb Player")
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }
}
