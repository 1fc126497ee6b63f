import Foundation
import OrbTestSupport
import XCTest

/// Media piped in (`cat clip | orb-player -`, `yt-dlp -o - URL | orb-player -`, `<(…)`, a named pipe) plays as a file
/// does: the player opens its source more than once and seeks in it, so what comes through is kept (`Spool`).
final class PipeInputTests: XCTestCase {
  /// 10 s of testsrc2 (its picture changes every frame) with a tone, 2 s between key frames, in Matroska (which
  /// streams: playback starts before the pipe has ended).
  private func clip() throws -> String {
    try TestMedia.path(
      "pipe-input.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=10", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=10", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
        "-c:a", "aac",
      ])
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
    // Process substitution names a pipe (/dev/fd/N).
    XCTAssertEqual(try frameAt("7.5", "<(cat '\(path)')", shell: ""), fromFile)
  }

  func testProbeOfStandardInputHasTheStreamsAndTheLength() throws {
    let path = try clip()
    let r = Tool.run("sh", ["-c", "cat '\(path)' | \"$0\" --probe -", OrbBinary.path], timeout: 60)
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    XCTAssertEqual((json["video"] as? [[String: Any]])?.first?["codec"] as? String, "h264")
    XCTAssertEqual((json["audio"] as? [[String: Any]])?.first?["codec"] as? String, "aac")
    XCTAssertEqual(try XCTUnwrap(json["duration_ms"] as? Int), 10_000, accuracy: 100)
  }

  func testANamedPipePlays() throws {
    let path = try clip()
    let fifo = NSTemporaryDirectory() + "orb-fifo-\(UUID().uuidString).mkv"
    guard mkfifo(fifo, 0o644) == 0 else { throw TestMediaError("mkfifo \(fifo) failed") }
    defer { unlink(fifo) }
    // The writer starts after the player has opened the pipe and waits for it.
    let fromPipe = try frameAt("7.5", "'\(fifo)'", shell: "(sleep 1; cat '\(path)' > '\(fifo)') &")
    XCTAssertEqual(fromPipe, try frameAt("7.5", path))
  }

  /// In the window, from a pipe written a little at a time (over about two and a half seconds): the title names standard input, a
  /// resume point 4 s in is sought to in what has come, and it plays to the end.
  func testTheWindowPlaysStandardInputWithAResumePoint() throws {
    let path = try clip()
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let pipe = Pipe()
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(["--events-fd", "1", "--resume-ms", "4000", "-"], input: pipe)
    let feeder = Thread {
      let out = pipe.fileHandleForWriting
      var offset = 0
      while offset < data.count {
        let end = min(offset + 8192, data.count)
        try? out.write(contentsOf: data[offset..<end])
        offset = end
        usleep(20_000)
      }
      try? out.close()
    }
    feeder.start()
    // The window is named for what it plays.
    XCTAssertNotNil(Screen.waitForWindow(title: "standard input"), player.stderr)
    let status = player.wait(timeout: 60)
    XCTAssertEqual(status, 0, player.stderr)
    let events = player.events
    XCTAssertEqual(events.first { $0["event"] as? String == "file" }?["title"] as? String, "standard input")
    let ended = try XCTUnwrap(events.first { $0["event"] as? String == "ended" }, player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof")
    XCTAssertEqual(try XCTUnwrap(ended["position_ms"] as? Int), 10_000, accuracy: 200)
    // From 4 s to the end: about 150 of the 250 pictures, not all of them.
    let presented = try XCTUnwrap((ended["stats"] as? [String: Any])?["presented"] as? Int)
    XCTAssertTrue((130...160).contains(presented), "presented \(presented)")
  }
}
