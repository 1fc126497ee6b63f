import Foundation
import OrbTestSupport
import XCTest

/// The headless modes of the binary: what a host or a script gets back.
final class CommandLineTests: XCTestCase {
  func testVersionAndHelp() {
    let version = Orb.run(["--version"])
    XCTAssertEqual(version.status, 0)
    XCTAssertTrue(version.stdout.hasPrefix("orb-player "), version.stdout)
    let help = Orb.run(["--help"])
    XCTAssertEqual(help.status, 0)
    for option in ["--resume-ms", "--events-fd", "--frame-at", "--probe", "--benchmark", "--video-output"] {
      XCTAssertTrue(help.stdout.contains(option), "--help lacks \(option)")
    }
    // In the session's character set: GLib wrote "?" for "…" before the locale was set.
    var environment = ProcessInfo.processInfo.environment
    environment["LC_ALL"] = "C.UTF-8"
    let utf8 = Tool.run(OrbBinary.path, ["--help"], environment: environment)
    XCTAssertTrue(utf8.stdout.contains("--eq=G1,…,G10"), utf8.stdout)
  }

  /// The release build names first the libraries most symbols are bound to (scripts/build-release.sh): its
  /// reordering of a binary's DT_NEEDED entries, on a copy of this one, leaves a binary that starts.
  func testReorderedLibrariesLeaveABinaryThatStarts() throws {
    let copy = FileManager.default.temporaryDirectory.appendingPathComponent("orb-needed-\(getpid())").path
    try? FileManager.default.removeItem(atPath: copy)
    try FileManager.default.copyItem(atPath: OrbBinary.path, toPath: copy)
    defer { try? FileManager.default.removeItem(atPath: copy) }
    func needed() -> [String] {
      Tool.run("readelf", ["-d", copy]).stdout.split(separator: "\n").compactMap { line in
        guard line.contains("(NEEDED)"), let open = line.lastIndex(of: "["), let close = line.lastIndex(of: "]")
        else { return nil }
        return String(line[line.index(after: open)..<close])
      }
    }
    let before = needed()
    XCTAssertTrue(before.contains("libc.so.6") && before.contains("libglib-2.0.so.0"), "\(before)")
    let script = "\(OrbBinary.packageRoot)/scripts/order_needed.py"
    let moved = Tool.run("python3", [script, copy, "libglib-2.0.so.0", "libc.so.6", "libnot-needed.so.1"])
    XCTAssertTrue(moved.succeeded, moved.stderr)
    let after = needed()
    XCTAssertEqual(Array(after.prefix(2)), ["libglib-2.0.so.0", "libc.so.6"])
    XCTAssertEqual(
      Array(after.dropFirst(2)), before.filter { $0 != "libc.so.6" && $0 != "libglib-2.0.so.0" }, "the rest in order")
    XCTAssertEqual(
      try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int,
      try FileManager.default.attributesOfItem(atPath: OrbBinary.path)[.size] as? Int, "the file keeps its size")
    let version = Tool.run(copy, ["--version"])
    XCTAssertTrue(version.succeeded && version.stdout.hasPrefix("orb-player "), version.stderr)
  }

  /// Highway's load-time timer calibration (pulled in by FFmpeg through libjxl, 7-9 ms of CPU before `main`) is
  /// answered by the binary's own definition (Sources/COrbStartup): the dynamic loader binds it there.
  func testLibraryStartUpWorkIsAnsweredByTheBinary() throws {
    var environment = ProcessInfo.processInfo.environment
    environment["LD_DEBUG"] = "bindings"
    let run = Tool.run(OrbBinary.path, ["--version"], environment: environment)
    XCTAssertTrue(run.succeeded, run.stderr)
    let loaded = Tool.run("ldd", [OrbBinary.path]).stdout.contains("libhwy.so")
    let binding = run.stderr.split(separator: "\n").first { $0.contains("_ZN3hwy8platform15TimerResolutionEv") }
    if loaded {
      let line = try XCTUnwrap(binding, "libhwy is loaded but its timer calibration was never bound")
      XCTAssertTrue(line.contains("orb-player [0]: normal symbol"), String(line))  // the executable, not libhwy
    } else {
      XCTAssertNil(binding, "without libhwy nothing binds to the definition")
    }
  }

  func testBadOptionValuesAreRefusedInWords() {
    for (args, words) in [
      (["--speed", "9", "x.mkv"], "--speed must be between 0.25 and 4"),
      // "nan" parses as a number, and was taken for no value at all (1x; a window instead of --frame-at).
      (["--speed", "nan", "x.mkv"], "--speed must be between 0.25 and 4"),
      (["--frame-at", "nan", "--output", "x.png", "x.mkv"], "--frame-at must be 0 to 10^9 seconds"),
      (["--frame-at", "1e20", "--output", "x.png", "x.mkv"], "--frame-at must be 0 to 10^9 seconds"),
      (["--frame-at", "1", "x.mkv"], "--frame-at needs --output"),
      (["--size", "big", "--benchmark", "x.mkv"], "--size must be WIDTHxHEIGHT"),
      (["--size", "100000x100000", "--benchmark", "x.mkv"], "--size is too large: 16384 pixels a side at most"),
      (["--no-such-option"], "Unknown option"),
    ] {
      let r = Orb.run(args)
      XCTAssertEqual(r.status, 1, "\(args)")
      XCTAssertTrue(r.stderr.contains(words), "\(args): \(r.stderr)")
    }
  }

  /// `--geometry` takes mpv's WxH and WxH+X+Y (X and Y signed), 1 to 5 digits each, sizes 16 to 16384.
  func testGeometryIsReadAsMpvWritesIt() {
    let refusal = "--geometry must be WIDTHxHEIGHT"
    for bad in [
      "1280x", "x720", "1280x720+10", "1280x720+10-", "123456x720", "1280x720 ", "8x720", "1280*720",
      "1280x720+1+2+3", "+1280x720", "1280x720+100000+0",
    ] {
      let r = Orb.run(["--geometry", bad, "--frame-at", "1", "x.mkv"])
      XCTAssertEqual(r.status, 1, bad)
      XCTAssertTrue(r.stderr.contains(refusal), "\(bad): \(r.stderr)")
    }
    for good in ["1280x720", "16x16", "1280x720+0+0", "1280x720-10+20", "640x360+99999-99999"] {
      // Accepted: the next check (--frame-at without --output) is the one that refuses.
      let r = Orb.run(["--geometry", good, "--frame-at", "1", "x.mkv"])
      XCTAssertFalse(r.stderr.contains(refusal), "\(good): \(r.stderr)")
      XCTAssertTrue(r.stderr.contains("--frame-at needs --output"), "\(good): \(r.stderr)")
    }
  }

  func testProbePrintsStreamsAsJSON() throws {
    let clip = try Clips.halves("halves-sar2.mp4", filters: ",setsar=2")
    let r = Orb.run(["--probe", clip])
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    XCTAssertEqual(json["container"] as? String, "mov,mp4,m4a,3gp,3g2,mj2")
    let video = try XCTUnwrap((json["video"] as? [[String: Any]])?.first)
    XCTAssertEqual(video["codec"] as? String, "h264")
    XCTAssertEqual(video["sample_aspect_ratio"] as? String, "2:1")
    XCTAssertEqual(video["display_width"] as? Int, 640)
    XCTAssertEqual(video["color_matrix"] as? String, "bt709")
  }

  func testFileURLsWithEscapesOpenTheFile() throws {
    let clip = try Clips.halves("halves.mp4")
    let spaced = NSTemporaryDirectory() + "orb clip \(UUID().uuidString).mp4"
    try FileManager.default.copyItem(atPath: clip, toPath: spaced)
    defer { try? FileManager.default.removeItem(atPath: spaced) }
    let url = URL(fileURLWithPath: spaced).absoluteString
    XCTAssertTrue(url.contains("%20"), url)
    let r = Orb.run(["--probe", url])
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertTrue(r.stdout.contains("\"codec\" : \"h264\""), r.stdout)
  }

  func testProbeOfTheBuiltInPattern() throws {
    let r = Orb.run(["--probe", "test://bars?size=640x360&rate=25"])
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertTrue(r.stdout.contains("\"width\" : 640"), r.stdout)
    XCTAssertTrue(r.stdout.contains("\"frame_rate\" : 25"), r.stdout)
  }

  /// `--frame-at` writes what the renderer drew: bar centres within ±3 of the source RGB, per matrix and range.
  func testFrameAtBarsPerMatrixAndRange() throws {
    for (matrix, range, tag) in [("bt709", "tv", "bt709"), ("bt601", "tv", "smpte170m"), ("bt709", "pc", "bt709")] {
      let clip = try Clips.bars(matrix: matrix, range: range, tag: tag)
      let png = NSTemporaryDirectory() + "orb-frame-\(UUID().uuidString).png"
      defer { try? FileManager.default.removeItem(atPath: png) }
      let r = Orb.run(["--frame-at", "0.1", "--output", png, clip])
      XCTAssertEqual(r.status, 0, r.stderr)
      let image = try RGBImage(png: png)
      XCTAssertEqual(image.width, 640)
      XCTAssertEqual(image.height, 240)
      for (i, expected) in Clips.bars.enumerated() {
        assertPixel(image, x: 40 + 80 * i, y: 120, approximately: expected, tolerance: 3, "\(matrix) \(range) bar \(i)")
      }
    }
  }

  /// A picture too large to show, in a codec only decoding sizes (MJPEG): named with its size, as an H.264 one is. The
  /// probe's decoder, refused by the same limit, left its size 0, and the stream was passed over: "no video stream".
  func testAPictureTooLargeInMJPEGIsNamedWithItsSize() throws {
    let big = try TestMedia.path(
      "mjpeg-8200x8200.mkv",
      [
        "-f", "lavfi", "-i", "color=c=gray:size=8200x8200:rate=1:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
        "-c:v", "mjpeg", "-c:a", "aac",
      ])
    let out = NSTemporaryDirectory() + "orb-big-\(UUID().uuidString).png"
    let r = Orb.run(["--frame-at", "0", "--output", out, big])
    XCTAssertEqual(r.status, 1)
    XCTAssertTrue(r.stderr.contains("its picture is 8200x8200 pixels, larger than this machine can show"), r.stderr)
    let probe = Orb.run(["--probe", big])
    XCTAssertTrue(probe.stdout.contains("\"width\" : 8200"), probe.stdout)
  }

  /// `--frame-at` past the end writes the last picture, as mpv does, and says so (a script asked for another moment).
  func testFrameAtPastTheEndSaysItWritesTheLastPicture() throws {
    let out = NSTemporaryDirectory() + "orb-past-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: out) }
    let r = Orb.run(["--frame-at", "100", "--output", out, try Clips.moving(seconds: 3)])
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertTrue(r.stderr.contains("0:01:40 is past the end; the last picture, at 0:00:02"), r.stderr)
    XCTAssertTrue(FileManager.default.fileExists(atPath: out))
  }

  /// An output that cannot be written is named with the system's reason (it was a dump of Foundation's error).
  func testFrameAtSaysWhyItsOutputCannotBeWritten() throws {
    let folder = NSTemporaryDirectory() + "orb-out-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder + "/a-folder.png", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for (output, reason) in [
      (folder + "/missing/x.png", "no such file or directory"), (folder + "/a-folder.png", "is a directory"),
    ] {
      let r = Orb.run(["--frame-at", "1", "--output", output, try Clips.moving(seconds: 3)])
      XCTAssertEqual(r.status, 1, r.stderr)
      XCTAssertTrue(r.stderr.contains("cannot write '\(output)': \(reason)"), r.stderr)
    }
  }

  func testFrameAtHonoursSizeAndLetterboxes() throws {
    let clip = try Clips.halves("halves-sar2.mp4", filters: ",setsar=2")
    let png = NSTemporaryDirectory() + "orb-frame-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let r = Orb.run(["--frame-at", "0", "--output", png, "--size", "640x480", clip])
    XCTAssertEqual(r.status, 0, r.stderr)
    let image = try RGBImage(png: png)
    XCTAssertEqual(image.width, 640)
    XCTAssertEqual(image.height, 480)
    assertPixel(image, x: 160, y: 60, approximately: .black, tolerance: 3)
    assertPixel(image, x: 160, y: 240, approximately: .red, tolerance: 3)
    assertPixel(image, x: 480, y: 240, approximately: .blue, tolerance: 3)
    assertPixel(image, x: 480, y: 420, approximately: .black, tolerance: 3)
  }

  /// The mean difference of two 640x360 pictures' pixels over a grid of every 7th row and column.
  static func gridDistance(_ a: RGBImage, _ b: RGBImage) -> Double {
    var total = 0
    var count = 0
    for y in stride(from: 5, to: 360, by: 7) {
      for x in stride(from: 5, to: 640, by: 7) {
        total += a.pixel(x: x, y: y).distance(to: b.pixel(x: x, y: y))
        count += 1
      }
    }
    return Double(total) / Double(count)
  }

  func testFrameAtPicksTheFrameThatCoversTheTime() throws {
    // testsrc2 prints its frame number; frames at 1.0 s and 2.0 s must differ, and 1.0 s must equal ffmpeg's.
    let clip = try Clips.moving(seconds: 3)
    let ours = NSTemporaryDirectory() + "orb-frame-\(UUID().uuidString).png"
    let theirs = NSTemporaryDirectory() + "orb-ref-\(UUID().uuidString).png"
    defer {
      try? FileManager.default.removeItem(atPath: ours)
      try? FileManager.default.removeItem(atPath: theirs)
    }
    XCTAssertEqual(Orb.run(["--frame-at", "1.0", "--output", ours, clip]).status, 0)
    XCTAssertTrue(
      Tool.run("ffmpeg", ["-v", "error", "-y", "-ss", "1.0", "-i", clip, "-frames:v", "1", theirs]).succeeded)
    let a = try RGBImage(png: ours)
    let b = try RGBImage(png: theirs)
    // Mean difference over a grid: colour edges differ a little with each chroma upsampler, frames differ a lot.
    let mean = Self.gridDistance(a, b)
    XCTAssertLessThanOrEqual(mean, 3, "frame at 1.0 s differs from ffmpeg's by \(mean) on average")
    let other = NSTemporaryDirectory() + "orb-frame-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: other) }
    XCTAssertEqual(Orb.run(["--frame-at", "2.0", "--output", other, clip]).status, 0)
    let c = try RGBImage(png: other)
    XCTAssertGreaterThan(Self.gridDistance(a, c), 2 * mean + 1, "frames 1 s apart should differ")
  }

  /// In AVI (MJPEG: every picture a key one; XviD), a time in the second half of a picture's span is that picture,
  /// as ffmpeg's own decode says, not the file's first: the seek went to the next picture, past the time, and then
  /// back to the file's first byte, read as if it were the place sought.
  func testFrameAtInAVIPicksThePictureThatCoversTheTime() throws {
    let codecs = [
      ("moving-3s-mjpeg.avi", ["-c:v", "mjpeg", "-q:v", "5"]),
      ("moving-3s-xvid.avi", ["-c:v", "mpeg4", "-vtag", "xvid"]),
    ]
    for (name, codec) in codecs {
      let clip = try TestMedia.path(name, ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=3"] + codec)
      for (time, frame) in [(0.1, 2), (0.5, 12), (2.9, 72)] {
        let ours = NSTemporaryDirectory() + "orb-frame-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: ours) }
        let r = Orb.run(["--frame-at", "\(time)", "--output", ours, clip])
        XCTAssertEqual(r.status, 0, r.stderr)
        let image = try RGBImage(png: ours)
        // Mean difference over a grid from ffmpeg's decode of the picture and of its neighbours: the picture asked
        // for is the nearest by far (the codecs' own decoders differ a little, pictures a lot).
        let distances = try [frame - 1, frame, frame + 1].map { n -> Double in
          let theirs = NSTemporaryDirectory() + "orb-ref-\(UUID().uuidString).png"
          defer { try? FileManager.default.removeItem(atPath: theirs) }
          let made = Tool.run(
            "ffmpeg", ["-v", "error", "-y", "-i", clip, "-vf", "select=eq(n\\,\(n))", "-frames:v", "1", theirs])
          XCTAssertTrue(made.succeeded, made.stderr)
          return Self.gridDistance(image, try RGBImage(png: theirs))
        }
        XCTAssertLessThan(
          distances[1], 0.6 * min(distances[0], distances[2]), "\(name) at \(time) s: \(distances) from \(frame - 1)..."
        )
      }
    }
  }

  func testBenchmarkReportsEveryFrame() throws {
    let clip = try Clips.moving(seconds: 3)
    let r = Orb.run(["--benchmark", "--size", "320x180", clip], timeout: 120)
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    XCTAssertEqual(json["frames"] as? Int, FFprobe.frameCount(clip))
    XCTAssertGreaterThan(json["fps"] as? Double ?? 0, 0)
    XCTAssertGreaterThan(json["peak_rss_mb"] as? Double ?? 0, 1)
    XCTAssertNotNil(json["cpu_seconds"] as? Double)
  }
}
