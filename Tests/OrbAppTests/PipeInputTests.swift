import Foundation
import OrbTestSupport
import XCTest

/// Media piped in (`cat clip | orb-player -`, `yt-dlp -o - URL | orb-player -`, `<(…)`, a named pipe) plays as a file
/// does: the player opens its source more than once and seeks in it, so what comes through is kept (`Spool`).
final class PipeInputTests: XCTestCase {
  /// 10 s of testsrc2 (its picture changes every frame) with a tone, 2 s between key frames: in Matroska, or in MP4
  /// with its index first (`+faststart`, as a download streams it).
  private func clip(_ container: String = "mkv") throws -> String {
    try TestMedia.path(
      "pipe-input.\(container)",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=10", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=10", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
        "-c:a", "aac",
      ] + (container == "mp4" ? ["-movflags", "+faststart"] : []))
  }

  override func setUp() {
    // A player that dies early must fail its test, not end the run: writing to its closed pipe raises SIGPIPE.
    signal(SIGPIPE, SIG_IGN)
  }

  /// The `--frame-at` PNG of `source`; with `shell`, `source` is given in bash, after that command and a pipe
  /// (`cat clip | orb-player … -`), or as a process substitution (`<(cat clip)`).
  private func frameAt(_ seconds: String, _ source: String, shell: String? = nil) throws -> Data {
    let png = NSTemporaryDirectory() + "orb-pipe-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let r =
      shell.map {
        Tool.run(
          "bash", ["-c", "\($0) \"$0\" --frame-at \(seconds) --output '\(png)' \(source)", OrbBinary.path],
          timeout: 60)
      } ?? Orb.run(["--frame-at", seconds, "--output", png, source])
    XCTAssertEqual(r.status, 0, r.stderr)
    return try Data(contentsOf: URL(fileURLWithPath: png))
  }

  func testStandardInputGivesTheSamePicturesAsTheFile() throws {
    let path = try clip()
    let fromFile = try frameAt("7.5", path)
    // An exact seek 7.5 s into what came through the pipe: the same picture, to the byte.
    XCTAssertEqual(try frameAt("7.5", "-", shell: "cat '\(path)' |"), fromFile)
    XCTAssertNotEqual(try frameAt("1.5", path), fromFile, "pictures 6 s apart must differ for this to tell")
    // Process substitution names a pipe (/dev/fd/N); /dev/stdin is standard input by its path.
    XCTAssertEqual(try frameAt("7.5", "<(cat '\(path)')", shell: ""), fromFile)
    XCTAssertEqual(try frameAt("7.5", "/dev/stdin", shell: "cat '\(path)' |"), fromFile)
    // Standard input redirected from the file itself is read in place.
    XCTAssertEqual(try frameAt("7.5", "- < '\(path)'", shell: ""), fromFile)
    // MP4 with its index first: the same.
    let mp4 = try clip("mp4")
    XCTAssertEqual(try frameAt("7.5", "-", shell: "cat '\(mp4)' |"), try frameAt("7.5", mp4))
  }

  /// A raw stream (.h264: no timestamps, so a seek goes back to its first byte and decodes on to the target) from a
  /// writer that is still writing: the pipe's length is not known yet, and FFmpeg's byte seek, held below it, went
  /// nowhere (what the open had read ahead was dropped with the stream's only key picture, and no picture came).
  func testARawStreamFromAWriterStillWritingSeeksToItsStart() throws {
    // Larger than what the open reads to learn the stream (5 MB), so the open is over while the writer still writes.
    let raw = try TestMedia.path(
      "pipe-input-raw-7mb.h264",
      [
        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=20", "-c:v", "libx264", "-preset", "ultrafast",
        "-qp", "10", "-pix_fmt", "yuv420p",
      ])
    let fromFile = try frameAt("2", raw)
    XCTAssertEqual(try frameAt("2", "-", shell: "(cat '\(raw)'; sleep 4) |"), fromFile)
    XCTAssertNotEqual(try frameAt("1", raw), fromFile, "pictures a second apart must differ for this to tell")
  }

  func testAnEmptyPipeSaysNothingCame() {
    let r = Tool.run("sh", ["-c", "true | \"$0\" --probe -", OrbBinary.path], timeout: 30)
    XCTAssertEqual(r.status, 1)
    XCTAssertEqual(Orb.errorLines(r), ["orb-player: cannot open '-': nothing came through it (empty)"], r.stderr)
  }

  func testProbeOfStandardInputHasTheStreamsAndTheLength() throws {
    let path = try clip()
    let r = Tool.run("sh", ["-c", "cat '\(path)' | \"$0\" --probe -", OrbBinary.path], timeout: 60)
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    XCTAssertEqual((json["video"] as? [[String: Any]])?.first?["codec"] as? String, "h264")
    XCTAssertEqual((json["audio"] as? [[String: Any]])?.first?["codec"] as? String, "aac")
    XCTAssertEqual(try XCTUnwrap(json["duration_ms"] as? Int), 10_000, accuracy: 100)
    // Ogg states no length in its header (its last page's time is it): unknown through a pipe, not one guessed from
    // the bit rate and the first bytes (1.4 s for 8 s).
    let ogg = try TestMedia.path("pipe-tone.ogg", ["-f", "lavfi", "-i", "sine=duration=8", "-c:a", "libvorbis"])
    let o = Tool.run("sh", ["-c", "cat '\(ogg)' | \"$0\" --probe -", OrbBinary.path], timeout: 60)
    XCTAssertEqual(o.status, 0, o.stderr)
    let oggJSON = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(o.stdout.utf8)) as? [String: Any])
    XCTAssertNil(oggJSON["duration_ms"], o.stdout)
  }

  func testANamedPipePlays() throws {
    let path = try clip()
    let fifo = NSTemporaryDirectory() + "orb-fifo-\(UUID().uuidString).mkv"
    guard mkfifo(fifo, 0o644) == 0 else { throw TestMediaError("mkfifo \(fifo) failed") }
    defer { unlink(fifo) }
    // The writer starts after the player has opened the pipe and waits for it.
    let fromPipe = try frameAt("7.5", "'\(fifo)'", shell: "(sleep 1; timeout 20 cat '\(path)' > '\(fifo)') &")
    XCTAssertEqual(fromPipe, try frameAt("7.5", path))
  }

  /// A named pipe nothing writes to yet: the window and the log say the player waits for it (it said "Opening…"
  /// for ever, and nothing in the log); once a writer comes, it plays.
  func testTheWindowSaysItWaitsForANamedPipesWriter() throws {
    try Screen.requireDisplay()
    let path = try clip()
    let fifo = NSTemporaryDirectory() + "orb-fifo-\(UUID().uuidString).mkv"
    guard mkfifo(fifo, 0o644) == 0 else { throw TestMediaError("mkfifo \(fifo) failed") }
    defer { unlink(fifo) }
    let title = "fifo-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--events-fd", "1", "--title", title, "--resume-ms", "8000", fifo])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    let deadline = Date(timeIntervalSinceNow: 15)
    while !player.stderr.contains("waiting for something to come through the pipe") && Date() < deadline {
      usleep(100_000)
    }
    XCTAssertTrue(player.stderr.contains("\(fifo): waiting for something to come through the pipe"), player.stderr)
    let writer = Tool.run("bash", ["-c", "timeout 30 cat \"$0\" > \"$1\"", path, fifo], timeout: 40)
    XCTAssertEqual(writer.status, 0, writer.stderr)
    XCTAssertEqual(player.wait(timeout: 30), 0, player.stderr)
    XCTAssertEqual(player.events.last { $0["event"] as? String == "ended" }?["reason"] as? String, "eof", player.stdout)
  }

  /// Writes the file at `path` into `pipe` in 120 pieces over about `seconds`, then closes it; signals when done.
  private func feed(_ path: String, into pipe: Pipe, over seconds: Double) -> DispatchSemaphore {
    let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
    let fed = DispatchSemaphore(value: 0)
    let piece = max(1, data.count / 120)
    let feeder = Thread {
      let out = pipe.fileHandleForWriting
      var offset = 0
      while offset < data.count {
        let end = min(offset + piece, data.count)
        try? out.write(contentsOf: data[offset..<end])
        offset = end
        usleep(UInt32(seconds / 120 * 1e6))
      }
      try? out.close()
      fed.signal()
    }
    feeder.start()
    return fed
  }

  /// The subtitles inside a file coming through a pipe more slowly than it plays show at their time, not once all of
  /// it has come (their reader's first seek made the demuxer read its index at the end first).
  func testSubtitlesInASlowPipeShowAtTheirTime() throws {
    try Screen.requireDisplay()
    let pipe = Pipe()
    let player = try BackgroundPlayer(["--events-fd", "1", "--sid", "1", "-"], input: pipe)
    // testsrc2's busy picture makes the file large enough (about 0.8 MB) to come in over the seconds asked.
    let srt = try TestMedia.file(named: "pipe-cues.srt", contents: SubtitleMedia.srt(SubtitleAppTests.cues))
    let clip = try TestMedia.path(
      "pipe-subtitled.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=8", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=8", "-i", srt, "-map", "0:v", "-map", "1:a", "-map", "2:s",
        "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-c:s", "srt",
      ])
    _ = feed(clip, into: pipe, over: 12)
    let cue = player.waitForEvent(timeout: 30) {
      $0["event"] as? String == "cue" && ($0["text"] as? String ?? "").hasPrefix("First cue")
    }
    XCTAssertNotNil(cue, player.stdout)
    // Shown while it is on (0.5-3 s): before the play head passes its end.
    let events = player.events
    let shown = events.firstIndex { $0["event"] as? String == "cue" && ($0["text"] as? String ?? "") != "" }
    let past = events.firstIndex { $0["event"] as? String == "progress" && ($0["position_ms"] as? Int ?? 0) >= 3000 }
    XCTAssertLessThan(shown ?? Int.max, past ?? Int.max, "the first cue came after its time: \(player.stdout)")
    XCTAssertEqual(player.wait(timeout: 40), 0, player.stderr)
  }

  /// In the window, from a pipe written a little at a time (an MP4 with its index first, over about 6 s, as a
  /// download streams it): the title names standard input, a resume point 4 s in is sought to in what has come,
  /// playing starts before the pipe has ended (the demuxer reads on as a stream does, not to the end for more boxes),
  /// and it plays to the end.
  func testTheWindowPlaysStandardInputWithAResumePoint() throws {
    try Screen.requireDisplay()
    let pipe = Pipe()
    let player = try BackgroundPlayer(["--events-fd", "1", "--resume-ms", "4000", "-"], input: pipe)
    let fed = feed(try clip("mp4"), into: pipe, over: 6)
    // The window is named for what it plays.
    XCTAssertNotNil(Screen.waitForWindow(title: "standard input"), player.stderr)
    let playing = player.waitForEvent(timeout: 30) {
      $0["event"] as? String == "state" && $0["state"] as? String == "playing"
    }
    XCTAssertNotNil(playing, player.stdout)
    XCTAssertEqual(fed.wait(timeout: .now()), .timedOut, "playing began only once the whole pipe had come")
    let status = player.wait(timeout: 60)
    XCTAssertEqual(status, 0, player.stderr)
    let ended = try XCTUnwrap(player.events.first { $0["event"] as? String == "ended" }, player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof")
    XCTAssertEqual(try XCTUnwrap(ended["position_ms"] as? Int), 10_000, accuracy: 200)
    // From 4 s to the end: about 150 of the 250 pictures, not all of them.
    let stats = try XCTUnwrap(ended["stats"] as? [String: Any])
    let shown = try XCTUnwrap(stats["presented"] as? Int) + (stats["dropped"] as? Int ?? 0)
    XCTAssertTrue((130...160).contains(shown), "presented and dropped \(shown)")
  }
}
