import Foundation
import OrbTestSupport
import XCTest

/// A person's own file, left midway, opens again where they left it: offered (`--resume ask`, the default), at
/// once (`auto`), or not at all (`no`); a host's `--resume-ms` always wins.
final class ResumeAppTests: XCTestCase {
  /// Five minutes (long enough to be left midway), small and slow, so it is quick to make.
  static func longClip() throws -> String {
    try TestMedia.path(
      "plain-300s.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x203040:size=320x180:rate=5:duration=300", "-c:v", "libx264", "-preset",
        "ultrafast", "-pix_fmt", "yuv420p",
      ])
  }

  private func run(
    _ args: [String], state: String, then act: (String, BackgroundPlayer) -> Void
  ) throws -> BackgroundPlayer {
    let title = "resume-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(
      ["--title", title, "--events-fd", "1"] + args, environment: ["XDG_STATE_HOME": state])
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(800_000)
    act(title, player)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    return player
  }

  private func firstPosition(_ player: BackgroundPlayer) -> Int? {
    player.events.first { $0["event"] as? String == "state" }?["position_ms"] as? Int
  }

  private func lastPosition(_ player: BackgroundPlayer) -> Int? {
    player.events.last { $0["event"] as? String == "ended" }?["position_ms"] as? Int
  }

  func testALeftFileResumesWhereItWasLeft() throws {
    try Screen.requireDisplay()
    let state = NSTemporaryDirectory() + "orb-state-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: state) }
    let clip = try Self.longClip()
    // Watched to a minute in (Up is 60 s on), then left, well before the last three minutes.
    let first = try run([clip], state: state) { title, _ in
      Screen.press("Up", title: title)
      usleep(1_000_000)
    }
    let left = try XCTUnwrap(lastPosition(first), first.stdout)
    XCTAssertGreaterThan(left, 60_000)
    // auto: at once.
    let auto = try run(["--resume", "auto", clip], state: state) { _, _ in }
    XCTAssertEqual(Double(firstPosition(auto) ?? 0), Double(left), accuracy: 1000, auto.stdout)
    // A subtitle file given now is shown: the remembered choice (none) was restored over it.
    let srt = NSTemporaryDirectory() + "orb-resume-\(UUID().uuidString).srt"
    try "1\n00:00:00,000 --> 00:10:00,000\nHello\n".write(toFile: srt, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: srt) }
    let subtitled = try run(["--resume", "auto", "--sub-file", srt, clip], state: state) { _, _ in }
    XCTAssertEqual(Double(firstPosition(subtitled) ?? 0), Double(left), accuracy: 3000, subtitled.stdout)
    XCTAssertTrue(
      subtitled.events.contains { $0["event"] as? String == "cue" && $0["text"] as? String == "Hello" },
      subtitled.stdout)
    // ask: from the start, with the offer; Enter takes it.
    let ask = try run([clip], state: state) { title, _ in
      Screen.press("Return", title: title)
      usleep(1_200_000)
    }
    XCTAssertEqual(firstPosition(ask), 0, ask.stdout)
    XCTAssertTrue(ask.stderr.contains("resumed at"), ask.stderr)
    XCTAssertGreaterThan(lastPosition(ask) ?? 0, left - 1000, "Enter went back to where it was left")
    // A host's resume point wins; no: neither read nor written.
    let host = try run(["--resume-ms", "5000", "--resume", "auto", clip], state: state) { _, _ in }
    XCTAssertEqual(firstPosition(host), 5000)
    let start = try run(["--resume-ms", "0", "--resume", "auto", clip], state: state) { _, _ in }
    XCTAssertEqual(firstPosition(start), 0, "a host's 0 is the start, not 'not given': \(start.stdout)")
    let none = try run(["--resume", "no", clip], state: state) { _, _ in }
    XCTAssertEqual(firstPosition(none), 0)
    XCTAssertFalse(none.stderr.contains("resumed at"))
  }

  /// Skipping an intro (or credits) that runs to the end is watching to the end: the place is forgotten, where it
  /// was remembered inside the intro and offered again at the next opening.
  func testSkippingToTheEndForgetsThePlace() throws {
    try Screen.requireDisplay()
    let state = NSTemporaryDirectory() + "orb-state-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: state) }
    let clip = try Self.longClip()
    let skipped = try run(["--intro", "30000-400000", clip], state: state) { title, player in
      Screen.press("Up", title: title)  // a minute in: inside the intro
      XCTAssertNotNil(
        player.waitForEvent { $0["event"] as? String == "marker" && $0["state"] as? String == "shown" }, player.stdout)
      Screen.press("Return", title: title)
      XCTAssertNotNil(player.waitForEvent { $0["event"] as? String == "ended" }, player.stdout)
    }
    XCTAssertEqual(skipped.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "eof")
    let again = try run(["--resume", "auto", clip], state: state) { _, _ in }
    XCTAssertEqual(firstPosition(again), 0, "opened inside the skipped intro: \(again.stdout)")
  }

  /// Bright pixels (a button's white border and text) in the left or right half of `image`, above the controls'
  /// place (its bottom 90 rows): the resume offer is on the left, the skip button on the right.
  private func bright(_ image: RGBImage, right: Bool) -> Int {
    var count = 0
    let xs = right ? stride(from: image.width / 2, to: image.width, by: 2) : stride(from: 0, to: image.width / 2, by: 2)
    for y in stride(from: image.height / 3, to: image.height - 90, by: 2) {
      for x in xs {
        let p = image.pixel(x: x, y: y)
        if p.r > 200 && p.g > 200 && p.b > 200 { count += 1 }
      }
    }
    return count
  }

  /// A remembered place and a host's intro at the start: the offer comes first and the skip button waits until it
  /// has gone, so Enter answers the one thing on screen (both showed, and Enter took the offer the viewer may not
  /// have been looking at).
  func testTheSkipButtonWaitsForTheResumeOfferToGo() throws {
    try Screen.requireDisplay()
    let state = NSTemporaryDirectory() + "orb-state-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: state) }
    let clip = try Self.longClip()
    _ = try run([clip], state: state) { title, _ in
      Screen.press("Up", title: title)
      usleep(1_000_000)
    }
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])  // away: the controls stay hidden
    let offered = try run(["--geometry", "640x360", "--intro", "0-200000", clip], state: state) { title, player in
      guard let first = try? Screen.grab(title: title) else { return XCTFail("no screenshot") }
      Screen.keep(title: title, as: "resume-offer-before-skip")
      XCTAssertGreaterThan(bright(first, right: false), 30, "no resume offer")
      XCTAssertEqual(bright(first, right: true), 0, "the skip button shows beside the resume offer")
      // The offer goes after 8 s; then the button shows, and Enter takes it.
      let late = player.waitForEvent(timeout: 30) {
        $0["event"] as? String == "progress" && ($0["position_ms"] as? Int ?? 0) >= 9000
      }
      XCTAssertNotNil(late, player.stdout)
      usleep(300_000)
      guard let then = try? Screen.grab(title: title) else { return XCTFail("no screenshot") }
      XCTAssertEqual(bright(then, right: false), 0, "the resume offer stayed")
      XCTAssertGreaterThan(bright(then, right: true), 30, "no skip button once the offer had gone")
      Screen.press("Return", title: title)
      XCTAssertNotNil(player.waitForEvent { $0["event"] as? String == "skip" }, player.stdout)
    }
    XCTAssertFalse(offered.stderr.contains("resumed at"), "Enter took the offer that had gone")
  }

  /// Where the place cannot be written (the state folder is a file here; read-only or full elsewhere), the host and
  /// the log hear why, once: the place was lost without a word.
  func testAPlaceThatCannotBeWrittenIsSaid() throws {
    try Screen.requireDisplay()
    let state = NSTemporaryDirectory() + "orb-state-file-\(UUID().uuidString)"
    try Data("not a folder".utf8).write(to: URL(fileURLWithPath: state))
    defer { try? FileManager.default.removeItem(atPath: state) }
    let left = try run([try Self.longClip()], state: state) { title, _ in
      Screen.press("Up", title: title)
      usleep(1_000_000)
    }
    let warnings = left.events.filter { $0["event"] as? String == "warning" }.compactMap { $0["message"] as? String }
    let said = warnings.filter { $0.hasPrefix("cannot remember where this was left: \(state)") }
    XCTAssertEqual(said.count, 1, left.stdout)
  }
}
