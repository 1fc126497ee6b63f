import Foundation
import OrbTestSupport
import XCTest

/// Sound in the app: the notice when there is none, and playback that goes on regardless.
final class AudioAppTests: XCTestCase {
  static func clipWithSound() throws -> String {
    try TestMedia.path(
      "av-3s.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=3", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=3", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt",
        "yuv420p", "-c:a", "aac", "-ac", "2",
      ])
  }

  func testWithoutPipeWireTheVideoPlaysToTheEndOnTheSystemClock() throws {
    try Screen.requireDisplay()
    let clip = try Self.clipWithSound()
    let empty = NSTemporaryDirectory() + "orb-no-pw-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: empty) }
    var env = ProcessInfo.processInfo.environment
    env["XDG_RUNTIME_DIR"] = empty
    env["PIPEWIRE_RUNTIME_DIR"] = empty
    env["PIPEWIRE_REMOTE"] = nil
    let started = Date()
    let r = Tool.run(OrbBinary.path, ["--events-fd", "1", clip], environment: env, timeout: 30)
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertGreaterThan(Date().timeIntervalSince(started), 2.8)
    XCTAssertEqual(r.stderr.components(separatedBy: "no audio output").count - 1, 1, r.stderr)
    XCTAssertTrue(r.stdout.contains("\"reason\":\"eof\""), r.stdout)
  }

  /// Ctrl+plus and Ctrl+minus set the sound 100 ms later or earlier than the picture, as in mpv: the window says
  /// so, the host hears it in `settings`, and playback goes on to the end.
  func testControlPlusAndMinusSetTheAudioDelay() throws {
    try Screen.requireDisplay()
    let title = "audio-delay-\(UUID().uuidString.prefix(6))"
    let clip = try TestMedia.path(
      "av-8s.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=8", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=8", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt",
        "yuv420p", "-c:a", "aac", "-ac", "2",
      ])
    let player = try BackgroundPlayer(["--events-fd", "1", "--title", title, clip])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(player.waitForEvent { $0["event"] as? String == "state" }, player.stdout)
    XCTAssertNotNil(player.waitForEvent { $0["event"] as? String == "settings" }, player.stdout)
    // Without Ctrl, plus and minus do nothing to it.
    for key in ["plus", "minus", "equal", "KP_Subtract"] { Screen.press(key, title: title) }
    let delays = {
      player.events.compactMap { $0["event"] as? String == "settings" ? $0["audio_delay_ms"] as? Int : nil }
    }
    XCTAssertEqual(delays().last, 0, player.stdout)
    Screen.press("ctrl+plus", times: 3, gapMs: 150, title: title)
    XCTAssertNotNil(player.waitForEvent { $0["audio_delay_ms"] as? Int == 300 }, player.stdout)
    try Accessibility.require()
    let said = try Accessibility.wait(player.process.processIdentifier) { tree in
      tree.all.contains { $0.role == "label" && $0.text == "Audio delay +300 ms" }
    }
    XCTAssertTrue(said.all.contains { $0.text == "Audio delay +300 ms" }, "\(said.all.map(\.text))")
    Screen.press("ctrl+minus", times: 5, gapMs: 150, title: title)
    XCTAssertNotNil(player.waitForEvent { $0["audio_delay_ms"] as? Int == -200 }, player.stdout)
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    XCTAssertEqual(Array(delays().suffix(8)), [0, 100, 200, 300, 200, 100, 0, -100, -200].suffix(8), player.stdout)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended?["position_ms"] as? Int ?? 0), 8000, accuracy: 150, player.stdout)
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "error" }, player.stdout)
  }

  func testWithPipeWireTheSoundDrivesPlayback() throws {
    try Screen.requireDisplay()
    let clip = try Self.clipWithSound()
    let r = Tool.run(OrbBinary.path, ["--events-fd", "1", clip], timeout: 30)
    XCTAssertEqual(r.status, 0, r.stderr)
    if ProcessInfo.processInfo.environment["PIPEWIRE_RUNTIME_DIR"] != nil {
      XCTAssertTrue(r.stderr.contains("audio: PipeWire"), r.stderr)
      XCTAssertFalse(r.stderr.contains("no audio output"), r.stderr)
    }
    XCTAssertTrue(r.stdout.contains("\"reason\":\"eof\""), r.stdout)
  }

  /// A host's resume point in a file with sound: it plays from there, heard, to the end, and the host hears the
  /// end. Its sound was dropped as if from before a seek, and the window played on past the end until it was killed.
  func testAResumePointWithSoundPlaysToTheEnd() throws {
    try Screen.requireDisplay()
    let clip = try Self.clipWithSound()
    let started = Date()
    let r = Tool.run(OrbBinary.path, ["--events-fd", "1", "--resume-ms", "1500", clip], timeout: 20)
    XCTAssertEqual(r.status, 0, r.stderr)
    let elapsed = Date().timeIntervalSince(started)
    XCTAssertLessThan(elapsed, 6, "the player did not end: \(r.stdout.suffix(600))")
    let ended = try XCTUnwrap(
      r.stdout.split(separator: "\n").last { $0.contains("\"event\":\"ended\"") }, r.stdout)
    XCTAssertTrue(ended.contains("\"reason\":\"eof\""), String(ended))
    let position = Int(ended.split(separator: "\"position_ms\":").last?.prefix { $0.isNumber } ?? "") ?? 0
    XCTAssertEqual(Double(position), 3000, accuracy: 150, String(ended))
    // Not past the length (the sound's last packet outlasts the pictures: 3019 ms): a host's "watched" read 100.6 %.
    XCTAssertLessThanOrEqual(position, 3000, String(ended))
    if ProcessInfo.processInfo.environment["PIPEWIRE_RUNTIME_DIR"] != nil {
      XCTAssertTrue(r.stderr.contains("audio: PipeWire"), r.stderr)
    }
  }

  /// A video track that gives no picture (all its packets dropped) is dropped; the sound plays to the end.
  func testBrokenVideoTrackLeavesTheSoundPlaying() throws {
    try Screen.requireDisplay()
    let clip = try TestMedia.path(
      "video-without-packets.mkv",
      Clips.pictureAndTone(seconds: 3) + [
        "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-bsf:v", "noise=dropamount=1",
      ])
    let started = Date()
    let r = Tool.run(OrbBinary.path, ["--events-fd", "1", clip], timeout: 30)
    XCTAssertEqual(r.status, 0, r.stderr)
    if ProcessInfo.processInfo.environment["PIPEWIRE_RUNTIME_DIR"] != nil {
      XCTAssertTrue(r.stderr.contains("playing the sound only"), r.stderr)
      XCTAssertGreaterThan(Date().timeIntervalSince(started), 2.8, "3 s of sound")
    }
    XCTAssertTrue(r.stdout.contains("\"reason\":\"eof\""), r.stdout)
  }

  /// A sound file's cover shows in the window, which takes its shape and the song's title and artist, while the sound
  /// plays to its end (it was a black 1280x720 window named after the file, where mpv, VLC and Celluloid show the
  /// cover).
  func testASoundFileShowsItsCover() throws {
    try Screen.requireDisplay()
    let song = try Clips.song("song-cover-3s.m4a", cover: (400, 300), picture: "png", audio: "aac", seconds: 3)
    // Named by its tags, as mpv and Celluloid name it.
    let title = "Orb Song — The Testers"
    let player = try BackgroundPlayer(["--events-fd", "1", song])
    defer { _ = player.wait(timeout: 1) }
    let window = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertEqual(Double(window.width) / Double(window.height), 4.0 / 3.0, accuracy: 0.02, "\(window)")
    usleep(500_000)
    let shot = try Screen.grab(title: title)
    Screen.keep(title: title, as: "sound-file-cover")
    let (left, right) = (
      shot.pixel(x: shot.width / 4, y: shot.height / 2), shot.pixel(x: shot.width * 3 / 4, y: shot.height / 2)
    )
    XCTAssertTrue(left.r > 200 && left.g < 60 && left.b < 60, "the cover's red half: \(left)")
    XCTAssertTrue(right.r < 60 && right.g < 60 && right.b > 200, "the cover's blue half: \(right)")
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
  }

  /// A sound file without a cover names what plays in the middle of the window (its title and artist), where the
  /// window was black.
  func testASoundFileWithoutACoverShowsItsName() throws {
    try Screen.requireDisplay()
    let song = try TestMedia.path(
      "song-plain-3s.m4a",
      [
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3", "-c:a", "aac", "-metadata",
        "title=Orb Song", "-metadata", "artist=The Testers",
      ])
    let title = "Orb Song — The Testers"
    let player = try BackgroundPlayer(["--events-fd", "1", song])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(700_000)
    let shot = try Screen.grab(title: title)
    Screen.keep(title: title, as: "sound-file-name")
    var bright = 0
    for y in stride(from: shot.height / 3, to: shot.height * 2 / 3, by: 2) {
      for x in stride(from: shot.width / 4, to: shot.width * 3 / 4, by: 2) {
        let p = shot.pixel(x: x, y: y)
        if p.r > 150 && p.g > 150 && p.b > 150 { bright += 1 }
      }
    }
    XCTAssertGreaterThan(bright, 100, "no name in the middle of the window")
    Screen.press("s", title: title)  // the name on black is no picture to save
    Screen.press("Right", title: title)  // 5 s on: past the end, which ends it there
    XCTAssertEqual(player.wait(timeout: 20), 0, player.stderr)
    XCTAssertTrue(player.stderr.contains("no screenshot: nothing but sound plays"), player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertLessThanOrEqual(ended?["position_ms"] as? Int ?? 0, 3000, "ended past the end: \(player.stdout)")
  }

  func testNoAudioOptionStaysSilent() throws {
    try Screen.requireDisplay()
    let r = Tool.run(OrbBinary.path, ["--no-audio", try Self.clipWithSound()], timeout: 30)
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertFalse(r.stderr.contains("audio:"), r.stderr)
  }
}

/// PipeWire going away mid-play and coming back, in a session of the test's own (so killing its daemons touches
/// nothing else): playback goes on to the end at its rate, and says what happened.
final class AudioOutputLossTests: XCTestCase {
  /// Eight seconds of 320x240 video with a tone.
  static func eightSeconds() throws -> String {
    try TestMedia.path(
      "av-8s.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=8", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=8", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt",
        "yuv420p", "-c:a", "aac",
      ])
  }

  func testPlaybackGoesOnWhenPipeWireGoesAwayAndComesBack() throws {
    try Screen.requireDisplay()
    let clip = try Self.eightSeconds()
    // Kills only the daemons whose XDG_RUNTIME_DIR is this session's, then starts them again with their environment.
    let script = """
      "$0" --events-fd 1 "$1" & player=$!
      sleep 2.5
      env_of() { tr '\\0' '\\n' < /proc/$1/environ | grep -E '^(PIPEWIRE|XDG|DBUS)'; }
      for p in $(pgrep -x pipewire); do
        if env_of $p | grep -qx "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR"; then saved=$(env_of $p); kill $p; fi
      done
      sleep 2.5
      env $saved pipewire >/dev/null 2>&1 & pw=$!
      sleep 0.3
      env $saved wireplumber >/dev/null 2>&1 & wp=$!
      wait $player; status=$?
      kill $wp $pw 2>/dev/null; wait $wp $pw 2>/dev/null
      exit $status
      """
    let started = Date()
    let r = Tool.run(
      OrbBinary.packageRoot + "/scripts/with-test-env.sh", ["bash", "-c", script, OrbBinary.path, clip], timeout: 90)
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertGreaterThan(Date().timeIntervalSince(started), 7.5)
    XCTAssertTrue(r.stderr.contains("no audio output (PipeWire went away)"), r.stderr)
    XCTAssertTrue(r.stderr.contains("audio: PipeWire is back"), r.stderr)
    XCTAssertTrue(r.stdout.contains("\"reason\":\"eof\""), r.stdout)
  }

  /// The sound server stalling (stopped for 3 s, in a session of its own) while it plays: the host hears the
  /// position stand (speed 0) and never go back. It heard speed 1 throughout, the position ran on over what the
  /// server held, then went back about 90 ms.
  func testAStalledSoundServerIsAPositionThatStandsAndNeverGoesBack() throws {
    try Screen.requireDisplay()
    let script = """
      "$0" --events-fd 1 "$1" & player=$!
      sleep 2.5
      for p in $(pgrep -x pipewire); do
        if tr '\\0' '\\n' < /proc/$p/environ | grep -qx "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR"; then
          kill -STOP $p; sleep 3; kill -CONT $p
        fi
      done
      wait $player
      """
    let clip = try Self.eightSeconds()
    let r = Tool.run(
      OrbBinary.packageRoot + "/scripts/with-test-env.sh", ["bash", "-c", script, OrbBinary.path, clip], timeout: 90)
    XCTAssertEqual(r.status, 0, r.stderr)
    let progress = Orb.events(r.stdout).filter { $0["event"] as? String == "progress" }
    let positions = progress.compactMap { $0["position_ms"] as? Int }
    XCTAssertEqual(positions, positions.sorted(), "the position went back: \(positions)")
    let stood = progress.filter { $0["state"] as? String == "playing" && $0["speed"] as? Double == 0 }
    XCTAssertFalse(stood.isEmpty, "the stall was said to move at speed 1: \(r.stdout)")
    XCTAssertTrue(r.stdout.contains("\"reason\":\"eof\""), r.stdout)
  }
}
