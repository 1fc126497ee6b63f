import Foundation
import OrbTestSupport
import XCTest

/// Damaged and wrong inputs: exit status 1, one line naming the file and the reason, never a crash or a hang.
final class AppBadInputTests: XCTestCase {
  struct Case {
    var path: String
    var reason: String
  }

  func cases() throws -> [Case] {
    let dir = NSTemporaryDirectory() + "orb-bad-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let clip = try TestMedia.path(
      "h264-moov-at-end.mp4",
      ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4", "-c:v", "libx264", "-preset", "ultrafast"])
    return [
      Case(path: dir + "/missing.mkv", reason: "no such file"),
      // Standard input is read (PipeInputTests): /dev/null gives nothing (/dev/zero, a device, is refused).
      Case(path: "-", reason: "nothing came through it (empty: /dev/null)"),
      // Escapes that are not UTF-8 give no path: the message named nothing ('').
      Case(path: "file://\(dir)/caf%E9.mp4", reason: "no such file"),
      Case(path: dir, reason: "is a directory"),
      Case(path: try TestMedia.file(named: "empty.mkv", contents: Data()), reason: "empty file"),
      Case(
        path: try TestMedia.file(named: "text.mkv", contents: "just some notes, not a video\n"),
        reason: "not a media file"),
      Case(path: try TestMedia.truncated(clip, bytes: 20_000), reason: "not a media file, or damaged"),
      // Cut short inside their headers: FFmpeg said "end of file" and "invalid argument".
      Case(
        path: try TestMedia.truncated(try Self.sound("flac"), bytes: 681),
        reason: "cut short, or damaged: it ends before its streams begin"),
      Case(
        path: try TestMedia.truncated(try Self.sound("mp3"), bytes: 405),
        reason: "not a media file, or damaged (its data makes no sense)"),
      // FFmpeg said "cannot allocate memory".
      Case(path: try Self.hugeIndex(clip), reason: "damaged: its header asks for more memory than there is"),
    ]
  }

  /// `clip` (an MP4) whose index of sample times says it has 2^31 - 1 entries.
  static func hugeIndex(_ clip: String) throws -> String {
    var data = try Data(contentsOf: URL(fileURLWithPath: clip))
    guard let box = data.range(of: Data("stts".utf8)) else { throw TestMediaError("no stts box in \(clip)") }
    // The box's version and flags (4 bytes), then its entry count.
    data.replaceSubrange((box.upperBound + 4)..<(box.upperBound + 8), with: Data([0x7F, 0xFF, 0xFF, 0xFF]))
    return try TestMedia.file(named: "huge-stts.mp4", contents: data)
  }

  /// 3 s of a tone in `format` (flac, mp3).
  static func sound(_ format: String) throws -> String {
    try TestMedia.path(
      "tone-3s.\(format)", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=3"])
  }

  func testProbeNamesTheFileAndTheReason() throws {
    for c in try cases() {
      let r = Orb.run(["--probe", c.path], timeout: 30)
      XCTAssertFalse(r.timedOut, c.path)
      XCTAssertEqual(r.status, 1, "\(c.path): \(r.stderr)")
      let lines = r.stderr.split(separator: "\n")
      XCTAssertEqual(lines.count, 1, r.stderr)
      XCTAssertEqual(
        lines.first.map(String.init), "orb-player: cannot open '\(c.path)': \(c.reason)" + suffix(r.stderr, c.reason))
    }
  }

  /// Times a file makes up past any real length (a chapter ending 9·10^18 s in, FFmpeg's metadata format, which it
  /// opens as media) are no crash: the probe stopped on an illegal instruction converting them to milliseconds, and
  /// now says what the file lacks. So for numbers given on the command line.
  func testTimesPastAnyRealLengthAreNoCrash() throws {
    let file = try TestMedia.file(
      named: "chapter-for-ever.txt",
      contents: ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1\nSTART=0\nEND=9000000000000000000\ntitle=For ever\n")
    let r = Orb.run(["--probe", file], timeout: 30)
    XCTAssertEqual(r.status, 1, r.stderr)
    XCTAssertTrue(r.stderr.contains("cannot open '\(file)': no video or audio stream in it"), r.stderr)
    // So for a pattern asked to last for ever, and a bit rate of infinity: a clear refusal.
    let endless = Orb.run(["--probe", "test://bars?duration=inf"], timeout: 30)
    XCTAssertEqual(endless.status, 1, endless.stderr)
    XCTAssertTrue(endless.stderr.contains("duration must be seconds, above 0 and at most 1e9"), endless.stderr)
    let rate = Orb.run(["--hls-bitrate", "inf", "--probe", "test://bars"], timeout: 30)
    XCTAssertEqual(rate.status, 1, rate.stderr)
    XCTAssertTrue(rate.stderr.contains("--hls-bitrate must be"), rate.stderr)
  }

  /// The reason may go on after the words we check ("not a media file, or damaged (…)").
  private func suffix(_ line: String, _ reason: String) -> String {
    guard let r = line.range(of: reason) else { return "" }
    return String(line[r.upperBound...]).trimmingCharacters(in: .newlines)
  }

  func testFrameAtFailsCleanly() throws {
    for c in try cases() {
      let r = Orb.run(["--frame-at", "1", "--output", NSTemporaryDirectory() + "never.png", c.path], timeout: 30)
      XCTAssertEqual(r.status, 1, c.path)
      XCTAssertEqual(Orb.errorLines(r).count, 1, r.stderr)
      XCTAssertTrue(r.stderr.contains("'\(c.path)': \(c.reason)"), r.stderr)
    }
  }

  /// In the window: the error shows, the host gets an `error` event, and the player exits 1 by itself.
  func testWindowShowsTheErrorAndExits() throws {
    try Screen.requireDisplay()
    for c in try cases() {
      let title = "bad-\(UUID().uuidString.prefix(8))"
      let player = try BackgroundPlayer([
        "--title", title, "--events-fd", "1", "--error-linger-ms", "1500", c.path,
      ])
      XCTAssertNotNil(Screen.waitForWindow(title: title), "no window for \(c.path)")
      let status = player.wait(timeout: 30)
      XCTAssertEqual(status, 1, "\(c.path): \(player.stderr)")
      XCTAssertEqual(player.stderr.split(separator: "\n").filter { $0.contains("cannot open") }.count, 1)
      XCTAssertTrue(player.stderr.contains("cannot open '\(c.path)': \(c.reason)"), player.stderr)
      let errors = player.events.filter { $0["event"] as? String == "error" }
      XCTAssertEqual(errors.count, 1, player.stdout)
      let kind = errors.first?["kind"] as? String
      XCTAssertEqual(kind, c.reason == "no such file" ? "missing" : "unplayable")
    }
  }

  /// A download cut short plays what it has and ends, and the host is warned that it ends before the length it
  /// states (it heard a clean end half way, and would mark the episode watched); the whole file says nothing.
  func testAFileCutShortSaysSo() throws {
    try Screen.requireDisplay()
    let whole = try RetryTests.longerClipWithSound()
    let size = (try FileManager.default.attributesOfItem(atPath: whole)[.size] as? Int) ?? 0
    let cut = try TestMedia.truncated(whole, bytes: size / 2)
    for (file, short) in [(cut, true), (whole, false)] {
      let player = try BackgroundPlayer(["--events-fd", "1", file])
      XCTAssertEqual(player.wait(timeout: 30), 0, player.stderr)
      let warning = player.events.first { ($0["message"] as? String ?? "").contains("seems cut short") }
      let ended = player.events.last { $0["event"] as? String == "ended" }
      XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
      if short {
        let message = try XCTUnwrap(warning?["message"] as? String, player.stdout)
        XCTAssertTrue(message.contains("of the 0:00:06 it says it lasts"), message)
        XCTAssertLessThan(ended?["position_ms"] as? Int ?? 9999, 4500, player.stdout)
      } else {
        XCTAssertNil(warning, player.stdout)
      }
    }
  }

  /// A download not finished: the file at its full size, zeros where nothing has come (4 GB of them here, sparse,
  /// after a whole 6 s Matroska clip). Playback ends where the data does, with a warning that says so; the demuxer
  /// looked for its next cluster through the zeros at about 180 MB/s, the window "buffering" all the while.
  func testAFileThatIsZerosFromSomePlaceOnEndsThereWithAWarning() throws {
    try Screen.requireDisplay()
    let clip = try TestMedia.path("moving-6s-sine.mkv", ["-i", try RetryTests.longerClipWithSound(), "-c", "copy"])
    let folder = NSTemporaryDirectory() + "orb-zeros-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let padded = folder + "/downloading.mkv"
    try FileManager.default.copyItem(atPath: clip, toPath: padded)
    XCTAssertEqual(truncate(padded, 4 << 30), 0, "cannot make the sparse file")
    let started = Date()
    let player = try BackgroundPlayer(["--events-fd", "1", padded])
    XCTAssertEqual(player.wait(timeout: 60), 0, player.stderr)
    let took = Date().timeIntervalSince(started)
    let warning = player.events.first { ($0["message"] as? String ?? "").contains("empty space") }
    let message = try XCTUnwrap(warning?["message"] as? String, player.stdout)
    XCTAssertTrue(message.contains("nothing but an empty space from byte"), message)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended?["position_ms"] as? Int ?? 0), 6000, accuracy: 200, player.stdout)
    XCTAssertLessThan(took, 20, "the zeros were read through: \(player.stdout)")
  }

  /// A download whose middle part has not come: a hole of 300 MB, then the rest of the file. The demuxer reads
  /// through the hole to the data after it, as it did before holes at the end were looked for (it was taken for one
  /// and playback ended there), and plays to the end without a word.
  func testAHoleInTheMiddleOfAFileIsReadThrough() throws {
    try Screen.requireDisplay()
    let folder = NSTemporaryDirectory() + "orb-hole-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Raw pictures: 1.4 MB each, 414 MB in all, so that the hole is more than the 256 MB looked through.
    let raw = folder + "/raw.mkv"
    let made = Tool.run(
      "ffmpeg",
      [
        "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=12", "-c:v", "rawvideo",
        "-pix_fmt", "yuv420p", raw,
      ], timeout: 120)
    XCTAssertTrue(made.succeeded, made.stderr)
    let (holeStart, holeEnd): (UInt64, UInt64) = (40 << 20, 340 << 20)
    let holed = folder + "/partly-downloaded.mkv"
    let source = try XCTUnwrap(FileHandle(forReadingAtPath: raw))
    XCTAssertTrue(FileManager.default.createFile(atPath: holed, contents: nil))
    let target = try XCTUnwrap(FileHandle(forWritingAtPath: holed))
    try target.write(contentsOf: try source.read(upToCount: Int(holeStart)) ?? Data())
    try source.seek(toOffset: holeEnd)
    try target.seek(toOffset: holeEnd)  // what lies between is a hole (zeros, where the file system has none)
    while let chunk = try source.read(upToCount: 8 << 20), !chunk.isEmpty { try target.write(contentsOf: chunk) }
    try source.close()
    try target.close()
    try FileManager.default.removeItem(atPath: raw)
    let player = try BackgroundPlayer(["--events-fd", "1", holed])
    XCTAssertEqual(player.wait(timeout: 60), 0, player.stderr)
    XCTAssertFalse(player.stdout.contains("empty space"), player.stdout)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended?["position_ms"] as? Int ?? 0), 12000, accuracy: 100, player.stdout)
    let stats = ended?["stats"] as? [String: Any]
    XCTAssertGreaterThan(stats?["presented"] as? Int ?? 0, 60, "pictures before and after the hole: \(player.stdout)")
  }

  /// A file read to its end whose rest is zeros from 30 % on (a download whose data stopped coming, its index
  /// whole): it ends where the pictures do, with a warning that says the rest is damaged. It was a clean end, which a
  /// host marks watched.
  func testAFileWhoseRestIsDamagedSaysSo() throws {
    try Screen.requireDisplay()
    let whole = try TestMedia.path(
      "moving-20s-sine-faststart.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=20", "-f", "lavfi", "-i", "sine=duration=20",
        "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-movflags", "+faststart",
      ])
    var data = try Data(contentsOf: URL(fileURLWithPath: whole))
    let from = data.count * 3 / 10
    data.replaceSubrange(from..<data.count, with: Data(count: data.count - from))
    let damaged = try TestMedia.file(named: "moving-20s-rest-zeros.mp4", contents: data)
    let player = try BackgroundPlayer(["--events-fd", "1", damaged])
    XCTAssertEqual(player.wait(timeout: 60), 0, player.stderr)
    let warning = player.events.first { ($0["message"] as? String ?? "").contains("the rest is damaged") }
    let message = try XCTUnwrap(warning?["message"] as? String, player.stdout)
    XCTAssertTrue(message.contains("of the 0:00:20 it says it lasts"), message)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertLessThan(ended?["position_ms"] as? Int ?? 99999, 12000, player.stdout)
  }

  /// A file with a stretch of zeros in the middle (bytes lost in a download, a scratched disc): the demuxer steps
  /// over it to the next place it can read (Matroska's next cluster, MPEG-TS's next sync byte), the picture holds
  /// meanwhile, and the host hears where and how much was lost, once; playback goes on to the end. Nothing was said.
  func testADamagedStretchInTheMiddleIsNamedAndPlayedPast() throws {
    try Screen.requireDisplay()
    for format in ["mkv", "ts"] {
      // A megabyte lost, from 40 % on: about four of the twelve seconds.
      let damaged = try damagedClip(
        "moving-12s-a-megabyte-of-zeros.\(format)", seconds: 12, size: "640x360", bitRate: "2M"
      ) { count in count * 4 / 10..<min(count, count * 4 / 10 + 1_000_000) }
      let player = try BackgroundPlayer(["--events-fd", "1", "--speed", "4", damaged])
      XCTAssertEqual(player.wait(timeout: 60), 0, "\(format): \(player.stderr)")
      let (message, times) = try damageNotice(player)
      // Some seconds from about 4.8 s on are gone: the stretch named lies there, with its size.
      if times.count == 2 {
        XCTAssertEqual(times[0], 4.8, accuracy: 1.5, message)
        XCTAssertTrue((2.5...8).contains(times[1] - times[0]), message)
      }
      XCTAssertTrue(message.contains("MB could not be read"), message)
      let ended = player.events.last { $0["event"] as? String == "ended" }
      XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
      XCTAssertGreaterThan(ended?["position_ms"] as? Int ?? 0, 11000, "played past it to the end: \(player.stdout)")
    }
  }

  /// An MPEG-TS file with more than ten seconds lost in the middle: its clock goes on after the stretch, which was
  /// taken for recordings joined end to end (`TimestampJoins`), and the part after it was moved back to follow on
  /// from the stretch's start: no word of the damage, and the end came 13 s early on the position. The host hears of
  /// the stretch, and the position after it is the file's own, to the end.
  func testMoreThanTenSecondsLostInATransportStreamIsDamageNotAJoin() throws {
    // From 30 % on, 45 % of the file: some thirteen of the thirty seconds.
    let damaged = try damagedClip(
      "moving-30s-thirteen-seconds-of-zeros.ts", seconds: 30, size: "320x240", bitRate: "1M"
    ) { count in count * 3 / 10..<count * 3 / 10 + count * 45 / 100 }
    let player = try BackgroundPlayer(["--events-fd", "1", "--speed", "4", "--no-audio", damaged])
    XCTAssertEqual(player.wait(timeout: 60), 0, player.stderr)
    let (message, times) = try damageNotice(player)
    if times.count == 2 { XCTAssertGreaterThan(times[1] - times[0], 10, message) }
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
    XCTAssertGreaterThan(ended?["position_ms"] as? Int ?? 0, 29000, "the file's own times to its end: \(player.stdout)")
  }

  /// `name` (its extension the container): moving pictures and a tone, `seconds` long at `size` and `bitRate`,
  /// H.264 and AAC, a key frame a second, with the bytes `lost(count of bytes)` made zeros.
  private func damagedClip(
    _ name: String, seconds: Int, size: String, bitRate: String, lost: (Int) -> Range<Int>
  ) throws -> String {
    let format = (name as NSString).pathExtension
    let whole = try TestMedia.path(
      "moving-\(seconds)s-\(size)-sine-\(bitRate).\(format)",
      [
        "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25:duration=\(seconds)", "-f", "lavfi", "-i",
        "sine=duration=\(seconds)", "-c:v", "libx264", "-preset", "ultrafast", "-b:v", bitRate, "-g", "25", "-c:a",
        "aac",
      ])
    var data = try Data(contentsOf: URL(fileURLWithPath: whole))
    let range = lost(data.count)
    data.replaceSubrange(range, with: Data(count: range.count))
    return try TestMedia.file(named: name, contents: data)
  }

  /// The one "damaged from A to B" warning the player gave (failing when not one), and its two times.
  private func damageNotice(_ player: BackgroundPlayer) throws -> (message: String, times: [Double]) {
    let warnings = player.events.filter { ($0["message"] as? String ?? "").hasPrefix("damaged from") }
    XCTAssertEqual(warnings.count, 1, player.stdout)
    let message = warnings.first?["message"] as? String ?? ""
    let times = message.split(separator: " ").compactMap { Double($0) }
    XCTAssertEqual(times.count, 2, message)
    return (message, times)
  }

  func testCorruptPacketsAreSkippedAndPlaybackGoesOn() throws {
    let clean = try TestMedia.path(
      "h264-for-noise.mkv",
      ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3", "-c:v", "libx264", "-preset", "ultrafast"])
    let noisy = try TestMedia.path("h264-noise.mkv", ["-i", clean, "-c", "copy", "-bsf:v", "noise=amount=200"])
    let r = Orb.run(["--benchmark", "--size", "160x120", noisy], timeout: 60)
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    XCTAssertGreaterThan(json["frames"] as? Int ?? 0, 25, "most frames still decode: \(r.stdout)")
  }
}
