import Foundation
import OrbTestSupport
import XCTest

/// Subtitles as a viewer meets them: the text of the cue on screen at a time (the `cue` events a host hears, and
/// the label's pixels in a screenshot), sidecars found beside a video, tracks cycled with `j`, and picture
/// subtitles drawn at their place.
final class SubtitleAppTests: XCTestCase {
  /// Three cues over a plain dark picture, so the white text is easy to find in a screenshot.
  static let cues: [(Double, Double, String)] = [
    (0.5, 3.0, "First cue, <i>two</i>\nlines"), (3.5, 5.0, "Second cue"), (5.5, 7.0, "Third"),
  ]

  /// 8 s of a plain 640x360 picture with the `cues` as its English subtitle track marked default (so it
  /// shows unasked), SubRip or (`codec`) ASS.
  static func subtitledClip(codec: String = "srt") throws -> String {
    let srt = try TestMedia.file(named: "app-cues.srt", contents: SubtitleMedia.srt(cues))
    return try TestMedia.path(
      codec == "srt" ? "subtitled.mkv" : "subtitled-\(codec).mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x203040:size=640x360:rate=25:duration=8", "-i", srt, "-map", "0:v", "-map",
        "1:s", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:s", codec,
        "-metadata:s:s:0", "language=eng", "-disposition:s:0", "default",
      ])
  }

  private func cueEvents(_ player: BackgroundPlayer) -> [[String: Any]] {
    player.events.filter { $0["event"] as? String == "cue" }
  }

  private func play(_ args: [String], timeout: Double = 30) throws -> BackgroundPlayer {
    try Screen.requireDisplay()
    let player = try BackgroundPlayer(["--events-fd", "1"] + args)
    XCTAssertEqual(player.wait(timeout: timeout), 0, player.stderr)
    return player
  }

  /// A cue on screen costs the pictures nothing: its outline was five blurred text shadows, which GTK's cairo
  /// renderer blurred again on the CPU at every picture (the window is drawn whole each time): 78 of 150 pictures
  /// were dropped here with a cue shown all along (and in `bench/playback.sh`'s sdr+subs run 170 of 300, at 11.6
  /// CPU s against 4.0 now). The outline is now sixteen sharp shadows, two pixels round.
  func testACueShownAllAlongDropsNoPictures() throws {
    let srt = try TestMedia.file(
      named: "all-along.srt",
      contents: SubtitleMedia.srt([(0.2, 4.8, "A line of dialogue shown all along,\nand a second line under it")]))
    let player = try play(["--geometry", "1280x720", "--sub-file", srt, "test://bars?duration=5"])
    XCTAssertEqual(
      cueEvents(player).first?["text"] as? String, "A line of dialogue shown all along,\nand a second line under it")
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" }, player.stdout)
    let stats = try XCTUnwrap(ended["stats"] as? [String: Any], player.stdout)
    XCTAssertLessThanOrEqual(stats["dropped"] as? Int ?? .max, 15, "of 150 pictures: \(stats)")
  }

  /// Each cue appears at its time with its text (markup gone, the line break kept) and clears at its end.
  func testEmbeddedCuesAreShownAtTheirTimes() throws {
    let player = try play(["--resume-ms", "2500", try Self.subtitledClip()])
    let events = cueEvents(player)
    XCTAssertEqual(
      events.map { $0["text"] as? String ?? "?" }, ["First cue, two\nlines", "", "Second cue", "", "Third", ""],
      player.stdout)
    XCTAssertEqual(events.compactMap { $0["start_ms"] as? Int }, [500, 3500, 5500])
    XCTAssertEqual(events.compactMap { $0["end_ms"] as? Int }, [3000, 5000, 7000])
    XCTAssertTrue(player.stderr.contains("Subtitles: 1/1 English (SRT)"), player.stderr)
  }

  /// A start in the middle of a cue (a resume) shows that cue at once, though it began before the start: the
  /// reader goes back for it.
  func testAResumeInsideACueShowsItAtOnce() throws {
    let player = try play(["--resume-ms", "4500", try Self.subtitledClip()])
    let first = try XCTUnwrap(cueEvents(player).first, player.stdout)
    XCTAssertEqual(first["text"] as? String, "Second cue")
    XCTAssertEqual(first["start_ms"] as? Int, 3500)
  }

  func testSidZeroShowsNone() throws {
    let player = try play(["--sid", "0", "--resume-ms", "4500", try Self.subtitledClip()])
    XCTAssertEqual(cueEvents(player).count, 0, player.stdout)
    XCTAssertFalse(player.stderr.contains("Subtitles:"), player.stderr)
  }

  /// Sidecars beside the video load by themselves, in legacy character sets without mojibake; `j` goes to the
  /// next one, then to none, and says so.
  func testSidecarsLoadByThemselvesAndJCyclesThem() throws {
    let folder = NSTemporaryDirectory() + "orb-sidecars-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let video = try TestMedia.path(
      "plain-8s.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x203040:size=640x360:rate=25:duration=8", "-c:v", "libx264", "-preset",
        "ultrafast", "-pix_fmt", "yuv420p",
      ])
    try FileManager.default.copyItem(atPath: video, toPath: "\(folder)/movie.mkv")
    let czech = "Příliš žluťoučký kůň úpěl ďábelské ódy"
    let french = "Déjà vu, naïve façade"
    let cs = try SubtitleMedia.encoded(
      "app-cs.srt", SubtitleMedia.srt([(0, 3, czech), (3, 5, "Druhá věta: čeština"), (5, 8, czech)]),
      charset: "ISO-8859-2")
    let fr = try SubtitleMedia.encoded(
      "app-fr.srt", SubtitleMedia.srt([(0, 8, french), (0.5, 1, "Où est l’hôtel ?")]), charset: "WINDOWS-1252")
    try FileManager.default.copyItem(atPath: cs, toPath: "\(folder)/movie.cs.srt")
    try FileManager.default.copyItem(atPath: fr, toPath: "\(folder)/movie.fr.srt")

    try Screen.requireDisplay()
    let title = "sidecars-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer([
      "--events-fd", "1", "--title", title, "--resume-ms", "1500", "\(folder)/movie.mkv",
    ])
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_500_000)
    Screen.press("j", title: title)
    usleep(1_000_000)
    Screen.press("j", title: title)
    usleep(700_000)
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
    let texts = cueEvents(player).map { $0["text"] as? String ?? "?" }
    XCTAssertEqual(texts.first, czech, "the first sidecar (by name) is shown: \(player.stdout)")
    XCTAssertTrue(texts.contains(french), "j switched to the French sidecar: \(texts)")
    XCTAssertEqual(texts.last, "", "j after the last track turns subtitles off: \(texts)")
    XCTAssertTrue(player.stderr.contains("Subtitles: 1/2 Czech (SRT)"), player.stderr)
    XCTAssertTrue(player.stderr.contains("Subtitles: 2/2 French (SRT)"), player.stderr)
    XCTAssertTrue(player.stderr.contains("Subtitles off"), player.stderr)
  }

  /// A sidecar that is binary data, a `--sub-file` that is not there and one of garbage lines: each is one warning
  /// naming the file and why, the good cues of the damaged file still show, and the video plays to its end.
  func testBrokenSubtitleFilesNeverStopPlayback() throws {
    let folder = NSTemporaryDirectory() + "orb-badsubs-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let video = try TestMedia.path(
      "plain-3s.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x203040:size=320x180:rate=25:duration=3", "-c:v", "libx264", "-preset",
        "ultrafast", "-pix_fmt", "yuv420p",
      ])
    try FileManager.default.copyItem(atPath: video, toPath: "\(folder)/clip.mkv")
    FileManager.default.createFile(
      atPath: "\(folder)/clip.srt", contents: Data(pseudoRandomBytes(4096, seed: 7)))
    let garbage = "\(folder)/garbage.srt"
    let damaged =
      "1\n00:00:00,200 --> 00:00:01,000\nStill readable\n\n2\n99:99 --> nonsense\n\u{1}\n\n"
      + "3\n00:00:01,200 --> 00:00:02,000\nAlso readable\n\n"
    try damaged.write(toFile: garbage, atomically: true, encoding: .utf8)
    let missing = "\(folder)/missing.srt"
    for (args, warned, text) in [
      (["\(folder)/clip.mkv"], "clip.srt", nil), (["--sub-file", missing, "\(folder)/clip.mkv"], "missing.srt", nil),
      (["--sub-file", garbage, "\(folder)/clip.mkv"], nil, "Still readable"),
    ] {
      let player = try play(args)
      let ended = player.events.last { $0["event"] as? String == "ended" }
      XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout)
      let shown = (ended?["stats"] as? [String: Any])?["presented"] as? Int ?? 0
      XCTAssertGreaterThan(shown, 60, "the video played: \(player.stdout)")
      if let warned {
        let lines = player.stderr.split(separator: "\n").filter { $0.contains("subtitles:") && $0.contains(warned) }
        XCTAssertEqual(lines.count, 1, "one warning naming \(warned): \(player.stderr)")
      }
      if let text {
        // FFmpeg's SubRip reader keeps a damaged block's lines as more of the cue before it (as mpv shows them).
        let texts = cueEvents(player).compactMap { $0["text"] as? String }
        XCTAssertTrue(texts.first?.hasPrefix(text) ?? false, player.stdout)
        XCTAssertTrue(texts.contains("Also readable"), "the cue after the damage shows: \(texts)")
      }
    }
  }

  /// A file whose sound starts a picture's time before its first picture (AAC's priming, as most encoders write
  /// it), with a cue from 0: the host hears the cue once. The clock stepped back when the sound took it over, and
  /// the cue was shown, cleared and shown again.
  func testACueAtTheStartIsToldOnce() throws {
    let srt = try TestMedia.file(
      named: "cue-at-zero.srt", contents: SubtitleMedia.srt([(0, 1.5, "From the start"), (2, 2.5, "Later")]))
    let clip = try TestMedia.path(
      "av-cue-at-zero.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=3", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=3", "-i", srt, "-map", "0", "-map", "1", "-map", "2",
        "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-c:s", "srt", "-disposition:s:0", "default",
      ])
    let player = try play([clip])
    let texts = cueEvents(player).compactMap { $0["text"] as? String }
    XCTAssertEqual(texts, ["From the start", "", "Later", ""], player.stdout)
  }

  /// Playing, a seek back shows the cue of where it lands at once, again and again (the time cues were looked up at
  /// could hold where it was before a seek, showing the later cue, or none, until playback got back there).
  func testASeekBackShowsTheCueWhereItLands() throws {
    try Screen.requireDisplay()
    let title = "subs-back-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--title", title, "--resume-ms", "6000", try Self.subtitledClip()])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(player.waitForEvent(timeout: 5) { $0["text"] as? String == "Third" }, player.stdout)
    for _ in 0..<2 {
      let back = player.events.count
      Screen.press("Left", title: title)  // 5 s back: the first cue
      XCTAssertNotNil(
        player.waitForEvent(after: back, timeout: 3) { $0["text"] as? String == "First cue, two\nlines" },
        player.stdout)
      let on = player.events.count
      Screen.press("Right", title: title)  // and on again, into the third
      XCTAssertNotNil(player.waitForEvent(after: on, timeout: 3) { $0["text"] as? String == "Third" }, player.stdout)
    }
    Screen.press("q", title: title)
  }

  /// A cue of 2 MB on one line (a broken or hostile file) shows its first 4,000 characters, ending in "…", and the
  /// window goes on: the next cue shows, the video plays to its end. Measuring it held the window's thread in Pango
  /// for seconds (at 10 MB for good: no picture, no event, no quit).
  func testAHugeCueIsCutAndPlaybackGoesOn() throws {
    let srt = try TestMedia.file(
      named: "huge-cue.srt",
      contents: "1\n00:00:00,500 --> 00:00:01,500\n" + String(repeating: "A", count: 2 << 20)
        + "\n\n2\n00:00:01,800 --> 00:00:02,600\nafter\n\n")
    let video = try TestMedia.path(
      "plain-3s.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x203040:size=320x180:rate=25:duration=3", "-c:v", "libx264", "-preset",
        "ultrafast", "-pix_fmt", "yuv420p",
      ])
    let player = try play(["--sub-file", srt, video], timeout: 40)
    let texts = cueEvents(player).compactMap { $0["text"] as? String }.filter { !$0.isEmpty }
    XCTAssertEqual(texts.first?.count, 4001, "\(texts.map { $0.prefix(20) })")
    XCTAssertEqual(texts.first?.last, "…")
    XCTAssertEqual(texts.last, "after", "\(texts.map { $0.prefix(20) })")
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "eof", player.stdout.suffix(2000).description)
    let stats = ended?["stats"] as? [String: Any]
    XCTAssertGreaterThan(stats?["presented"] as? Int ?? 0, 40, "of 75 pictures: \(stats ?? [:])")
  }

  /// A subtitle file that cannot be read (not there, empty, a folder, junk) is no track: the media's default track
  /// shows instead, the host hears that track, and a warning names the file. It was chosen over the default and
  /// showed nothing. A `--sid` past the tracks says so and shows the default.
  func testAnUnreadableSubtitleFileGivesWayToTheDefaultTrack() throws {
    let folder = NSTemporaryDirectory() + "orb-deadsubs-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder + "/adir.srt", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    FileManager.default.createFile(atPath: "\(folder)/junk.srt", contents: Data(pseudoRandomBytes(4096, seed: 11)))
    FileManager.default.createFile(atPath: "\(folder)/empty.srt", contents: Data())
    for (args, warned) in [
      (["--sub-file", "\(folder)/missing.srt"], "missing.srt: no such file"),
      (["--sub-file", "\(folder)/empty.srt"], "empty.srt: empty file"),
      (["--sub-file", "\(folder)/adir.srt"], "adir.srt: is a directory, not a subtitle file"),
      (["--sub-file", "\(folder)/junk.srt"], "junk.srt: it holds binary data, not subtitle text; left out"),
      (["--sid", "9"], "no subtitle track 9 (it has 1)"),
    ] {
      let player = try play(["--resume-ms", "2500"] + args + [try Self.subtitledClip()])
      let texts = cueEvents(player).compactMap { $0["text"] as? String }
      XCTAssertTrue(texts.contains("Second cue"), "\(args): the default track shows: \(player.stdout)")
      let settings = player.events.last { $0["event"] as? String == "settings" }
      XCTAssertEqual(settings?["subtitle_track"] as? Int, 1, "\(args): \(player.stdout)")
      XCTAssertTrue(player.stderr.contains(warned), "\(args): \(player.stderr)")
    }
  }

  /// The rows of `image` from `top` (by default its lower half) holding white text (the clip itself has no white;
  /// the pointer, if it is drawn, is in the upper half, away from the tests that look there).
  private func textRows(_ image: RGBImage, from top: Int? = nil) -> [Int] {
    ((top ?? image.height / 2)..<image.height).filter { y in
      stride(from: 0, to: image.width, by: 2).contains { x in
        let p = image.pixel(x: x, y: y)
        return p.r > 225 && p.g > 225 && p.b > 225
      }
    }
  }

  /// A cue far too long for the picture (a whole paragraph, shown large) is made smaller until it fits: all of it
  /// on screen, below the window's top edge, where it ran off the top and the start of it could not be read.
  func testACueTooLongForThePictureIsMadeToFit() throws {
    try Screen.requireDisplay()
    let title = "subs-long-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])  // away: the controls stay hidden
    let words = (1...240).map { "word\($0)" }.joined(separator: " ")
    let srt = try TestMedia.file(named: "long-cue.srt", contents: SubtitleMedia.srt([(0, 30, words)]))
    let player = try BackgroundPlayer(
      [
        "--events-fd", "1", "--title", title, "--paused", "--geometry", "640x360", "--sub-scale", "2", "--sub-file",
        srt, try MarkerAppTests.clip(),
      ])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(player.waitForEvent { $0["event"] as? String == "cue" }, player.stdout)
    usleep(700_000)
    let image = try Screen.grabSettled(title: title)
    Screen.keep(title: title, as: "subtitles-long-cue")
    let rows = textRows(image, from: 0)
    let top = try XCTUnwrap(rows.min(), "no text on screen")
    XCTAssertGreaterThan(top, 4, "the cue runs off the top of the window")
    XCTAssertLessThan(rows.max() ?? 0, image.height - 4, "the cue runs off the bottom of the window")
    XCTAssertGreaterThan(rows.count, image.height / 3, "the text was made smaller than it need be: rows \(rows)")
    Screen.press("q", title: title)
  }

  /// A cue placed at the top (`{\an8}`: a sign, a second speaker) beside one at the bottom: each where it belongs, as
  /// libass draws them. The top one took the bottom one up with it.
  func testCuesAtTheTopAndTheBottomShowTogetherEachInItsPlace() throws {
    let image = try pausedOnCues(
      "top-and-bottom", [(0, 30, "Spoken at the bottom"), (0.5, 30, "{\\an8}A sign at the top")], showing: "sign")
    let rows = textRows(image, from: 0)
    XCTAssertTrue(rows.contains { $0 < image.height / 4 }, "nothing at the top: rows \(rows)")
    XCTAssertTrue(rows.contains { $0 > image.height * 3 / 4 }, "nothing at the bottom: rows \(rows)")
    XCTAssertFalse(rows.contains { (image.height / 3..<image.height * 2 / 3).contains($0) }, "rows \(rows)")
  }

  /// An ASS cue of the middle row (`{\an5}`: a sign in the middle of the picture) shows there, not at the bottom,
  /// where it was, over the dialogue.
  func testACueOfTheMiddleRowShowsInTheMiddle() throws {
    let image = try pausedOnCues("middle", [(0, 30, "{\\an5}In the middle")], showing: "middle")
    let rows = textRows(image, from: 0)
    XCTAssertTrue(rows.contains { (image.height * 2 / 5..<image.height * 3 / 5).contains($0) }, "rows \(rows)")
    XCTAssertFalse(rows.contains { $0 > image.height * 3 / 4 || $0 < image.height / 4 }, "rows \(rows)")
  }

  /// A cue's colours show: SubRip's `<font color>` (as FFmpeg gives it, an ASS `\c`) paints its words red beside
  /// white ones, on a blue-grey picture that has no red. Every cue was white.
  func testACueShowsInItsColours() throws {
    let image = try pausedOnCues(
      "colours", [(0, 30, "WHITE <font color=\"#ff0000\">RED RED</font> WHITE")], showing: "RED")
    var (red, white) = (0, 0)
    for y in image.height / 2..<image.height {
      for x in 0..<image.width {
        let p = image.pixel(x: x, y: y)
        if p.r > 200 && p.g < 60 && p.b < 60 { red += 1 }
        if p.r > 225 && p.g > 225 && p.b > 225 { white += 1 }
      }
    }
    XCTAssertGreaterThan(red, 150, "no red words (white pixels: \(white))")
    XCTAssertGreaterThan(white, 150, "no white words (red pixels: \(red))")
  }

  /// An ASS script is drawn as it says, by libass: a cue it puts at the top left (`\\pos`) is there, in its style's
  /// red, at its style's size; one it aligns bottom right (`\\an3`) is there; a vector drawing (a sign's green
  /// square) is drawn. The labels centred the first at the top, left the second at the bottom centre and drew no
  /// drawing.
  func testAnASSScriptIsDrawnWhereAndAsItSays() throws { try assScriptIsDrawnWhereAndAsItSays() }

  /// The same drawn by GTK's GL renderer (Mesa's llvmpipe here; a GPU's elsewhere), where the picture is a texture
  /// placed by its margins rather than masks cairo paints.
  func testAnASSScriptIsDrawnWhereAndAsItSaysWithGL() throws {
    try assScriptIsDrawnWhereAndAsItSays(options: ["--video-output", "memory"], name: "ass-script-gl")
  }

  private func assScriptIsDrawnWhereAndAsItSays(options: [String] = [], name: String = "ass-script") throws {
    let script = try TestMedia.file(
      named: "placed.ass",
      contents: SubtitleMedia.assScript(
        width: 640, height: 360,
        styles: [
          SubtitleMedia.assStyle("Red", size: 48, colour: "&H000000FF", bold: true), SubtitleMedia.assStyle("White"),
        ],
        events: [
          #"0,0:00:00.00,0:00:30.00,Red,,0,0,0,,{\an7\pos(20,20)}LEFT"#,
          #"1,0:00:00.00,0:00:30.00,Red,,0,0,0,,{\an7\pos(20,20)\bord0}LEFT"#,
          #"0,0:00:00.00,0:00:30.00,White,,0,0,0,,{\an3}RIGHT"#,
          SubtitleMedia.assGreenSquare(layer: 1, "0:00:00.00", "0:00:30.00", style: "White", x: 290, y: 150),
        ]))
    var cues: [String] = []
    let image = try pausedOn(script, name, showing: "LEFT", options: options) { events in
      cues = events.filter { $0["event"] as? String == "cue" }.compactMap { $0["text"] as? String }
    }
    // The host hears the text once, though the sign is drawn in two layers.
    XCTAssertEqual(cues.last, "LEFT\nRIGHT")
    func count(_ x: Range<Int>, _ y: Range<Int>, _ test: (RGB) -> Bool) -> Int {
      y.reduce(0) { n, row in n + x.filter { test(image.pixel(x: $0, y: row)) }.count }
    }
    let isRed = { (p: RGB) in p.r > 200 && p.g < 60 && p.b < 60 }
    let isWhite = { (p: RGB) in p.r > 225 && p.g > 225 && p.b > 225 }
    let (w, h) = (image.width, image.height)
    // Big red letters in the top-left corner, nowhere else.
    XCTAssertGreaterThan(count(0..<w / 3, 0..<h / 4, isRed), 800, "LEFT at the top left")
    XCTAssertEqual(count(w / 3..<w, 0..<h, isRed), 0, "red only there")
    // White letters at the bottom right, none at the bottom centre.
    XCTAssertGreaterThan(count(w * 2 / 3..<w, h * 3 / 4..<h, isWhite), 100, "RIGHT at the bottom right")
    XCTAssertEqual(count(w / 3..<w / 2, h * 3 / 4..<h, isWhite), 0, "nothing at the bottom centre")
    // The square: solid green in the middle.
    let middle = image.pixel(x: w * 320 / 640, y: h * 180 / 360)
    XCTAssertTrue(middle.g > 200 && middle.r < 60 && middle.b < 60, "the drawing: \(middle)")
  }

  /// The window (640x360, the controls hidden) paused a second into a plain blue-grey clip with `cues` as a
  /// sidecar, once a cue holding `showing` is up: a settled screenshot of it, kept as `subtitles-NAME`.
  private func pausedOnCues(_ name: String, _ cues: [(Double, Double, String)], showing: String) throws -> RGBImage {
    try pausedOn(try TestMedia.file(named: "\(name).srt", contents: SubtitleMedia.srt(cues)), name, showing: showing)
  }

  /// The same with the sidecar `file`.
  private func pausedOn(
    _ file: String, _ name: String, showing: String, clip: String? = nil, geometry: String = "640x360",
    options: [String] = [], heard: (([[String: Any]]) -> Void)? = nil
  ) throws -> RGBImage {
    try Screen.requireDisplay()
    let title = "subs-\(name)-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])  // away: the controls stay hidden
    let srt = file
    let player = try BackgroundPlayer(
      [
        "--events-fd", "1", "--title", title, "--paused", "--resume-ms", "1000", "--geometry", geometry,
        "--sub-file", srt,
      ] + options + [
        try clip ?? MarkerAppTests.clip()
      ])
    defer {
      Screen.press("q", title: title)
      _ = player.wait(timeout: 5)
    }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(player.waitForEvent { ($0["text"] as? String)?.contains(showing) == true }, player.stdout)
    usleep(700_000)
    let image = try Screen.grabSettled(title: title)
    Screen.keep(title: title, as: "subtitles-\(name)")
    heard?(player.events)
    return image
  }

  /// The label sits near the bottom of the picture with the controls hidden, and moves up above them when they
  /// show, never hidden by them.
  func testTheCueShowsAboveTheTransportBar() throws {
    try cueShowsAboveTheTransportBar(try Self.subtitledClip(), role: "label", name: "bar")
  }

  /// The same for an ASS script's dialogue, which libass draws: raised above the bar while it shows.
  func testAScriptsDialogueShowsAboveTheTransportBar() throws {
    try cueShowsAboveTheTransportBar(try Self.subtitledClip(codec: "ass"), role: "image", name: "bar-ass")
  }

  /// The cue of `clip` near the bottom with the controls hidden, above them when they show, and found by a screen
  /// reader in a widget of `role`.
  private func cueShowsAboveTheTransportBar(_ clip: String, role: String, name: String) throws {
    try Screen.requireDisplay()
    let title = "subs-\(name)-\(UUID().uuidString.prefix(6))"
    // The pointer well away from where the window opens, so the controls start hidden.
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--title", title, "--paused", "--resume-ms", "1000", clip])
    defer { _ = player.wait(timeout: 1) }
    let window = try XCTUnwrap(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_500_000)
    let hidden = try Screen.grabSettled(title: title)
    Screen.keep(title: title, as: "subtitles-\(name)-hidden")
    let rowsHidden = textRows(hidden)
    XCTAssertFalse(rowsHidden.isEmpty, "no subtitle text on screen: \(player.stdout)")
    let bottomHidden = rowsHidden.max() ?? 0
    XCTAssertGreaterThan(bottomHidden, hidden.height * 3 / 4, "the cue belongs near the bottom of the picture")
    XCTAssertLessThan(bottomHidden, hidden.height - 4)
    // Two lines of text, sized to the picture: together more than a fourteenth of its height (a script's text has
    // the size its style gives).
    if role == "label" { XCTAssertGreaterThan(rowsHidden.count, hidden.height / 14, "rows \(rowsHidden)") }
    // A screen reader finds the same text, markup gone and the line break kept, in a label of the window.
    try Accessibility.require()
    let cue = "First cue, two\nlines"
    let pid = player.process.processIdentifier
    let labels = { (tree: Accessibility.Node) in
      tree.all.filter { $0.role == role }.map { $0.text.isEmpty ? $0.name : $0.text }
    }
    let before = try Accessibility.wait(pid) { labels($0).contains(cue) }
    XCTAssertTrue(labels(before).contains(cue), "the cue is not in the accessible tree: \(labels(before))")
    _ = Tool.run("xdotool", ["mousemove", "\(window.x + window.width / 2)", "\(window.y + window.height / 3)"])
    _ = Tool.run("xdotool", ["mousemove", "\(window.x + window.width / 2 + 5)", "\(window.y + window.height / 3)"])
    usleep(700_000)
    let shown = try Screen.grabSettled(title: title)
    Screen.keep(title: title, as: "subtitles-\(name)-shown")
    // The bar: rows at its left end darker than the clip's 0x203040 (its background is 60% black).
    let barRows = (shown.height / 2..<shown.height).filter { shown.pixel(x: 30, y: $0).b < 0x30 }
    let barTop = try XCTUnwrap(barRows.min(), "the transport bar did not show")
    XCTAssertGreaterThan(barRows.count, 20, "the bar is \(barRows.count) rows tall")
    let rowsShown = textRows(shown).filter { $0 < barTop }
    let bottomShown = try XCTUnwrap(rowsShown.max(), "the cue vanished when the bar showed")
    XCTAssertLessThan(bottomShown, bottomHidden - 20, "the cue did not move up with the bar")
    XCTAssertEqual(
      Double(rowsShown.count), Double(rowsHidden.count), accuracy: 4,
      "the whole cue is above the bar, none of it under (text rows \(rowsShown), bar from \(barTop))")
    let after = try Accessibility.tree(pid)
    XCTAssertTrue(labels(after).contains(cue), "with the bar shown the cue left the accessible tree: \(labels(after))")
    XCTAssertTrue(
      after.all.contains { $0.role == "push button" && $0.name == "Play or pause" },
      "the shown bar's buttons are not in the accessible tree")
    Screen.press("q", title: title)
  }

  /// A DVD subpicture track and the same picture as DVB subtitles: `--frame-at` draws the red and the white box
  /// where the subpicture puts them, scaled with the video; before the cue, nothing.
  func testPictureSubtitlesAreDrawnAtTheirPlace() throws {
    let idx = try SubtitleMedia.vobSub()
    // A key frame every half second: a seek in MPEG-TS lands on any packet, and decodes from the next key frame.
    let picture = ["-f", "lavfi", "-i", "color=c=0x404040:size=720x480:rate=25:duration=4"]
    let dvd = try TestMedia.path(
      "dvdsub.mkv",
      picture + [
        "-i", idx, "-map", "0:v", "-map", "1:s", "-c:v", "libx264", "-preset", "ultrafast", "-g", "12", "-pix_fmt",
        "yuv420p", "-c:s", "copy", "-disposition:s:0", "default",
      ])
    let dvb = try TestMedia.path(
      "dvbsub.ts",
      picture + [
        "-i", idx, "-map", "0:v", "-map", "1:s", "-c:v", "libx264", "-preset", "ultrafast", "-g", "12", "-pix_fmt",
        "yuv420p", "-c:s", "dvbsub",
      ])
    for clip in [dvd, dvb] {
      let name = (clip as NSString).lastPathComponent
      let during = try frame(clip, at: 1.8, name: "during")
      let red = SubtitleMedia.red
      let white = SubtitleMedia.white
      // 720x480 drawn at 1080x720: one and a half times.
      let redCentre = during.pixel(x: (red.x + red.width / 2) * 3 / 2, y: (red.y + red.height / 2) * 3 / 2)
      let whiteCentre = during.pixel(x: (white.x + white.width / 2) * 3 / 2, y: (white.y + white.height / 2) * 3 / 2)
      XCTAssertLessThanOrEqual(redCentre.distance(to: .red), 40, "\(name): red box \(redCentre)")
      XCTAssertLessThanOrEqual(whiteCentre.distance(to: .white), 40, "\(name): white box \(whiteCentre)")
      // Around the boxes the picture shows through.
      let outside = during.pixel(x: 50 * 3 / 2, y: 100 * 3 / 2)
      XCTAssertLessThanOrEqual(outside.distance(to: RGB(r: 64, g: 64, b: 64)), 12, "\(name): \(outside)")
      let before = try frame(clip, at: 0.5, name: "before")
      let none = before.pixel(x: (red.x + red.width / 2) * 3 / 2, y: (red.y + red.height / 2) * 3 / 2)
      XCTAssertLessThanOrEqual(none.distance(to: RGB(r: 64, g: 64, b: 64)), 12, "\(name): before the cue \(none)")
    }
  }

  /// `--frame-at` draws an ASS script's cues as the window does (libass): a drawn green square where `\\pos` puts
  /// it, scaled with the picture, and nothing before the cue starts.
  func testFrameAtDrawsAnASSScript() throws {
    let script = try TestMedia.file(
      named: "frame-at.ass",
      contents: SubtitleMedia.assScript(
        width: 640, height: 360,
        styles: [SubtitleMedia.assStyle("Default")],
        events: [SubtitleMedia.assGreenSquare("0:00:01.00", "0:00:03.00", style: "Default", x: 290, y: 150)]))
    let clip = try TestMedia.path(
      "ass-frame-at.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x404040:size=640x360:rate=25:duration=4", "-i", script, "-map", "0:v", "-map",
        "1:s", "-c:v", "libx264", "-preset", "ultrafast", "-g", "12", "-pix_fmt", "yuv420p", "-c:s", "ass",
      ])
    // 640x360 drawn at 1080x720 (letterboxed: 1080x607 from y 56): the square's centre at (320, 180) of the script.
    let during = try frame(clip, at: 1.8, name: "ass-during")
    let (sx, y0) = (1080.0 / 640, (720 - 1080.0 * 9 / 16) / 2)
    let centre = during.pixel(x: Int(320 * sx), y: Int(y0 + 180 * sx))
    XCTAssertLessThanOrEqual(centre.distance(to: RGB(r: 0, g: 255, b: 0)), 40, "the square: \(centre)")
    let beside = during.pixel(x: Int(200 * sx), y: Int(y0 + 180 * sx))
    XCTAssertLessThanOrEqual(beside.distance(to: RGB(r: 64, g: 64, b: 64)), 12, "beside it: \(beside)")
    let before = try frame(clip, at: 0.5, name: "ass-before")
    let none = before.pixel(x: Int(320 * sx), y: Int(y0 + 180 * sx))
    XCTAssertLessThanOrEqual(none.distance(to: RGB(r: 64, g: 64, b: 64)), 12, "before the cue: \(none)")
  }

  /// A video turned on its side (a phone's, shown 360x640): an ASS script written for the picture as shown keeps its
  /// proportions in `--frame-at`'s PNG and in the window, its square drawn square at its place (libass is given the
  /// picture's shape as shown, pixel aspect and rotation applied).
  func testAnASSScriptOverATurnedVideoKeepsItsProportions() throws {
    let script = try TestMedia.file(
      named: "turned.ass",
      contents: SubtitleMedia.assScript(
        width: 360, height: 640,
        styles: [SubtitleMedia.assStyle("Default")],
        events: [
          SubtitleMedia.assGreenSquare("0:00:00.00", "0:00:03.00", style: "Default", x: 150, y: 290),
          "0,0:00:00.00,0:00:03.00,Default,,0,0,0,,Turned",
        ]))
    let stored = try TestMedia.path(
      "unturned-640x360.mp4",
      [
        "-f", "lavfi", "-i", "color=c=0x404040:size=640x360:rate=25:duration=2", "-c:v", "libx264", "-preset",
        "ultrafast", "-pix_fmt", "yuv420p",
      ])
    // The display matrix is written when the stream is copied, not encoded.
    let clip = try TestMedia.path("turned-640x360.mp4", ["-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
    XCTAssertEqual(FFprobe.rotation(clip).map { abs($0) }, 90, "ffmpeg wrote no display matrix")
    let png = NSTemporaryDirectory() + "orb-turned-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let result = Orb.run(["--sub-file", script, "--frame-at", "1", "--size", "360x640", "--output", png, clip])
    XCTAssertEqual(result.status, 0, result.stderr)
    let image = try RGBImage(png: png)
    XCTAssertEqual(image.width, 360)
    let green = { (x: Int, y: Int) in image.pixel(x: x, y: y).g > 200 && image.pixel(x: x, y: y).r < 60 }
    let columns = (0..<image.width).filter { green($0, 320) }
    let rows = (0..<image.height).filter { green(180, $0) }
    XCTAssertEqual(columns.count, 60, accuracy: 3, "the square's width: \(columns.first ?? -1)...\(columns.last ?? -1)")
    XCTAssertEqual(rows.count, 60, accuracy: 3, "its height")
    XCTAssertEqual(Double(columns.first ?? 0), 150, accuracy: 3)
    let window = try pausedOn(script, "ass-turned", showing: "Turned", clip: clip, geometry: "360x640")
    let (sx, sy) = (Double(window.width) / 360, Double(window.height) / 640)
    let isGreen = { (x: Int, y: Int) in window.pixel(x: x, y: y).g > 200 && window.pixel(x: x, y: y).r < 60 }
    let across = (0..<window.width).filter { isGreen($0, Int(320 * sy)) }.count
    let down = (0..<window.height).filter { isGreen(Int(180 * sx), $0) }.count
    XCTAssertEqual(
      Double(across), 60 * sx, accuracy: 4, "the square's width in a \(window.width)x\(window.height) window")
    XCTAssertEqual(Double(down), 60 * sy, accuracy: 4, "its height")
  }

  /// In the window the DVD subpicture is laid over the video at its place too.
  func testPictureSubtitlesShowInTheWindow() throws {
    let clip = try TestMedia.path(
      "dvdsub.mkv",
      [
        "-f", "lavfi", "-i", "color=c=0x404040:size=720x480:rate=25:duration=4", "-i", try SubtitleMedia.vobSub(),
        "-map", "0:v", "-map", "1:s", "-c:v", "libx264", "-preset", "ultrafast", "-g", "12", "-pix_fmt", "yuv420p",
        "-c:s", "copy", "-disposition:s:0", "default",
      ])
    try Screen.requireDisplay()
    let title = "subs-dvd-\(UUID().uuidString.prefix(6))"
    _ = Tool.run("xdotool", ["mousemove", "1270", "710"])
    let player = try BackgroundPlayer(["--title", title, "--paused", "--resume-ms", "1500", clip])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    usleep(1_500_000)
    let shot = try Screen.grab(title: title)
    Screen.keep(title: title, as: "subtitles-dvd")
    let (sx, sy) = (Double(shot.width) / 720, Double(shot.height) / 480)
    let red = SubtitleMedia.red
    let at = shot.pixel(x: Int(Double(red.x + red.width / 2) * sx), y: Int(Double(red.y + red.height / 2) * sy))
    XCTAssertLessThanOrEqual(at.distance(to: .red), 40, "red box \(at) in a \(shot.width)x\(shot.height) window")
    let outside = shot.pixel(x: Int(50 * sx), y: Int(100 * sy))
    XCTAssertLessThanOrEqual(outside.distance(to: RGB(r: 64, g: 64, b: 64)), 12, "\(outside)")
    Screen.press("q", title: title)
  }

  private func frame(_ clip: String, at seconds: Double, name: String) throws -> RGBImage {
    let png = NSTemporaryDirectory() + "orb-subframe-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let result = Orb.run(["--sid", "1", "--frame-at", "\(seconds)", "--size", "1080x720", "--output", png, clip])
    XCTAssertEqual(result.status, 0, result.stderr)
    return try RGBImage(png: png)
  }
}
