import Foundation
import OrbTestSupport
import XCTest

/// Keys a person uses every day, as the window answers them: fine seeks, frame steps, the screenshot.
final class KeyTests: XCTestCase {
  private func start(_ args: [String], title: String, environment: [String: String] = [:]) throws
    -> BackgroundPlayer
  {
    try BackgroundPlayer.window(args, title: title, environment: environment)
  }

  /// The position the host hears next (progress comes once a second).
  private func nextPosition(_ player: BackgroundPlayer) -> Int? {
    let seen = player.events.count
    let deadline = Date(timeIntervalSinceNow: 3)
    while Date() < deadline {
      if let p = player.events.dropFirst(seen).last(where: { $0["event"] as? String == "progress" }) {
        return p["position_ms"] as? Int
      }
      usleep(50_000)
    }
    return nil
  }

  /// Paused at 1 s of a 30 fps clip: Shift+Right is one second on, `.` one frame on, `,` one frame back; the player
  /// stays paused throughout.
  func testShiftArrowsAndFrameStepsMoveExactly() throws {
    let title = "keys-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", "--resume-ms", "1000", try Clips.moving(seconds: 12)], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(800_000)
    Screen.press("shift+Right", title: title)
    usleep(300_000)
    XCTAssertEqual(Double(nextPosition(player) ?? 0), 2000, accuracy: 5, player.stdout)
    for _ in 0..<3 {
      Screen.press("period", title: title)
      usleep(250_000)
    }
    XCTAssertEqual(Double(nextPosition(player) ?? 0), 2100, accuracy: 5, "three frames of 1/30 s on: \(player.stdout)")
    Screen.press("comma", title: title)
    usleep(250_000)
    XCTAssertEqual(Double(nextPosition(player) ?? 0), 2066.7, accuracy: 5, "one frame back: \(player.stdout)")
    let states = player.events.filter { ["state", "progress"].contains($0["event"] as? String) }
      .compactMap { $0["state"] as? String }
    XCTAssertEqual(Set(states), ["paused"], "started paused and stayed paused: \(states)")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0)
    // The host hears how long the first picture and the five seeks took (their speed is the benchmark's business;
    // here, that they were measured at all and are plausible).
    let stats = player.events.last { $0["event"] as? String == "ended" }?["stats"] as? [String: Any]
    let first = stats?["first_frame_ms"] as? Int ?? -1
    XCTAssertTrue((1..<30_000).contains(first), "first_frame_ms \(first): \(player.stdout)")
    XCTAssertEqual(stats?["seeks"] as? Int, 5, player.stdout)
    let seek = stats?["seek_ms_median"] as? Int ?? -1
    XCTAssertTrue((0..<10_000).contains(seek), "seek_ms_median \(seek)")
  }

  /// Page Down goes to the next chapter and no further than the last; Page Up to the one before (each lands on the
  /// chapter's start, exactly), paused throughout.
  func testPageDownAndUpGoThroughTheChapters() throws {
    let title = "chapters-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", "--resume-ms", "1000", try Clips.chaptered()], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(800_000)
    for (key, expected) in [
      ("Page_Down", 4000), ("Page_Down", 8000), ("Page_Down", 8000), ("Page_Up", 4000), ("Page_Up", 0), ("Page_Up", 0),
    ] {
      Screen.press(key, title: title)
      usleep(300_000)
      XCTAssertEqual(Double(nextPosition(player) ?? -1), Double(expected), accuracy: 5, "\(key): \(player.stdout)")
    }
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0)
  }

  /// At 23.976 fps a chapter's start falls between two pictures: Page Down shows the first picture of the chapter
  /// (4.004 s for a chapter at 4 s), where it showed the one before it (3.962 s, the chapter before's last), whose
  /// time was then taken for the chapter before, so that paused, Page Down went to the same chapter again and again.
  func testPageDownReachesEveryChapterAt23976PicturesASecond() throws {
    var metadata = ";FFMETADATA1\n"
    for (start, title) in [(0, "Opening"), (4000, "Middle"), (8000, "End")] {
      metadata += "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(start)\nEND=\(start + 4000)\ntitle=\(title)\n"
    }
    let chapters = try TestMedia.file(named: "chapters-3.txt", contents: metadata)
    let clip = try TestMedia.path(
      "chaptered-23976-12s.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=24000/1001:duration=12", "-i", chapters, "-map", "0",
        "-map_chapters", "1", "-c:v", "libx264", "-preset", "veryfast",
      ])
    let title = "chapters23976-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", "--resume-ms", "1000", clip], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(800_000)
    let picture = 1001.0 / 24
    for (key, expected) in [
      ("Page_Down", 96 * picture), ("Page_Down", 192 * picture), ("Page_Down", 192 * picture),
      ("Page_Up", 96 * picture), ("Page_Up", 0),
    ] {
      Screen.press(key, title: title)
      usleep(300_000)
      XCTAssertEqual(Double(nextPosition(player) ?? -1), expected, accuracy: 5, "\(key): \(player.stdout)")
    }
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0)
  }

  /// A held arrow key repeats faster than a seek shows its picture (here each is decoded from a key frame up to
  /// 10 s back): each press goes 5 s on from where the last one goes. Each counted from the position, which had not
  /// moved yet, and most presses were lost. So for frame steps.
  func testPressesOfAHeldKeyAddUp() throws {
    let clip = try TestMedia.path(
      "sparse-keys-60s.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=60", "-c:v", "libx264", "-preset", "veryfast",
        "-g", "300", "-keyint_min", "300", "-sc_threshold", "0",
      ])
    let title = "held-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", "--resume-ms", "1000", clip], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(800_000)
    Screen.press("Right", times: 8, title: title)
    usleep(1_500_000)
    XCTAssertEqual(Double(nextPosition(player) ?? -1), 41_000, accuracy: 5, "eight of +5 s: \(player.stdout)")
    Screen.press("comma", times: 6, gapMs: 20, title: title)
    usleep(1_500_000)
    XCTAssertEqual(
      Double(nextPosition(player) ?? -1), 41_000 - 6000.0 / 30, accuracy: 5, "six pictures back: \(player.stdout)")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0)
  }

  /// `--loop` plays a file with sound again from its start when it ends, saying nothing to the host but the position
  /// going back; `L` turns it off, and the next end is the end.
  func testLoopPlaysTheFileAgainUntilLTurnsItOff() throws {
    let title = "loop-\(UUID().uuidString.prefix(6))"
    let player = try start(["--loop", try AudioAppTests.clipWithSound()], title: title)
    defer { _ = player.wait(timeout: 1) }
    // The positions the host hears climb past 1.5 s, then one is back under 1 s.
    func wrapped() -> Bool {
      let positions = player.events.compactMap {
        $0["event"] as? String == "progress" ? $0["position_ms"] as? Int : nil
      }
      guard let high = positions.firstIndex(where: { $0 > 1500 }) else { return false }
      return positions[high...].contains { $0 < 1000 }
    }
    let deadline = Date(timeIntervalSinceNow: 15)
    while !wrapped() && Date() < deadline { usleep(100_000) }
    XCTAssertTrue(wrapped(), "never went back to the start: \(player.stdout)")
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "ended" }, player.stdout)
    Screen.press("shift+l", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended?["position_ms"] as? Int ?? 0), 3000, accuracy: 150, player.stdout)
  }

  /// Times the threads of process `pid` were switched out of their core, all together: every wake-up of a thread
  /// that goes back to sleep counts one.
  private func contextSwitches(_ pid: Int32) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.reduce(0) { total, task in
      let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
      return total
        + status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }.compactMap {
          Int($0.filter(\.isNumber))
        }
        .reduce(0, +)
    }
  }

  /// A paused window does nothing until asked: it stops refreshing once the picture is up (a paused window that
  /// refreshed 60 times a second and fed its sound every 5 ms woke the process about 800 times a second; resting,
  /// about 35), and Space plays at once, the picture moving again.
  func testAPausedWindowRestsAndPlaysAtOnce() throws {
    let title = "rest-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", "--resume-ms", "1000", try Clips.moving(seconds: 12)], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(1_500_000)
    let pid = player.process.processIdentifier
    let before = contextSwitches(pid)
    usleep(2_000_000)
    let resting = contextSwitches(pid) - before
    XCTAssertLessThan(resting, 300, "wake-ups in 2 s paused")
    let still = try Screen.grab(title: title)
    Screen.press("space", title: title)
    usleep(400_000)
    let moving = try Screen.grab(title: title)
    XCTAssertGreaterThan(difference(still, moving), 2, "the picture did not move after Space")
    XCTAssertGreaterThan(nextPosition(player) ?? 0, 1200, "playing on from 1 s: \(player.stdout)")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0)
  }

  /// ffmpeg's own decode of the clip at `seconds` (an exact seek), as the window shows it (640x360).
  private func reference(_ clip: String, at seconds: Double) throws -> RGBImage {
    let png = NSTemporaryDirectory() + "orb-ref-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let made = Tool.run(
      "ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-ss", "\(seconds)", "-i", clip, "-frames:v", "1", png])
    XCTAssertTrue(made.succeeded, made.stderr)
    return try RGBImage(png: png)
  }

  /// Mean difference of two same-sized pictures over a grid, 0-255.
  private func difference(_ a: RGBImage, _ b: RGBImage) -> Double {
    var total = 0
    var n = 0
    for y in stride(from: 4, to: min(a.height, b.height) - 4, by: 6) {
      for x in stride(from: 4, to: min(a.width, b.width) - 4, by: 6) {
        total += a.pixel(x: x, y: y).distance(to: b.pixel(x: x, y: y))
        n += 1
      }
    }
    return Double(total) / Double(max(n, 1))
  }

  /// Which of the frames around `seconds` (30 fps) the screenshot is: -1, 0 or +1 frames off; nil when it is none of
  /// them (a picture from elsewhere, as a key-frame seek would show).
  private func frameOffset(_ shot: RGBImage, _ clip: String, at seconds: Double) throws -> Int? {
    let candidates = try [-1, 0, 1].map { ($0, difference(shot, try reference(clip, at: seconds + Double($0) / 30))) }
    let best = candidates.min { $0.1 < $1.1 }!
    return best.1 < 8 ? best.0 : nil
  }

  /// A resume and an exact seek show the very frame ffmpeg decodes at that time, not one near it. (At a frame's
  /// start the two agree by definition; between two starts the player shows the frame on screen at that moment of
  /// playback, the one that covers it, where `ffmpeg -ss` gives the next.)
  func testResumeAndSeekShowTheExactFrame() throws {
    let clip = try Clips.moving(seconds: 12)
    let title = "exact-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])
    let player = try start(["--paused", "--resume-ms", "3300", clip], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(1_200_000)
    XCTAssertEqual(try frameOffset(try Screen.grab(title: title), clip, at: 3.3), 0, "the resume point's frame")
    Screen.press("shift+Right", title: title)
    usleep(1_000_000)
    XCTAssertEqual(try frameOffset(try Screen.grab(title: title), clip, at: 4.3), 0, "a second on, exactly")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0)
  }

  /// `s` writes the picture as shown, subtitles included and controls left out, into the Pictures folder, says
  /// where in an event, and a second one does not overwrite the first.
  /// `?` opens the list of keys, and `?` again closes it (its search box took the key as text, and kept the window).
  func testQuestionMarkOpensAndClosesTheListOfKeys() throws {
    let title = "keys-list-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", try Clips.moving(seconds: 3)], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(500_000)
    Screen.press("question", title: title)
    XCTAssertNotNil(Screen.waitForWindow(title: "Keyboard shortcuts", timeout: 10), "the list of keys did not open")
    Screen.press("question", title: "Keyboard shortcuts")
    let deadline = Date(timeIntervalSinceNow: 5)
    while Screen.geometry(title: "Keyboard shortcuts") != nil && Date() < deadline { usleep(100_000) }
    XCTAssertNil(Screen.geometry(title: "Keyboard shortcuts"), "? did not close the list of keys")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  /// `s` on sound alone saves the cover when it has one, and nothing, saying so, when the window is only black (it
  /// saved a black picture and said "Screenshot saved").
  func testAScreenshotOfSoundIsItsCoverOrNothing() throws {
    let home = try BackgroundPlayer.temporaryHome(for: self)
    let tone = try TestMedia.path(
      "tone-4s.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4", "-c:a", "aac"])
    let song = try Clips.song("song-cover-4s.m4a", cover: (400, 300), picture: "png", audio: "aac", seconds: 4)
    for (file, saves) in [(tone, false), (song, true)] {
      let title = "shot-sound-\(UUID().uuidString.prefix(6))"
      let player = try start(["--paused", file], title: title, environment: home)
      usleep(1_000_000)
      Screen.press("s", title: title)
      usleep(800_000)
      Screen.press("q", title: title)
      XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
      let shot = player.events.first { $0["event"] as? String == "screenshot" }
      if saves {
        let path = try XCTUnwrap(shot?["path"] as? String, player.stdout)
        let picture = try RGBImage(png: path)
        let left = picture.pixel(x: picture.width / 4, y: picture.height / 2)
        XCTAssertTrue(left.r > 200 && left.b < 60, "the cover's red half: \(left)")
      } else {
        XCTAssertNil(shot, player.stdout)
        XCTAssertTrue(player.stderr.contains("no screenshot"), player.stderr)
      }
    }
  }

  func testScreenshotSavesThePictureWithItsSubtitles() throws {
    let home = try BackgroundPlayer.temporaryHome(for: self)
    let title = "shot-\(UUID().uuidString.prefix(6))"
    let player = try start(
      ["--paused", "--resume-ms", "1000", try SubtitleAppTests.subtitledClip()], title: title,
      environment: home)
    defer { _ = player.wait(timeout: 1) }
    Screen.type([(1, "s"), (0.5, "s"), (0.5, "q")], title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let paths = player.screenshots
    XCTAssertEqual(paths.count, 2, player.stdout)
    XCTAssertEqual(Set(paths).count, 2, "the second screenshot overwrote the first: \(paths)")
    let path = try XCTUnwrap(paths.first)
    XCTAssertTrue(path.hasPrefix("\(home["HOME"]!)/Pictures/"), path)
    let image = try RGBImage(png: path)
    XCTAssertEqual(image.width, 640)
    XCTAssertEqual(image.height, 360)
    let background = image.pixel(x: 20, y: 20)
    XCTAssertLessThanOrEqual(background.distance(to: RGB(r: 0x20, g: 0x30, b: 0x40)), 6, "\(background)")
    let white = (image.height / 2..<image.height).filter { y in
      (0..<image.width).contains { x in
        let p = image.pixel(x: x, y: y)
        return p.r > 225 && p.g > 225 && p.b > 225
      }
    }
    XCTAssertGreaterThan(white.count, 15, "the subtitle is in the screenshot")
  }

  /// A screenshot that cannot be saved (the Pictures folder is a file here) is a warning the host hears too, as a
  /// saved one is told: it heard nothing.
  func testAScreenshotThatCannotBeSavedIsAWarning() throws {
    let home = try BackgroundPlayer.temporaryHome(for: self)
    try Data("not a folder".utf8).write(to: URL(fileURLWithPath: "\(home["HOME"]!)/Pictures"))
    let title = "noshot-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", try Clips.moving(seconds: 3)], title: title, environment: home)
    defer { _ = player.wait(timeout: 1) }
    Screen.type([(1, "s"), (0.5, "q")], title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let warning = player.events.first { $0["event"] as? String == "warning" }?["message"] as? String ?? ""
    XCTAssertTrue(warning.hasPrefix("no screenshot: cannot make \(home["HOME"]!)/Pictures"), player.stdout)
  }

  /// `#` cycles the audio tracks where playback is, saying which one is on: "Audio: 2/2 French (AC-3 stereo)".
  func testAudioTrackKeyCyclesTheTracksInPlace() throws {
    let clip = try TestMedia.path(
      "two-audio-tracks.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=8", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=8", "-f", "lavfi", "-i",
        "sine=frequency=880:sample_rate=48000:duration=8", "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264",
        "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a:0", "aac", "-c:a:1", "ac3", "-ac", "2",
        "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fre",
      ])
    let title = "audio-\(UUID().uuidString.prefix(6))"
    let player = try start([clip], title: title)
    defer { _ = player.wait(timeout: 1) }
    usleep(1_500_000)
    let before = nextPosition(player) ?? 0
    Screen.press("numbersign", title: title)
    usleep(1_200_000)
    XCTAssertTrue(player.stderr.contains("Audio: 2/2 French (AC-3 stereo)"), player.stderr)
    let after = nextPosition(player) ?? 0
    XCTAssertGreaterThan(after, before, "playback goes on")
    XCTAssertLessThan(after - before, 3500, "the switch keeps the place: \(before) → \(after) ms")
    Screen.press("numbersign", title: title)
    usleep(800_000)
    XCTAssertTrue(player.stderr.contains("Audio: 1/2 English (AAC stereo)"), player.stderr)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    XCTAssertFalse(player.events.contains { $0["event"] as? String == "error" }, player.stdout)
  }
}
