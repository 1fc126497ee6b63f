import Foundation
import OrbTestSupport
import XCTest

/// Network sources against a small HTTP server on the loopback: what a host is told for each kind of failure, and
/// the bearer token on the request.
final class HTTPTests: XCTestCase {
  private var server: FaultServer!

  override func setUpWithError() throws {
    server = try FaultServer(files: ["clip.mp4": try Clips.halves("halves.mp4")])
  }

  override func tearDown() { server?.stop() }

  private func url(_ path: String) -> String { server.origin + path }

  /// `--probe` of `path`: exit status, and the `error` event's kind if there was one.
  private func probe(_ path: String, _ extra: [String] = []) -> (Int32, String?, String) {
    let r = Orb.run(["--probe", "--events-fd", "2"] + extra + [url(path)], timeout: 60)
    let kind =
      Orb.events(r.stderr).first { $0["event"] as? String == "error" }?["kind"] as? String
    return (r.status, kind, r.stderr)
  }

  func testAPlainURLOpens() {
    let (status, kind, stderr) = probe("/file/clip.mp4")
    XCTAssertEqual(status, 0, stderr)
    XCTAssertNil(kind)
  }

  func testEachFailureIsTheKindTheHostExpects() {
    for (path, expected) in [
      ("/404/clip.mp4", "missing"), ("/410/clip.mp4", "missing"), ("/401/clip.mp4", "sign-in"),
      ("/403/clip.mp4", "sign-in"), ("/500/clip.mp4", "network"),
    ] {
      let (status, kind, stderr) = probe(path)
      XCTAssertEqual(status, 1, "\(path): \(stderr)")
      XCTAssertEqual(kind, expected, "\(path): \(stderr)")
      XCTAssertTrue(stderr.contains("cannot open '\(url(path))'"), stderr)
    }
  }

  func testARefusedConnectionIsANetworkError() {
    let r = Orb.run(["--probe", "--events-fd", "1", "http://127.0.0.1:9/clip.mp4"], timeout: 60)
    XCTAssertEqual(r.status, 1)
    XCTAssertTrue(r.stdout.contains("\"kind\":\"network\""), r.stdout + r.stderr)
  }

  func testTheBearerTokenIsSent() {
    XCTAssertEqual(probe("/token/clip.mp4").1, "sign-in", "the server wants a token")
    let (status, kind, stderr) = probe("/token/clip.mp4", ["--auth-token", "orb-test"])
    XCTAssertEqual(server.requests("/token/").last?.header("Authorization"), "Bearer orb-test")
    XCTAssertEqual(status, 0, stderr)
    XCTAssertNil(kind)
  }
}

/// HLS VOD over HTTP, as the media server streams it: a playlist of 4 s segments.
final class HLSTests: XCTestCase {
  func testHLSPlaylistProbesAndSeeksAcrossSegments() throws {
    let dir = NSTemporaryDirectory() + "orb-hls-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let made = Tool.run(
      "ffmpeg",
      [
        "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=12", "-c:v", "libx264",
        "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "50", "-f", "hls", "-hls_time", "4",
        "-hls_playlist_type", "vod", "-hls_segment_filename", dir + "/seg_%03d.ts", dir + "/index.m3u8",
      ], timeout: 120)
    XCTAssertTrue(made.succeeded, made.stderr)
    let server = try FaultServer(serving: dir)
    defer { server.stop() }
    let url = server.url("file", "index.m3u8")
    let probe = Orb.run(["--probe", url], timeout: 60)
    XCTAssertEqual(probe.status, 0, probe.stderr)
    XCTAssertTrue(probe.stdout.contains("\"container\" : \"hls\""), probe.stdout)
    XCTAssertTrue(probe.stdout.contains("\"codec\" : \"h264\""), probe.stdout)
    // A frame in the third segment, and the same frame from the file straight: the seek lands where it should.
    let png = NSTemporaryDirectory() + "orb-hls-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let frame = Orb.run(["--frame-at", "9.0", "--output", png, url], timeout: 60)
    XCTAssertEqual(frame.status, 0, frame.stderr)
    let image = try RGBImage(png: png)
    XCTAssertEqual(image.width, 640)
    XCTAssertEqual(image.height, 360)
    let reference = NSTemporaryDirectory() + "orb-hls-ref-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: reference) }
    XCTAssertTrue(
      Tool.run("ffmpeg", ["-v", "error", "-y", "-ss", "9.0", "-i", url, "-frames:v", "1", reference], timeout: 60)
        .succeeded)
    let theirs = try RGBImage(png: reference)
    // testsrc2 prints its time and frame number top left: the same frame has the same digits there. Compared on
    // brightness, which chroma upsampling does not touch (the next frame differs in about 60 pixels, this in none).
    func brightness(_ p: RGB) -> Int { (2 * p.r + 5 * p.g + p.b) / 8 }
    var differing = 0
    for y in 0..<60 {
      for x in 0..<220 where abs(brightness(image.pixel(x: x, y: y)) - brightness(theirs.pixel(x: x, y: y))) > 50 {
        differing += 1
      }
    }
    XCTAssertLessThan(differing, 10, "the frame at 9 s is not ffmpeg's frame at 9 s (\(differing) pixels differ)")
  }
}

/// A connection that breaks in the middle of the file: the player reconnects where it was and plays to the end.
final class ReconnectTests: XCTestCase {
  func testABrokenConnectionResumesWhereItWas() throws {
    // Matroska is read front to back, so the break comes in the middle of the frames.
    let clip = try TestMedia.path(
      "reconnect-4s.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4", "-c:v", "libx264", "-preset", "ultrafast",
        "-g", "25",
      ])
    // The first answer that reaches a third of the file breaks off there.
    let server = try FaultServer(files: ["clip.mkv": clip], options: ["--cut", "0.33"])
    defer { server.stop() }
    let r = Orb.run(["--benchmark", "--size", "160x120", server.url("disconnect", "clip.mkv")], timeout: 120)
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    XCTAssertEqual(json["frames"] as? Int, 100, "every frame, though the first answer broke off: \(r.stdout)")
    let cut = try XCTUnwrap(server.cuts.first, "the answer did not break off")
    XCTAssertTrue(
      server.requests.contains { $0.header("Range") == "bytes=\(cut)-" },
      "asked again from the byte it had reached (\(cut)): \(server.requests.map { $0.header("Range") ?? "-" })")
  }
}

/// A server that pauses in the middle of the file: the window says it is buffering, the host hears it, and playback
/// goes on to the end when data comes again.
final class BufferingTests: XCTestCase {
  func testAStalledStreamIsReportedAsBufferingAndThenPlaysOn() throws {
    try Screen.requireDisplay()
    let clip = try TestMedia.path(
      "buffering-6s.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=6", "-c:v", "libx264", "-preset", "ultrafast",
        "-g", "25",
      ])
    // Half the file, then nothing for 6 s, then the rest.
    let server = try FaultServer(files: ["clip.mkv": clip], options: ["--stall", "6"])
    defer { server.stop() }
    let r = Orb.run(["--events-fd", "1", server.url("stall", "clip.mkv")], timeout: 60)
    XCTAssertEqual(r.status, 0, r.stderr)
    let states = Orb.events(r.stdout).filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertTrue(states.contains("buffering"), "states: \(states)")
    XCTAssertEqual(states.last, "playing", "states: \(states)")
    XCTAssertTrue(r.stdout.contains("\"reason\":\"eof\""), r.stdout)
  }
}

/// A server that sends the file at a third of its bit rate (a trickle): playback waits for data again and again,
/// says so each time, and never races or drops a frame to catch up.
final class TrickleTests: XCTestCase {
  func testATrickleIsBufferingNotSlowMotion() throws {
    try Screen.requireDisplay()
    let clip = try TestMedia.path(
      "trickle-4s.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4", "-c:v", "libx264", "-preset", "ultrafast",
        "-b:v", "300k", "-g", "25",
      ])
    let bytes = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
    let rate = bytes / 4 / 3  // a third of real time
    let server = try FaultServer(files: ["clip.mkv": clip], options: ["--rate", "\(rate)"])
    defer { server.stop() }
    let r = Orb.run(["--events-fd", "1", server.url("trickle", "clip.mkv")], timeout: 90)
    XCTAssertEqual(r.status, 0, r.stderr)
    let events = Orb.events(r.stdout)
    let states = events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertGreaterThanOrEqual(states.filter { $0 == "buffering" }.count, 2, "states: \(states)")
    XCTAssertEqual(states.last, "playing", "states: \(states)")
    let ended = try XCTUnwrap(events.first { $0["event"] as? String == "ended" }, r.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof")
    let stats = try XCTUnwrap(ended["stats"] as? [String: Any])
    XCTAssertLessThanOrEqual(stats["dropped"] as? Int ?? 99, 2, "the clock waited for the pictures: \(stats)")
    XCTAssertGreaterThanOrEqual(stats["presented"] as? Int ?? 0, 98, "\(stats)")
  }

  /// Sound alone waits for data too: the state says so, and the whole length is heard.
  func testATrickleOfSoundAloneIsBuffering() throws {
    try Screen.requireDisplay()
    let clip = try TestMedia.path(
      "trickle-sound-4s.mka",
      ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4", "-c:a", "aac", "-b:a", "128k"])
    let bytes = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
    let server = try FaultServer(files: ["clip.mka": clip], options: ["--rate", "\(bytes / 4 / 3)"])
    defer { server.stop() }
    let r = Orb.run(["--events-fd", "1", server.url("trickle", "clip.mka")], timeout: 90)
    XCTAssertEqual(r.status, 0, r.stderr)
    let events = Orb.events(r.stdout)
    let states = events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertTrue(states.contains("buffering"), "states: \(states)")
    let ended = try XCTUnwrap(events.first { $0["event"] as? String == "ended" }, r.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof")
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 4000, accuracy: 200, r.stdout)
  }
}

/// Failures FFmpeg calls "input/output error" are explained in words a person can act on.
final class HTTPReasonTests: XCTestCase {
  func testARedirectLoopAndAServerThatCannotSeekAreNamed() throws {
    let clip = try TestMedia.path(
      "moov-last-2s.mp4",
      ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-c:v", "libx264", "-preset", "ultrafast"])
    let server = try FaultServer(files: ["clip.mp4": clip])
    defer { server.stop() }
    for (mode, reason) in [
      ("loop-a", "too many redirects"), ("norange", "the server cannot seek in it (it ignores range requests)"),
    ] {
      let url = server.url(mode, "clip.mp4")
      let r = Orb.run(["--frame-at", "0.5", "--output", NSTemporaryDirectory() + "never.png", url], timeout: 60)
      XCTAssertEqual(r.status, 1, r.stderr)
      XCTAssertEqual(Orb.errorLines(r).count, 1, r.stderr)
      XCTAssertTrue(r.stderr.contains("cannot open '\(url)': \(reason)"), r.stderr)
    }
  }
}

/// Quitting never waits on the network: a server that accepts the connection and never answers holds the open,
/// and `q` still ends the player at once, with the `ended` event the host needs.
final class QuitWhileConnectingTests: XCTestCase {
  func testQuitWhileConnectingIsImmediate() throws {
    try Screen.requireDisplay()
    let server = try FaultServer()
    defer { server.stop() }
    let title = "connecting-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer([
      "--title", title, "--events-fd", "1", "--resume-ms", "90000", server.url("silent", "never.mkv"),
    ])
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_500_000)  // the open is blocked on the silent server now
    XCTAssertTrue(player.process.isRunning)
    let asked = Date()
    Screen.press("q", title: title)
    let status = player.wait(timeout: 10)
    let took = Date().timeIntervalSince(asked)
    XCTAssertEqual(status, 0, player.stderr)
    // Before the interrupt callback this took the whole 15 s read timeout; a loaded 2-core machine needs a margin.
    XCTAssertLessThan(took, 2.0, "quit took \(took) s")
    let ended = player.events.first { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "user-quit", player.stdout)
    XCTAssertEqual(ended?["position_ms"] as? Int, 90000, "nothing played: the resume point stands: \(player.stdout)")
  }
}
