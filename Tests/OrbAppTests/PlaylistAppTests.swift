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

  func testGreaterAndLessMoveBetweenEntries() throws {
    try Screen.requireDisplay()
    let title = "playlist-\(UUID().uuidString.prefix(6))"
    let clip = try MarkerAppTests.clip(seconds: 20)
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", clip, clip])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_000_000)
    Screen.press("greater", title: title)
    usleep(1_500_000)
    Screen.press("less", title: title)
    usleep(1_500_000)
    Screen.press("less", title: title)  // at the first: nothing happens
    usleep(500_000)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    XCTAssertEqual(files(player).compactMap { $0["index"] as? Int }, [0, 1, 0], player.stdout)
    let states = player.events.filter { $0["event"] as? String == "state" }
    XCTAssertEqual(states.count, 3, "each entry started playing: \(player.stdout)")
  }

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
    Screen.press("q", title: "Orb Player")
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }
}
