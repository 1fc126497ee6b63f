import Foundation
import OrbTestSupport
import XCTest

/// MPRIS on the test session's bus: what desktop media controls and playerctl see and can do.
final class MPRISTests: XCTestCase {
  private func gdbus(_ pid: Int32, _ arguments: [String]) -> String { Orb.gdbus(pid, arguments) }

  private func property(_ pid: Int32, _ name: String) -> String {
    gdbus(pid, ["--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", name])
  }

  /// Sets a Player property as `playerctl` does (Properties.Set); gdbus's answer ("()" when it was taken).
  private func set(_ pid: Int32, _ name: String, _ value: String) -> String {
    gdbus(pid, ["--method", "org.freedesktop.DBus.Properties.Set", "org.mpris.MediaPlayer2.Player", name, value])
  }

  /// A double property's value, from gdbus's `(<0.5>,)`.
  private func double(_ pid: Int32, _ name: String) -> Double? {
    let answer = property(pid, name)
    return Self.number(in: answer, after: "(<").flatMap(Double.init)
  }

  /// Position in seconds, from gdbus's `(<int64 4615869>,)`.
  private func position(_ pid: Int32) -> Double {
    let answer = property(pid, "Position")
    return Double(Int(answer.split(separator: " ").last?.filter(\.isNumber) ?? "") ?? 0) / 1e6
  }

  /// The number written right after `prefix` in `text` (the last such place), as text.
  private static func number(in text: String, after prefix: String) -> String? {
    guard let range = text.range(of: prefix, options: .backwards) else { return nil }
    let number = text[range.upperBound...].prefix { $0.isNumber || "+-.e".contains($0) }
    return number.isEmpty ? nil : String(number)
  }

  /// A 20 s clip with sound: the clock follows the sound, so Rate is heard as well as seen.
  private static func clip() throws -> String {
    try TestMedia.path(
      "mpris-av-20s.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=20", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=20", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt",
        "yuv420p", "-c:a", "aac", "-ac", "2",
      ])
  }

  /// Waits up to `timeout` seconds for `condition`.
  private func eventually(_ timeout: Double = 3, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
      if condition() { return true }
      usleep(100_000)
    }
    return condition()
  }

  private func requireSession() throws {
    try Screen.requireDisplay()
    try Requirement.require(ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil, "no session bus")
  }

  /// A player on 30 s of the built-in bars with its window up, titled after `name`, and its pid.
  private func startOnBars(_ name: String) throws -> (String, BackgroundPlayer, Int32) {
    try requireSession()
    let title = "\(name)-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", "test://bars?duration=30"])
    XCTAssertNotNil(Screen.waitForWindow(title: title))
    usleep(800_000)
    return (title, player, player.process.processIdentifier)
  }

  func testMediaControlsSeeAndSteerThePlayer() throws {
    let (title, player, pid) = try startOnBars("mpris")
    XCTAssertTrue(property(pid, "PlaybackStatus").contains("'Playing'"), property(pid, "PlaybackStatus"))
    let metadata = property(pid, "Metadata")
    XCTAssertTrue(metadata.contains("'xesam:title': <'\(title)'>"), metadata)
    XCTAssertTrue(metadata.contains("'mpris:length': <int64 30000000>"), metadata)
    XCTAssertTrue(metadata.contains("'xesam:url': <'test://bars?duration=30'>"), metadata)  // a URL as given

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.PlayPause"])
    usleep(500_000)
    XCTAssertTrue(property(pid, "PlaybackStatus").contains("'Paused'"))
    let states = player.events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertEqual(states.last, "paused", player.stdout)

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.SetPosition", "/org/orb/Player/Track/0", "12000000"])
    usleep(500_000)
    let position = property(pid, "Position")
    let micros = Int(position.split(separator: " ").last?.filter(\.isNumber) ?? "") ?? 0
    XCTAssertEqual(Double(micros) / 1e6, 12, accuracy: 0.2, position)

    // Stop: stopped (not "Paused") at the start, until played again.
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.Stop"])
    XCTAssertTrue(
      eventually { self.property(pid, "PlaybackStatus").contains("'Stopped'") }, property(pid, "PlaybackStatus"))
    XCTAssertTrue(eventually { self.position(pid) < 0.2 }, "stopped at \(self.position(pid)) s")
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.Play"])
    XCTAssertTrue(eventually { self.property(pid, "PlaybackStatus").contains("'Playing'") })

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0)
    XCTAssertTrue(player.stdout.contains("\"reason\":\"user-quit\""), player.stdout)
  }

  /// OpenUri plays the file it names (a file:// URL with escapes, as a desktop passes it) instead of what played, as a
  /// file dropped on the window does; a scheme the player does not take is an error, and nothing changes. The types
  /// it says it plays are its desktop entry's (it said three).
  func testOpenUriPlaysTheFileItNames() throws {
    let (_, player, pid) = try startOnBars("mpris-open")
    let folder = NSTemporaryDirectory() + "orb-open-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let file = folder + "/an opened clip.mp4"
    try FileManager.default.copyItem(atPath: try Self.clip(), toPath: file)
    let refused = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.OpenUri", "ftp://example.org/a.mp4"])
    XCTAssertTrue(refused.contains("InvalidArgs"), refused)
    XCTAssertTrue(property(pid, "Metadata").contains("test://bars"), property(pid, "Metadata"))
    let url = URL(fileURLWithPath: file).absoluteString
    XCTAssertTrue(url.hasSuffix("an%20opened%20clip.mp4"), url)
    let opened = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.OpenUri", url])
    XCTAssertEqual(opened.trimmingCharacters(in: .whitespacesAndNewlines), "()", opened)
    XCTAssertTrue(
      eventually(10) { self.property(pid, "Metadata").contains("'xesam:title': <'an opened clip.mp4'>") },
      property(pid, "Metadata"))
    XCTAssertTrue(
      eventually(5) { self.property(pid, "PlaybackStatus").contains("'Playing'") }, property(pid, "PlaybackStatus"))
    let files = player.events.filter { $0["event"] as? String == "file" }.compactMap { $0["title"] as? String }
    XCTAssertEqual(files.last, "an opened clip.mp4", player.stdout)

    let desktop = try String(
      contentsOfFile: DesktopTests.repositoryRoot + "/data/org.orb.Player.desktop", encoding: .utf8)
    let listed =
      desktop.split(separator: "\n").first { $0.hasPrefix("MimeType=") }?.dropFirst(9)
      .split(separator: ";").map(String.init) ?? []
    let types = gdbus(
      pid, ["--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2", "SupportedMimeTypes"])
    let said = types.split(separator: "'").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    XCTAssertEqual(said, listed, types)
    XCTAssertTrue(listed.contains("audio/flac") && listed.contains("video/x-matroska"), "\(listed)")
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// A subtitle file opened while a video plays (dropped on the window, or given to OpenUri, which takes the same
  /// way) is added to it and shown, where playback stands; it was played as media instead, and failed. A file that
  /// cannot be read is said, and the video plays on.
  func testASubtitleFileOpenedOnAPlayingVideoIsShownOverIt() throws {
    let (_, player, pid) = try startOnBars("mpris-subtitle")
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(player.waitForEvent { $0["state"] as? String == "playing" }, player.stdout)
    let file = try TestMedia.file(
      named: "dropped-on-bars.en.srt", contents: SubtitleMedia.srt([(0, 60, "Dropped on the bars")]))
    let url = URL(fileURLWithPath: file).absoluteString
    let opened = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.OpenUri", url])
    XCTAssertEqual(opened.trimmingCharacters(in: .whitespacesAndNewlines), "()", opened)
    XCTAssertTrue(
      eventually(10) {
        player.events.contains { $0["event"] as? String == "cue" && $0["text"] as? String == "Dropped on the bars" }
      }, player.stdout)
    XCTAssertTrue(
      eventually(5) {
        player.events.contains { $0["event"] as? String == "settings" && $0["subtitle_track"] as? Int == 1 }
      }, player.stdout)
    XCTAssertEqual(player.events.filter { $0["event"] as? String == "file" }.count, 1, "nothing else played")
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "error" }, player.stdout)
    let missing = URL(fileURLWithPath: NSTemporaryDirectory() + "no-such-subtitles.srt").absoluteString
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.OpenUri", missing])
    XCTAssertTrue(
      eventually(5) { player.stderr.contains("no-such-subtitles.srt") }, "the missing file is named: \(player.stderr)")
    XCTAssertTrue(player.process.isRunning, player.stderr)
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// A player on the clip with its window up, and a monitor already listening for its PropertiesChanged signals.
  private func startWatched(_ name: String) throws -> (String, BackgroundPlayer, Int32, SignalMonitor) {
    try requireSession()
    let title = "mpris-\(name)-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, try Self.clip()])
    XCTAssertNotNil(Screen.waitForWindow(title: title))
    usleep(800_000)
    let pid = player.process.processIdentifier
    let monitor = try SignalMonitor(pid)
    XCTAssertTrue(eventually { monitor.isListening }, monitor.output)
    return (title, player, pid, monitor)
  }

  /// Seeked goes out for each seek (a key, a client's SetPosition), with where it went, and not while the position
  /// only plays on or stands (opening, buffering): a desktop's progress bar runs on from the last Position it read
  /// until told (it was never sent).
  func testASeekIsAnnouncedAsSeeked() throws {
    let (title, player, pid, monitor) = try startWatched("seeked")
    defer { monitor.stop() }
    usleep(1_600_000)  // three announcements of a position that only plays on
    XCTAssertFalse(monitor.output.contains("Seeked"), monitor.output)
    let before = position(pid)
    Screen.press("Right", title: title)  // 5 s on
    XCTAssertTrue(eventually { monitor.seeked.count == 1 }, monitor.output)
    let afterKey = try XCTUnwrap(monitor.seeked.last)
    XCTAssertEqual(afterKey, before + 5, accuracy: 1, monitor.output)
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.SetPosition", "/org/orb/Player/Track/0", "2000000"])
    XCTAssertTrue(eventually { monitor.seeked.count == 2 }, monitor.output)
    XCTAssertEqual(monitor.seeked.last ?? 0, 2, accuracy: 0.5, monitor.output)
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// Seek past the end of an entry goes to the next one, as the spec says (it was ignored); Next and Previous move
  /// through the entries.
  func testSeekPastTheEndPlaysTheNextEntry() throws {
    try requireSession()
    let title = "mpris-next-\(UUID().uuidString.prefix(6))"
    let clip = try Self.clip()
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", clip, clip])
    XCTAssertNotNil(Screen.waitForWindow(title: title))
    usleep(800_000)
    let pid = player.process.processIdentifier
    func entries() -> [Int] {
      player.events.filter { $0["event"] as? String == "file" }.compactMap { $0["index"] as? Int }
    }
    XCTAssertTrue(property(pid, "Metadata").contains("Track/0'"), property(pid, "Metadata"))
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.Seek", "60000000"])
    XCTAssertTrue(eventually(5) { entries() == [0, 1] }, player.stdout)
    // Each entry played is a track of its own (it was Track/0 for all): one meant for the one before is ignored.
    XCTAssertTrue(eventually(5) { self.property(pid, "Metadata").contains("Track/1'") }, property(pid, "Metadata"))
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.SetPosition", "/org/orb/Player/Track/0", "9000000"])
    usleep(500_000)
    XCTAssertLessThan(position(pid), 8, "a SetPosition for the entry before moved this one")
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.Previous"])
    XCTAssertTrue(eventually(5) { entries() == [0, 1, 0] }, player.stdout)
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// `playerctl volume 0.5` and a desktop's volume slider: Volume is set, clamped, read back and announced, and so
  /// are the changes made with the keys.
  func testVolumeCanBeSetAndEveryChangeIsAnnounced() throws {
    let (title, player, pid, monitor) = try startWatched("volume")
    defer { monitor.stop() }
    XCTAssertEqual(double(pid, "Volume"), 1)

    XCTAssertEqual(set(pid, "Volume", "<0.5>").trimmingCharacters(in: .whitespacesAndNewlines), "()")
    XCTAssertEqual(double(pid, "Volume"), 0.5, property(pid, "Volume"))
    XCTAssertTrue(eventually { monitor.volumes.last == 0.5 }, monitor.output)

    _ = set(pid, "Volume", "<2.0>")
    XCTAssertEqual(double(pid, "Volume"), 1.5, "above the most: the most")
    _ = set(pid, "Volume", "<-1.0>")
    XCTAssertEqual(double(pid, "Volume"), 0, "negative is 0, as the spec says")

    // The keys: 0 is 5 % louder, m mutes (Volume 0 while muted) and m again brings the level back.
    _ = set(pid, "Volume", "<0.5>")
    XCTAssertTrue(eventually { monitor.volumes.last == 0.5 }, monitor.output)
    Screen.press("0", title: title)
    XCTAssertTrue(
      eventually { (monitor.volumes.last ?? 0) > 0.549 && (monitor.volumes.last ?? 0) < 0.551 }, monitor.output)
    XCTAssertEqual(double(pid, "Volume") ?? 0, 0.55, accuracy: 1e-9)
    Screen.press("m", title: title)
    XCTAssertTrue(eventually { monitor.volumes.last == 0 }, monitor.output)
    Screen.press("m", title: title)
    XCTAssertTrue(
      eventually { (monitor.volumes.last ?? 0) > 0.549 && (monitor.volumes.last ?? 0) < 0.551 }, monitor.output)

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// Setting Rate plays faster (the position runs 1.5× the wall clock), a rate past MaximumRate is ignored, and 0
  /// pauses, as the spec says.
  func testRateCanBeSetAndPlaysAtThatSpeed() throws {
    let (_, player, pid, monitor) = try startWatched("rate")
    defer { monitor.stop() }
    XCTAssertEqual(double(pid, "Rate"), 1)

    XCTAssertEqual(set(pid, "Rate", "<1.5>").trimmingCharacters(in: .whitespacesAndNewlines), "()")
    XCTAssertEqual(double(pid, "Rate"), 1.5, property(pid, "Rate"))
    XCTAssertTrue(eventually { monitor.output.contains("'Rate': <1.5>") }, monitor.output)

    usleep(1_000_000)  // the sound already queued at 1× is heard first
    func sample() -> (position: Double, time: Double) {
      let before = Date().timeIntervalSinceReferenceDate
      let position = position(pid)
      return (position, (before + Date().timeIntervalSinceReferenceDate) / 2)
    }
    let start = sample()
    usleep(2_000_000)
    let end = sample()
    let ratio = (end.position - start.position) / (end.time - start.time)
    XCTAssertEqual(ratio, 1.5, accuracy: 0.2, "position \(start.position) → \(end.position) s")

    XCTAssertEqual(set(pid, "Rate", "<9.0>").trimmingCharacters(in: .whitespacesAndNewlines), "()")
    XCTAssertEqual(double(pid, "Rate"), 1.5, "past MaximumRate: ignored")
    _ = set(pid, "Rate", "<-1.0>")
    XCTAssertEqual(double(pid, "Rate"), 1.5, "negative: ignored")
    XCTAssertTrue(property(pid, "PlaybackStatus").contains("'Playing'"))
    _ = set(pid, "Rate", "<0.0>")
    XCTAssertTrue(eventually { self.property(pid, "PlaybackStatus").contains("'Paused'") }, "Rate 0 pauses")
    XCTAssertEqual(double(pid, "Rate"), 1.5)

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// A song's metadata carries its artist and its cover as a picture file (`mpris:artUrl`), which desktop media
  /// controls show; the file is the cover and goes when the player does.
  func testMetadataGivesASongsArtistAndCover() throws {
    try requireSession()
    let song = try Clips.song("mpris-song-4s.m4a", cover: (400, 300), picture: "png", audio: "aac", seconds: 4)
    let player = try BackgroundPlayer([song])
    XCTAssertNotNil(Screen.waitForWindow(title: "Orb Song — The Testers"), player.stderr)
    let pid = player.process.processIdentifier
    var metadata = ""
    XCTAssertTrue(
      eventually {
        metadata = property(pid, "Metadata")
        return metadata.contains("mpris:artUrl")
      }, metadata)
    XCTAssertTrue(metadata.contains("'xesam:artist': <['The Testers']>"), metadata)
    XCTAssertTrue(metadata.contains("'xesam:title': <'Orb Song — The Testers'>"), metadata)
    let art = try XCTUnwrap(
      metadata.components(separatedBy: "'mpris:artUrl': <'").dropFirst().first?.prefix { $0 != "'" }, metadata)
    XCTAssertTrue(art.hasPrefix("file:///"), String(art))
    let path = try XCTUnwrap(URL(string: String(art))?.path, String(art))
    let picture = try RGBImage(png: path)
    XCTAssertEqual([picture.width, picture.height], [400, 300])
    let left = picture.pixel(x: 100, y: 150)
    XCTAssertTrue(left.r > 200 && left.b < 60, "the cover's red half: \(left)")
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
    XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the cover's file was left behind")
  }

  /// A local file's xesam:url is its file:// URL, percent-escaped (here a space in the name).
  func testMetadataNamesALocalFileByItsURL() throws {
    try requireSession()
    let directory = NSTemporaryDirectory() + "orb-mpris-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/a clip.mp4"
    try FileManager.default.copyItem(atPath: try Self.clip(), toPath: path)
    let title = "mpris-url-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, path])
    XCTAssertNotNil(Screen.waitForWindow(title: title))
    usleep(800_000)
    let pid = player.process.processIdentifier
    let metadata = property(pid, "Metadata")
    let url = URL(fileURLWithPath: path).absoluteString
    XCTAssertTrue(url.hasPrefix("file:///") && url.hasSuffix("/a%20clip.mp4"), url)
    XCTAssertTrue(metadata.contains("'xesam:url': <'\(url)'>"), "\(metadata) lacks \(url)")
    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }
}

/// `gdbus monitor` on the player's MPRIS object: the signals it sends, as gdbus prints them.
private final class SignalMonitor: @unchecked Sendable {
  private let process = Child()
  private let pipe = Pipe()
  private var data = Data()
  private let lock = NSLock()

  init(_ pid: Int32) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "gdbus", "monitor", "--session", "--dest", "org.mpris.MediaPlayer2.orbplayer.instance\(pid)", "--object-path",
      "/org/mpris/MediaPlayer2",
    ]
    process.standardOutput = pipe
    process.standardError = pipe
    pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
      let chunk = handle.availableData
      self?.lock.withLock { self?.data.append(chunk) }
    }
    try process.run()
  }

  var output: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

  /// gdbus has found the name's owner, so it hears the signals from now on.
  var isListening: Bool { output.contains("is owned by") }

  /// The Volume of each PropertiesChanged that has one, in order.
  var volumes: [Double] {
    output.split(separator: "\n").filter { $0.contains("PropertiesChanged") }.compactMap { line in
      guard let range = line.range(of: "'Volume': <") else { return nil }
      return Double(line[range.upperBound...].prefix { $0.isNumber || "+-.e".contains($0) })
    }
  }

  /// The position (seconds) of each Seeked, in order.
  var seeked: [Double] {
    output.split(separator: "\n").filter { $0.contains(".Seeked") }.compactMap { line in
      guard let range = line.range(of: "(int64 ") ?? line.range(of: "(") else { return nil }
      return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "-" }).map { $0 / 1e6 }
    }
  }

  func stop() {
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
    }
  }

  deinit { stop() }
}
