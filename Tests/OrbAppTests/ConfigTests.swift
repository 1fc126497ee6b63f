import Foundation
import OrbTestSupport
import XCTest

/// `orb-player.conf` sets defaults as mpv.conf does; the command line wins; a bad line is a warning, never a failure.
final class ConfigTests: XCTestCase {
  private func rate(_ player: BackgroundPlayer) -> Double? {
    let positions = player.events.filter { $0["event"] as? String == "progress" }.compactMap {
      $0["position_ms"] as? Int
    }
    guard positions.count >= 3 else { return nil }
    let tail = positions.suffix(3)
    return Double(tail.last! - tail.first!) / 2000
  }

  /// A config home holding `text` as its orb-player.conf, removed when the test ends.
  private func configHome(_ text: String) throws -> String {
    let home = NSTemporaryDirectory() + "orb-config-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: "\(home)/orb-player", withIntermediateDirectories: true)
    addTeardownBlock { try? FileManager.default.removeItem(atPath: home) }
    try text.write(toFile: "\(home)/orb-player/orb-player.conf", atomically: true, encoding: .utf8)
    return home
  }

  func testTheFileSetsDefaultsTheCommandLineWinsAndBadLinesAreWarnings() throws {
    try Screen.requireDisplay()
    let home = try configHome(
      """
      # defaults for this machine
      speed=2
      bogus=1
      speed = 9
      events-fd=3
      mute
      no-audio=no
      sid=no

      """)
    // Latin-1 bytes, as an older editor writes "é": a comment that is not UTF-8 is still a comment, and a bad line
    // costs only itself (one such byte made the whole file be ignored, without a word).
    let file = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(home)/orb-player/orb-player.conf"))
    try file.seekToEnd()
    try file.write(contentsOf: Data("# r".utf8) + [0xE9] + Data("glages\nvolume".utf8) + [0xE9] + Data("=1\n".utf8))
    try file.close()
    let clip = try MarkerAppTests.clip(seconds: 20)
    // The file mutes; `--no-mute` on the command line turns that off again.
    for (args, expected, muted) in [([String](), 2.0, true), (["--speed", "1", "--no-mute"], 1.0, false)] {
      let title = "config-\(UUID().uuidString.prefix(6))"
      let player = try BackgroundPlayer(
        ["--title", title, "--events-fd", "1"] + args + [clip], environment: ["XDG_CONFIG_HOME": home])
      XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
      usleep(3_600_000)
      Screen.press("q", title: title)
      XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
      XCTAssertEqual(rate(player) ?? 0, expected, accuracy: 0.25, "args \(args): \(player.stdout)")
      let settings = player.events.first { $0["event"] as? String == "settings" }
      XCTAssertEqual(settings?["muted"] as? Bool, muted, "args \(args): \(player.stdout)")
      let warnings = player.stderr.split(separator: "\n").filter { $0.contains("orb-player.conf line") }
      XCTAssertEqual(warnings.count, 4, player.stderr)
      XCTAssertTrue(warnings.contains { $0.contains("line 10") && $0.contains("not UTF-8") }, "\(warnings)")
      XCTAssertTrue(warnings.contains { $0.contains("line 3") && $0.contains("bogus") }, "\(warnings)")
      XCTAssertTrue(warnings.contains { $0.contains("line 4") && $0.contains("--speed") }, "\(warnings)")
      XCTAssertTrue(warnings.contains { $0.contains("line 5") && $0.contains("command line") }, "\(warnings)")
    }
  }

  /// `paused=no` and `mute=no` leave those off (GLib took the value of a flag as the flag itself, so they turned it
  /// on); a value in quotes keeps its "#", a "#" inside a word is not a comment, and a line of "--" alone is not an
  /// option (it made every option on the command line a file name). On the command line, a value given to a flag
  /// is refused in words.
  func testFlagsSetToNoStayOffAndQuotedValuesKeepTheirHashes() throws {
    try Screen.requireDisplay()
    let home = try configHome(
      """
      paused=no
      mute = off  # not today
      title="Episode #3"   # the host's name for it
      --
      resume=no#ignored?

      """)
    let clip = try MarkerAppTests.clip(seconds: 20)
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--error-linger-ms", "0", clip], environment: ["XDG_CONFIG_HOME": home])
    usleep(2_500_000)
    player.process.signal(SIGINT)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let events = player.events
    XCTAssertEqual(events.first { $0["event"] as? String == "file" }?["title"] as? String, "Episode #3", player.stdout)
    XCTAssertEqual(events.first { $0["event"] as? String == "settings" }?["muted"] as? Bool, false, player.stdout)
    XCTAssertFalse(events.contains { $0["state"] as? String == "paused" }, player.stdout)
    XCTAssertTrue(events.contains { $0["state"] as? String == "playing" }, player.stdout)
    let warnings = player.stderr.split(separator: "\n").filter { $0.contains("orb-player.conf line") }
    XCTAssertTrue(warnings.contains { $0.contains("line 4") && $0.contains("not an option") }, player.stderr)
    XCTAssertTrue(warnings.contains { $0.contains("line 5") && $0.contains("resume") }, player.stderr)
    XCTAssertEqual(warnings.count, 2, player.stderr)

    let refused = Orb.run(["--loop=banana", "--probe", clip])
    XCTAssertEqual(refused.status, 1, refused.stdout)
    XCTAssertTrue(refused.stderr.contains("--loop takes no value"), refused.stderr)
    let titled = Orb.run(["--title", "--mute=1", "--probe", clip])
    XCTAssertEqual(titled.status, 0, "an option's value, not a flag: \(titled.stderr)")
  }
}
