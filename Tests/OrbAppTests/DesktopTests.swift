import Foundation
import OrbTestSupport
import XCTest

/// The desktop integration, as a person gets it: `make install PREFIX=…` into a private prefix, then `gio open
/// clip.mp4` (what file managers do on a double-click) finds the installed desktop entry by its MimeType, starts the
/// installed binary from PATH on the clip, and the window opens under the test session's Xvfb. Nothing of the real
/// user's desktop takes part: the XDG data and config directories point into the test's own folder.
final class DesktopTests: XCTestCase {
  private var root = ""
  private var prefix = ""
  /// Processes the installed player was started as (found by their window); stopped if a test fails midway.
  private var started: [Int32] = []

  override func setUpWithError() throws {
    try Screen.requireDisplay()
    for tool in ["make", "gio", "xdotool", "xwininfo"] {
      try Requirement.require(Tool.find(tool) != nil, "no \(tool) on PATH")
    }
    try Requirement.require(
      Tool.find("desktop-file-validate") != nil && Tool.find("update-desktop-database") != nil,
      "no desktop-file-utils (desktop-file-validate, update-desktop-database)")
    root = NSTemporaryDirectory() + "orb-desktop-\(UUID().uuidString.prefix(8))"
    prefix = root + "/prefix"
    for dir in ["data-home", "config-home", "config-dirs", "clips"] {
      try FileManager.default.createDirectory(atPath: "\(root)/\(dir)", withIntermediateDirectories: true)
    }
    let make = Tool.run(
      "make", ["-s", "-C", Self.repositoryRoot, "install", "PREFIX=\(prefix)", "BIN=\(OrbBinary.path)"],
      environment: Self.makeEnvironment, timeout: 120)
    guard make.succeeded else { throw TestMediaError("make install failed: \(make.stdout)\(make.stderr)") }
  }

  override func tearDown() {
    for pid in started where isInstalledPlayer(pid) { kill(pid, SIGTERM) }
    if !root.isEmpty { try? FileManager.default.removeItem(atPath: root) }
  }

  /// The checkout, found from this file's place in it (Tests/OrbAppTests/DesktopTests.swift).
  static var repositoryRoot: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().path
  }

  /// This environment without what an outer `make test` passes down (its flags and command-line variables).
  static var makeEnvironment: [String: String] {
    ProcessInfo.processInfo.environment.filter {
      !["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"].contains($0.key)
    }
  }

  private var desktopEntry: String { prefix + "/share/applications/org.orb.Player.desktop" }

  /// The test's environment with the XDG directories in its own folder, the prefix's data first and its bin first
  /// on PATH: what a session with the player installed in that prefix looks like.
  private var desktopEnvironment: [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["XDG_DATA_DIRS"] = "\(prefix)/share:/usr/share"
    env["XDG_DATA_HOME"] = root + "/data-home"
    env["XDG_CONFIG_HOME"] = root + "/config-home"
    env["XDG_CONFIG_DIRS"] = root + "/config-dirs"
    env["PATH"] = "\(prefix)/bin:" + (env["PATH"] ?? "/usr/bin:/bin")
    env["XDG_CURRENT_DESKTOP"] = nil  // no desktop-specific mimeapps.list
    return env
  }

  func testInstallLaysOutAValidDesktopEntry() throws {
    for file in [
      "bin/orb-player", "share/applications/org.orb.Player.desktop",
      "share/icons/hicolor/scalable/apps/org.orb.Player.svg", "share/metainfo/org.orb.Player.metainfo.xml",
    ] {
      XCTAssertTrue(FileManager.default.fileExists(atPath: "\(prefix)/\(file)"), "\(file) not installed")
    }
    XCTAssertTrue(FileManager.default.isExecutableFile(atPath: prefix + "/bin/orb-player"))
    XCTAssertTrue(
      FileManager.default.contentsEqual(atPath: prefix + "/bin/orb-player", andPath: OrbBinary.path),
      "BIN= was not the binary installed")
    let validate = Tool.run("desktop-file-validate", [desktopEntry])
    XCTAssertTrue(validate.succeeded && validate.stdout.isEmpty, validate.stdout + validate.stderr)
    // update-desktop-database ran for the prefix, so tools that read mimeinfo.cache see the types too.
    let cache = (try? String(contentsOfFile: prefix + "/share/applications/mimeinfo.cache", encoding: .utf8)) ?? ""
    let mp4 = cache.split(separator: "\n").first { $0.hasPrefix("video/mp4=") } ?? ""
    XCTAssertTrue(mp4.contains("org.orb.Player.desktop"), "mimeinfo.cache: \(cache)")
    // GIO, asked in that session, makes it the default for the video types.
    let mime = Tool.run("gio", ["mime", "video/mp4"], environment: desktopEnvironment)
    let first = mime.stdout.split(separator: "\n").first ?? ""
    XCTAssertTrue(first.hasPrefix("Default application") && first.contains("org.orb.Player.desktop"), mime.stdout)
  }

  func testGioOpenPlaysAClipWithTheInstalledPlayer() throws {
    let clip = root + "/clips/clip.mp4"
    try FileManager.default.copyItem(atPath: try Clips.moving(seconds: 12), toPath: clip)
    try openWithGio(clip, title: "clip.mp4")
  }

  /// Files chosen together and opened with the player (`gio launch`, as a file manager's Open does) go to one
  /// player as its playlist (`%U`); the entry's `%u` started a player for each, all playing over each other.
  func testFilesOpenedTogetherPlayInOneWindowInTurn() throws {
    let (first, second) = (root + "/clips/first.mp4", root + "/clips/second.mp4")
    for path in [first, second] {
      try FileManager.default.copyItem(atPath: try Clips.moving(seconds: 12), toPath: path)
    }
    let log = root + "/launch.log"
    let gio = try launch(
      Tool.find("gio")!, ["launch", desktopEntry, first, second], log: log, environment: desktopEnvironment)
    XCTAssertTrue(waitForExit(gio.processIdentifier, timeout: 20), "gio launch did not return")
    gio.waitUntilExit()
    XCTAssertEqual(gio.terminationStatus, 0, contents(of: log))
    guard Screen.waitForWindow(title: "first.mp4") != nil else { return XCTFail("no window: \(contents(of: log))") }
    let pid =
      Int32(
        Tool.run("xdotool", ["getwindowpid", Screen.windowID("first.mp4")]).stdout
          .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    started.append(pid)
    let argv = commandLine(pid)
    // Paths, or file:// URLs (GLib passes either).
    let given = argv.dropFirst().map { URL(string: $0).flatMap { $0.isFileURL ? $0.path : nil } ?? $0 }
    XCTAssertEqual(given, [first, second], "one player for both: \(argv)")
    usleep(1_000_000)
    XCTAssertNil(Screen.geometry(title: "second.mp4"), "a second player is up")
    Screen.press("greater", title: "first.mp4")  // the next entry
    XCTAssertNotNil(Screen.waitForWindow(title: "second.mp4"), "the playlist does not go on to the second")
    Screen.press("q", title: "second.mp4")
    XCTAssertTrue(waitForExit(pid), "the player did not quit on q")
  }

  /// File managers hand over names with spaces; the window is titled with the name as it is, not escaped.
  func testGioOpenPlaysAFileNameWithASpace() throws {
    let clip = root + "/clips/a clip.mp4"
    try FileManager.default.copyItem(atPath: try Clips.moving(seconds: 12), toPath: clip)
    try openWithGio(clip, title: "a clip.mp4")
  }

  /// `%u` may be a file:// URL with escapes (GIO passes one for a desktop entry with X-GIO-NoFuse, as do
  /// launchers outside GLib); the installed player opens it and names the window after the file.
  func testTheInstalledPlayerOpensAnEscapedFileURL() throws {
    let clip = root + "/clips/a clip.mp4"
    try FileManager.default.copyItem(atPath: try Clips.moving(seconds: 12), toPath: clip)
    let url = URL(fileURLWithPath: clip).absoluteString
    XCTAssertTrue(url.hasPrefix("file:///") && url.hasSuffix("/a%20clip.mp4"), url)
    let log = root + "/url.log"
    let player = try launch(prefix + "/bin/orb-player", ["--events-fd", "1", url], log: log)
    started.append(player.processIdentifier)
    guard Screen.waitForWindow(title: "a clip.mp4") != nil else {
      return XCTFail("no window 'a clip.mp4' for \(url): \(contents(of: log))")
    }
    XCTAssertTrue(pictureMoves(title: "a clip.mp4"), "the picture does not move: \(contents(of: log))")
    Screen.press("q", title: "a clip.mp4")
    XCTAssertTrue(waitForExit(player.processIdentifier), "the player did not quit on q")
    player.waitUntilExit()
    XCTAssertEqual(player.terminationStatus, 0, contents(of: log))
    let ended = Orb.events(contents(of: log)).last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "user-quit", contents(of: log))
    XCTAssertTrue(
      contents(of: log).split(separator: "\n").allSatisfy { !$0.contains("cannot") }, contents(of: log))
  }

  func testUninstallTakesAwayWhatInstallPut() throws {
    let make = Tool.run(
      "make", ["-s", "-C", Self.repositoryRoot, "uninstall", "PREFIX=\(prefix)"], environment: Self.makeEnvironment,
      timeout: 60)
    XCTAssertTrue(make.succeeded, make.stdout + make.stderr)
    let left =
      FileManager.default.enumerator(atPath: prefix)?.compactMap { $0 as? String }
      .filter { !FileManager.default.isDirectory("\(prefix)/\($0)") } ?? []
    XCTAssertEqual(left, ["share/applications/mimeinfo.cache"])
    let cache = (try? String(contentsOfFile: prefix + "/share/applications/mimeinfo.cache", encoding: .utf8)) ?? ""
    XCTAssertFalse(cache.contains("org.orb.Player"), cache)
  }

  /// `gio open path` in the private session: GIO exits at once, the player it started shows a window titled
  /// `title`, is the binary installed in the prefix, got the clip as its argument, and quits on `q`.
  private func openWithGio(_ path: String, title: String, file: StaticString = #filePath, line: UInt = #line)
    throws
  {
    let log = root + "/gio-\(UUID().uuidString.prefix(6)).log"
    let gio = try launch(Tool.find("gio")!, ["open", path], log: log, environment: desktopEnvironment)
    guard waitForExit(gio.processIdentifier, timeout: 20) else {
      return XCTFail("gio open did not return", file: file, line: line)
    }
    gio.waitUntilExit()
    guard gio.terminationStatus == 0 else {
      return XCTFail("gio open failed (\(gio.terminationStatus)): \(contents(of: log))", file: file, line: line)
    }
    guard Screen.waitForWindow(title: title) != nil else {
      return XCTFail("no window '\(title)' after gio open: \(contents(of: log))", file: file, line: line)
    }
    let window = Screen.windowID(title)
    let pid = Int32(
      Tool.run("xdotool", ["getwindowpid", window]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    guard let pid, pid > 0 else { return XCTFail("no _NET_WM_PID on '\(title)'", file: file, line: line) }
    started.append(pid)
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
    XCTAssertEqual(exe, prefix + "/bin/orb-player", "not the installed player", file: file, line: line)
    // Whatever %u became (this GLib passes local files as paths, others pass file:// URLs), it names the clip.
    let argv = commandLine(pid)
    let argument = argv.last ?? ""
    XCTAssertTrue(
      argv.count == 2 && (argument == path || URL(string: argument)?.path == path), "argv: \(argv)", file: file,
      line: line)
    // Playing, not just a window: the clip (testsrc2, moving) changes between two screenshots.
    XCTAssertTrue(pictureMoves(title: title), "the picture does not move: \(contents(of: log))", file: file, line: line)
    Screen.press("q", title: title)
    XCTAssertTrue(waitForExit(pid), "the player did not quit on q: \(contents(of: log))", file: file, line: line)
    let closing = Date(timeIntervalSinceNow: 5)
    while Screen.geometry(title: title) != nil && Date() < closing { usleep(100_000) }
    XCTAssertNil(Screen.geometry(title: title), "the window is still there", file: file, line: line)
    let errors = contents(of: log).split(separator: "\n").filter { $0.contains("cannot") }
    XCTAssertEqual(errors, [], file: file, line: line)
  }

  /// Starts `executable` with stdout and stderr into `log` (a launched player inherits them from gio, so a pipe
  /// would stay open as long as the player runs).
  private func launch(_ executable: String, _ arguments: [String], log: String, environment: [String: String]? = nil)
    throws -> Child
  {
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    defer { try? output.close() }
    let process = Child()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = output
    process.standardError = output
    try process.run()
    return process
  }

  /// Waits until process `pid` is gone: no /proc entry, or an exited zombie awaiting its reaper (for a process
  /// gio started that is init, not this test). A zombie leader with threads still listed is still exiting.
  private func waitForExit(_ pid: Int32, timeout: Double = 15) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    repeat {
      guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { return true }
      let zombie = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
      let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"))?.count ?? 0
      if zombie && threads <= 1 { return true }
      usleep(100_000)
    } while Date() < deadline
    return false
  }

  /// True once two screenshots of the window, half a second apart, differ in many places (within 10 s).
  private func pictureMoves(title: String) -> Bool {
    let deadline = Date(timeIntervalSinceNow: 10)
    while Date() < deadline {
      guard let first = try? Screen.grab(title: title) else { return false }
      usleep(500_000)
      guard let second = try? Screen.grab(title: title), second.width == first.width, second.height == first.height
      else { return false }
      var changed = 0
      for y in stride(from: 0, to: first.height, by: 8) {
        for x in stride(from: 0, to: first.width, by: 8) where first.pixel(x: x, y: y) != second.pixel(x: x, y: y) {
          changed += 1
        }
      }
      if changed > 50 { return true }
    }
    return false
  }

  /// The arguments process `pid` was started with.
  private func commandLine(_ pid: Int32) -> [String] {
    guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
    return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
  }

  /// True while `pid` runs the binary installed in this test's prefix (so a reused process id is never signalled).
  private func isInstalledPlayer(_ pid: Int32) -> Bool {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) == prefix + "/bin/orb-player"
  }

  private func contents(of path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
  }
}

extension FileManager {
  fileprivate func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
  }
}
