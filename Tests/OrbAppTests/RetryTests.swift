import Foundation
import OrbTestSupport
import XCTest

/// A server that fails the way servers do for a while (503 while restarting) is tried again by the family's rule:
/// after 1, 2, 4, 8 s, then every 30 s, each try an event, the window saying so; paused, the player stops trying.
final class RetryTests: XCTestCase {
  /// The 3 s clip with its index first.
  static func clip() throws -> String {
    try TestMedia.path(
      "moving-3s-faststart.mp4", ["-i", try Clips.moving(seconds: 3), "-c", "copy", "-movflags", "+faststart"])
  }

  /// `FaultServer` serving `file` as `name`, with `options` (`--cut`, `--down`).
  static func server(_ file: String, as name: String = "clip.mp4", _ options: [String] = []) throws -> FaultServer {
    try FaultServer(files: [name: file], options: options)
  }

  /// A sine tone of `seconds` as AAC with its index first: sound alone.
  static func sound(seconds: Int) throws -> String {
    try TestMedia.path(
      "sine-\(seconds)s-faststart.m4a",
      [
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-c:a", "aac", "-movflags",
        "+faststart",
      ])
  }

  /// 6 s with its index first, so the break falls in the middle of playing, after the open.
  static func longerClip() throws -> String {
    try TestMedia.path(
      "moving-6s-faststart.mp4", ["-i", try Clips.moving(seconds: 6), "-c", "copy", "-movflags", "+faststart"])
  }

  /// `longerClip` with a tone beside the picture: the sound waits for the first picture after each seek.
  static func longerClipWithSound() throws -> String {
    try TestMedia.path(
      "moving-6s-sine-faststart.mp4",
      [
        "-i", try Clips.moving(seconds: 6), "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=6",
        "-c:v", "copy", "-c:a", "aac", "-movflags", "+faststart",
      ])
  }

  private func retries(_ player: BackgroundPlayer) -> [[String: Any]] {
    player.events.filter { $0["event"] as? String == "retry" }
  }

  func testAServerThatComesBackIsTriedAgainAndPlays() throws {
    try Screen.requireDisplay()
    // Down (503) for 2.5 s from the first request: a server restarting when the player opens.
    let server = try Self.server(try Self.clip(), ["--down", "2.5"])
    defer { server.stop() }
    let player = try BackgroundPlayer(["--events-fd", "1", server.url("503-for", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 40), 0, player.stderr)
    let tries = retries(player)
    XCTAssertEqual(tries.compactMap { $0["attempt"] as? Int }, [1, 2], player.stdout)
    XCTAssertEqual(tries.compactMap { $0["in_ms"] as? Int }, [1000, 2000])
    XCTAssertEqual(tries.first?["of"] as? Int, 14)
    XCTAssertEqual(tries.compactMap { $0["reason"] as? String }, ["server returned 503", "server returned 503"])
    let states = player.events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertEqual(states.first, "buffering", "waiting to try again is buffering: \(states)")
    XCTAssertEqual(player.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "eof")
  }

  /// A busy server that says when to come back (`Retry-After: 3`) is not asked sooner (it was, after 1 s).
  func testAServerThatSaysWhenToComeBackIsLeftUntilThen() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.clip(), ["--down", "2", "--retry-after", "3"])
    defer { server.stop() }
    let player = try BackgroundPlayer(["--events-fd", "1", server.url("503-for", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 40), 0, player.stderr)
    XCTAssertEqual(retries(player).compactMap { $0["in_ms"] as? Int }, [3000], player.stdout)
    let asked = server.requests("/503-for/").map(\.time)
    XCTAssertGreaterThanOrEqual((asked.dropFirst().first ?? 0) - (asked.first ?? 0), 2.9, "asked again too soon")
    XCTAssertEqual(player.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "eof")
  }

  func testAServerThatStaysDownIsANetworkErrorOnceTheBudgetIsSpent() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.clip())
    defer { server.stop() }
    let started = Date()
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--retry-for", "3", "--error-linger-ms", "0", server.url("503", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 40), 1, player.stderr)
    XCTAssertEqual(retries(player).compactMap { $0["attempt"] as? Int }, [1, 2], player.stdout)
    XCTAssertEqual(retries(player).first?["of"] as? Int, 2)
    XCTAssertGreaterThan(Date().timeIntervalSince(started), 2.9, "both waits were waited")
    let error = player.events.first { $0["event"] as? String == "error" }
    XCTAssertEqual(error?["kind"] as? String, "network", player.stdout)
  }

  /// Paused while waiting to try again, it stops trying; quitting then is immediate.
  func testAPauseStopsTheTriesAndQuitIsImmediate() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.clip())
    defer { server.stop() }
    let title = "retry-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", server.url("503", "clip.mp4")])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    let deadline = Date(timeIntervalSinceNow: 10)
    while retries(player).isEmpty && Date() < deadline { usleep(50_000) }
    Screen.press("space", title: title)
    usleep(4_000_000)
    XCTAssertEqual(retries(player).count, 1, "paused, it tried again: \(player.stdout)")
    let asked = Date()
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    XCTAssertLessThan(Date().timeIntervalSince(asked), 2, "quit waited on the retry")
    XCTAssertEqual(player.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "user-quit")
  }

  /// A stream that breaks off in the middle and comes back is tried again by the same rule, from where it stopped:
  /// the tries are events, the state says buffering meanwhile, and every picture of the film is shown once.
  func testAStreamThatBreaksInTheMiddleResumesWhereItStopped() throws {
    try Screen.requireDisplay()
    // Half way through, the answer breaks off and the server answers 503 for 4 s.
    let server = try Self.server(try Self.longerClip(), ["--cut", "0.5", "--down", "4"])
    defer { server.stop() }
    let player = try BackgroundPlayer(["--events-fd", "1", server.url("disconnect", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 60), 0, player.stderr)
    let tries = retries(player)
    XCTAssertFalse(tries.isEmpty, "no retry event: \(player.stdout)")
    XCTAssertEqual(tries.compactMap { $0["attempt"] as? Int }, (0..<tries.count).map { $0 + 1 }, player.stdout)
    // The same words as at the open: the server is asked again what the matter is.
    XCTAssertEqual(tries.first?["reason"] as? String, "server returned 503", "\(tries)")
    let buffering = player.events.first { $0["event"] as? String == "state" && $0["state"] as? String == "buffering" }
    XCTAssertGreaterThan(buffering?["position_ms"] as? Int ?? 0, 1000, "the break came while playing: \(player.stdout)")
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    let stats = ended?["stats"] as? [String: Any]
    let shown = (stats?["presented"] as? Int ?? 0) + (stats?["dropped"] as? Int ?? 0)
    // The picture on screen at the break is the first after it again (the clock stood inside it); nothing skipped.
    XCTAssertTrue((180...183).contains(shown), "every picture of the 6 s at 30 fps, none skipped: \(stats ?? [:])")
    XCTAssertGreaterThanOrEqual(stats?["presented"] as? Int ?? 0, 175, "\(stats ?? [:])")
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "error" }, player.stdout)
  }

  /// One that stays down is a network error once the tries are spent, and the host learns where playback stopped.
  func testAStreamThatBreaksAndStaysDownEndsWithItsPosition() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.longerClip(), ["--cut", "0.5", "--down", "-1"])
    defer { server.stop() }
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--retry-for", "3", "--error-linger-ms", "0", server.url("disconnect", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 60), 1, player.stderr)
    XCTAssertEqual(retries(player).compactMap { $0["attempt"] as? Int }, [1, 2], player.stdout)
    let error = player.events.first { $0["event"] as? String == "error" }
    XCTAssertEqual(error?["kind"] as? String, "network", player.stdout)
    XCTAssertGreaterThan(error?["position_ms"] as? Int ?? 0, 1000, "where it stopped: \(player.stdout)")
    // Never before a position already told (the tries read a few pictures back).
    let told = player.events.compactMap { $0["event"] as? String == "progress" ? $0["position_ms"] as? Int : nil }
    XCTAssertGreaterThanOrEqual(error?["position_ms"] as? Int ?? 0, told.max() ?? 0, player.stdout)
    // Not "cannot open": it played for a while.
    let url = server.url("disconnect", "clip.mp4")
    XCTAssertEqual(error?["message"] as? String, "stopped playing '\(url)': server returned 503", player.stdout)
  }

  /// A stream whose server breaks off and then takes every connection without ever answering (hung): each try ends
  /// 20 s after the last byte came (FFmpeg's own reconnect, at 15 s, first gets its chance), and the host hears it
  /// with that reason. FFmpeg reconnected by itself, each new connection waiting 15 s, and the demuxer read again:
  /// 90 s of "buffering" before the first try. Meanwhile the server is asked what the matter is, with the clock held
  /// where the stream broke: it ran on, and the try went there, past the end (the error told 7360 ms of a 6 s clip,
  /// and "invalid data").
  func testAServerThatHangsAfterABreakEndsEachTryTwentySecondsAfterItsLastByte() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.longerClip(), ["--cut", "0.4", "--down", "-1", "--slow", "600"])
    defer { server.stop() }
    let url = server.url("disconnect", "clip.mp4")
    let started = Date()
    let player = try BackgroundPlayer(["--events-fd", "1", "--retry-for", "1", "--error-linger-ms", "0", url])
    XCTAssertEqual(player.wait(timeout: 90), 1, "\(player.stdout)\n\(player.stderr)")
    let took = Date().timeIntervalSince(started)
    let cut = try XCTUnwrap(server.cuts.first, "\(server.requests.map(\.path))")
    let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: try Self.longerClip())[.size] as? Int)
    let reason = "the server sent nothing for 20 s at byte \(cut) of \(size)"
    XCTAssertEqual(retries(player).compactMap { $0["reason"] as? String }, [reason], player.stdout)
    let error = player.events.first { $0["event"] as? String == "error" }
    XCTAssertEqual(error?["message"] as? String, "stopped playing '\(url)': \(reason)", player.stdout)
    // Where it stopped: after what was shown, and no further than what had come.
    let told = player.events.compactMap { $0["event"] as? String == "progress" ? $0["position_ms"] as? Int : nil }
    let position = error?["position_ms"] as? Int ?? 0
    XCTAssertGreaterThanOrEqual(position, told.max() ?? 0, player.stdout)
    XCTAssertGreaterThan(position, 1000, player.stdout)
    XCTAssertLessThan(position, 4000, "the clip broke at 40 % of its 6 s: \(player.stdout)")
    // Two waits of 20 s (the break, the try), each then asking the server (at most 10 s), and the try's 1 s.
    XCTAssertLessThan(took, 75, player.stdout)
  }

  /// A seek while the server has stopped sending is taken at once: the blocked read is broken for it, and the new
  /// connection brings the rest. It waited for the stall to end (15 s), the clock meanwhile running on without data
  /// once the stall broke.
  func testASeekDuringAStallIsTakenAtOnce() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.longerClip(), ["--cut", "0.05", "--stall", "40"])
    defer { server.stop() }
    let title = "stall-seek-\(UUID().uuidString.prefix(6))"
    let started = Date()
    let player = try BackgroundPlayer.window([server.url("stall", "clip.mp4")], title: title)
    XCTAssertNotNil(player.waitForEvent(timeout: 20) { $0["state"] as? String == "buffering" }, player.stdout)
    usleep(3_000_000)  // a connection that has hung for seconds, not one a moment slow
    let asked = player.events.count
    Screen.press("Right", title: title)
    let moved = player.waitForEvent(after: asked, timeout: 5) { ($0["position_ms"] as? Int ?? 0) >= 5000 }
    XCTAssertNotNil(moved, "the seek waited for the stall: \(player.stdout)")
    XCTAssertEqual(player.wait(timeout: 60), 0, player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertLessThan(Date().timeIntervalSince(started), 14, player.stdout)
  }

  /// A pause while the server is silent is a pause to the host: `paused`, and progress that says so. It was
  /// `paused` and then `playing` at once, and `buffering` in every progress once the stall broke.
  func testAPauseWhileBufferingIsTold() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.longerClip(), ["--cut", "0.05", "--stall", "40"])
    defer { server.stop() }
    let title = "stall-pause-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer.window([server.url("stall", "clip.mp4")], title: title)
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(player.waitForEvent(timeout: 20) { $0["state"] as? String == "buffering" }, player.stdout)
    let asked = player.events.count
    Screen.press("space", title: title)
    usleep(2_500_000)
    let after = player.events.dropFirst(asked)
    let states = after.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertEqual(states, ["paused"], player.stdout)
    let progress = after.filter { $0["event"] as? String == "progress" }.compactMap { $0["state"] as? String }
    XCTAssertFalse(progress.isEmpty, player.stdout)
    XCTAssertEqual(Set(progress), ["paused"], player.stdout)
    Screen.press("q", title: title)
  }

  /// A stream with sound that breaks off and whose server then answers slowly (each answer a 503, 2.5 s late): the
  /// try, a seek, waits longer for its first picture than a video track that gives none is given, and that must not
  /// count, the network being the reason. The tries run out as a network error with the position; the video was
  /// given up during them (playing the sound alone, buffering for ever, the clock past the end) until this was fixed.
  func testSlowTriesOfABrokenStreamEndInAnErrorWithTheVideoKept() throws {
    try Screen.requireDisplay()
    let server = try Self.server(try Self.longerClipWithSound(), ["--cut", "0.3", "--down", "-1", "--slow", "2.5"])
    defer { server.stop() }
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--retry-for", "1", "--error-linger-ms", "0", server.url("disconnect", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 90), 1, "\(player.stdout)\n\(player.stderr)")
    XCTAssertEqual(retries(player).compactMap { $0["attempt"] as? Int }, [1], player.stdout)
    XCTAssertFalse(player.stdout.contains("playing the sound only"), "the video was given up: \(player.stdout)")
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "ended" }, player.stdout)
    let error = player.events.first { $0["event"] as? String == "error" }
    XCTAssertEqual(error?["kind"] as? String, "network", player.stdout)
    XCTAssertGreaterThan(error?["position_ms"] as? Int ?? 0, 1000, "where it stopped: \(player.stdout)")
  }

  /// A server that breaks off at the same byte each time it is asked, down a moment after each break: each try's seek
  /// shows the picture where playback stopped and breaks again. The count goes on from try to try and ends in a
  /// network error with the position; it started again at every try's picture, trying for as long as the server
  /// broke (for ever, had it never stopped).
  func testAStreamThatBreaksAtTheSamePlaceEachTimeRunsOutOfTries() throws {
    try Screen.requireDisplay()
    let cuts = Array(repeating: "0.5", count: 3).joined(separator: ",")
    let server = try Self.server(try Self.longerClip(), ["--cut", cuts, "--down", "6"])
    defer { server.stop() }
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--retry-for", "3", "--error-linger-ms", "0", server.url("disconnect", "clip.mp4")])
    XCTAssertEqual(player.wait(timeout: 90), 1, "\(player.stdout)\n\(player.stderr)")
    XCTAssertEqual(retries(player).compactMap { $0["attempt"] as? Int }, [1, 2], player.stdout)
    XCTAssertEqual(server.cuts.count, 2, "the try that got through broke again: \(server.cuts)")
    let error = player.events.first { $0["event"] as? String == "error" }
    XCTAssertEqual(error?["kind"] as? String, "network", player.stdout)
    XCTAssertGreaterThan(error?["position_ms"] as? Int ?? 0, 1000, "where it stopped: \(player.stdout)")
  }

  /// A stream of sound alone that breaks off is tried again too (it has no pictures to run out: its sound does),
  /// and once the tries are spent the host learns where it stopped.
  func testASoundStreamThatBreaksIsTriedAgainAndEndsWithItsPosition() throws {
    try Screen.requireDisplay()
    let sound = try Self.sound(seconds: 8)
    let server = try Self.server(sound, as: "sound.m4a", ["--cut", "0.5", "--down", "-1"])
    defer { server.stop() }
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--retry-for", "3", "--error-linger-ms", "0", server.url("disconnect", "sound.m4a")])
    XCTAssertEqual(player.wait(timeout: 60), 1, player.stderr)
    // One try or two: the budget counts the time each try takes to run out of sound as well as the waits.
    let attempts = retries(player).compactMap { $0["attempt"] as? Int }
    XCTAssertEqual(attempts, Array(1...max(1, attempts.count)), player.stdout)
    XCTAssertLessThanOrEqual(attempts.count, 2, player.stdout)
    XCTAssertFalse(
      player.events.contains { $0["event"] as? String == "ended" }, "a break is not an end: \(player.stdout)")
    let error = player.events.first { $0["event"] as? String == "error" }
    XCTAssertEqual(error?["kind"] as? String, "network", player.stdout)
    XCTAssertGreaterThan(error?["position_ms"] as? Int ?? 0, 1000, "where it stopped: \(player.stdout)")
  }

  /// Sound that breaks off twice and comes back each time counts its tries afresh for the second break: a try that
  /// worked (the sound played on) starts the count again, as a picture does for video.
  func testEachBreakOfASoundStreamCountsItsTriesAfresh() throws {
    try Screen.requireDisplay()
    let sound = try Self.sound(seconds: 12)
    let server = try Self.server(sound, as: "sound.m4a", ["--cut", "0.3,0.7", "--down", "4"])
    defer { server.stop() }
    let player = try BackgroundPlayer(["--events-fd", "1", server.url("disconnect", "sound.m4a")])
    XCTAssertEqual(player.wait(timeout: 60), 0, player.stderr)
    let attempts = retries(player).compactMap { $0["attempt"] as? Int }
    // Each 4 s outage takes one try or two, as much of it as the sound read ahead does not cover.
    XCTAssertEqual(attempts.filter { $0 == 1 }.count, 2, "each break starts at try 1: \(player.stdout)")
    XCTAssertLessThanOrEqual(attempts.max() ?? 0, 2, "the second break went on counting: \(attempts)")
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
  }
}
