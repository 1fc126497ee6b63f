import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// Sidecar and embedded subtitles read whole: the text a viewer sees at a given time.
final class SubtitleTests: XCTestCase {
  /// An ASS script's header: the one style every test's events use, then the events' format line.
  static func assHeader(playRes: Bool) -> String {
    """
    [Script Info]
    ScriptType: v4.00+
    \(playRes ? "PlayResX: 384\nPlayResY: 288\n" : "")
    [V4+ Styles]
    Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, \
    Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, \
    MarginR, MarginV, Encoding
    Style: Default,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1

    [Events]
    Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text

    """
  }

  /// The text of the one cue shown at `time`, or nil when none is (fails when several are).
  private func text(_ track: SubtitleTrack, at time: Double, file: StaticString = #filePath, line: UInt = #line)
    -> String?
  {
    let shown = track.cues(at: time)
    XCTAssertLessThanOrEqual(shown.count, 1, "cues at \(time): \(shown.map(\.plainText))", file: file, line: line)
    return shown.first?.plainText
  }

  func testSRTCuesAtTheirTimes() throws {
    let path = try TestMedia.file(
      named: "basic.srt",
      contents: SubtitleMedia.srt([
        (1, 2.5, "Hello, <i>world</i>, a,b\nline two"), (3, 4, "{\\an8}At the top"),
        (4.5, 5, "<b>Bold</b> <u>under</u>"),
      ]))
    let track = try SubtitleFile.read(path)
    XCTAssertEqual(track.format, "SRT")
    XCTAssertEqual(track.cues.count, 3)
    XCTAssertNil(text(track, at: 0.9))
    XCTAssertEqual(text(track, at: 1.0), "Hello, world, a,b\nline two")
    XCTAssertEqual(text(track, at: 2.4), "Hello, world, a,b\nline two")
    XCTAssertNil(text(track, at: 2.5))
    XCTAssertEqual(text(track, at: 3.5), "At the top")
    XCTAssertEqual(track.cues(at: 3.5).first?.placement, .top)
    XCTAssertEqual(track.cues(at: 1.5).first?.placement, .bottom)
    let first = try XCTUnwrap(track.cues(at: 1.5).first)
    XCTAssertEqual(first.lines[0], [SubtitleRun("Hello, "), SubtitleRun("world", italic: true), SubtitleRun(", a,b")])
    XCTAssertEqual(first.pangoMarkup, "Hello, <i>world</i>, a,b\nline two")
    XCTAssertEqual(track.cues(at: 4.7).first?.pangoMarkup, "<b>Bold</b> <u>under</u>")
    XCTAssertEqual(track.warnings, [])
  }

  /// SubRip files made from web captions write HTML's character references (`&amp;`, `&lt;`, `&#233;`), which
  /// players that read SRT (VLC, browsers' WebVTT) show as the characters; FFmpeg's SubRip decoder passes them on as
  /// they are, so "Tom &amp; Jerry" was shown. A bare `&` and an unknown name stay as written.
  func testSRTCharacterReferencesShowAsTheirCharacters() throws {
    let path = try TestMedia.file(
      named: "entities.srt",
      contents: SubtitleMedia.srt([
        (1, 2, "Tom &amp; Jerry &lt;3 &quot;hi&quot; &apos;yo&apos;"), (3, 4, "caf&#233; &#x263A;&nbsp;ok"),
        (5, 6, "<i>R&amp;D</i> & fish &bogus; &#xZZ; &#99999999;"),
        (7, 8, "it&#146;s &AMP; &#+65; &#10; &#x7f;"),
      ]))
    let track = try SubtitleFile.read(path)
    XCTAssertEqual(text(track, at: 1.5), "Tom & Jerry <3 \"hi\" 'yo'")
    XCTAssertEqual(text(track, at: 3.5), "caf\u{E9} \u{263A}\u{A0}ok")
    XCTAssertEqual(text(track, at: 5.5), "R&D & fish &bogus; &#xZZ; &#99999999;")
    XCTAssertEqual(text(track, at: 7.5), "it\u{2019}s & &#+65; &#10; &#x7f;")
    XCTAssertEqual(
      track.cues(at: 5.5).first?.pangoMarkup, "<i>R&amp;D</i> &amp; fish &amp;bogus; &amp;#xZZ; &amp;#99999999;")
  }

  /// SubRip's `<font color>` shows in its colour (FFmpeg gives it as `\c`); a sidecar ASS's style colours its cues.
  func testSRTFontColoursAndASSStyleColoursShow() throws {
    let srt = try TestMedia.file(
      named: "font-colours.srt",
      contents: SubtitleMedia.srt([(1, 2, "plain <font color=\"#ff8000\">orange</font> plain")]))
    let track = try SubtitleFile.read(srt)
    XCTAssertEqual(
      track.cues(at: 1.5).first?.lines,
      [[SubtitleRun("plain "), SubtitleRun("orange", color: 0xFF8000), SubtitleRun(" plain")]])
    let ass = try TestMedia.file(
      named: "colours.ass",
      contents: Self.assHeader(playRes: true).replacingOccurrences(
        of: "Style: Default,Arial,20,&H00FFFFFF", with: "Style: Default,Arial,20,&H0000FF00")
        + "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,green\n")
    XCTAssertEqual(try SubtitleFile.read(ass).cues(at: 1.5).first?.lines, [[SubtitleRun("green", color: 0x00FF00)]])
  }

  func testASSOverrideTagsAreStrippedAndUnderstood() throws {
    let path = try TestMedia.file(
      named: "styled.ass",
      contents: Self.assHeader(playRes: true) + """
        Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\pos(10,20)\\c&H00FF00&\\fad(200,300)}Hello, {\\i1}there{\\i0}\\Nsecond line
        Comment: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,a comment nobody sees
        Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\an8}{\\k20}Kar{\\k30}a{\\kf40}oke{\\t(0,100,\\i1)}
        Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100{\\p0}
        Dialogue: 0,0:00:07.00,0:00:08.00,Default,,0,0,0,,{\\b700}Heavy{\\b0} {\\u1}line{\\r} done\\hnow {\\unclosed
        Dialogue: 0,0:00:09.00,0:00:10.00,Default,,0,0,0,,{\\a6}Legacy top{\\blur3\\bord2\\1c&HFF&}

        """)
    let track = try SubtitleFile.read(path)
    XCTAssertEqual(track.format, "ASS")
    XCTAssertEqual(text(track, at: 1.5), "Hello, there\nsecond line")
    let hello = try XCTUnwrap(track.cues(at: 1.5).first)
    let green: UInt32 = 0x00FF00  // `\c&H00FF00&`: blue-green-red
    XCTAssertEqual(
      hello.lines,
      [
        [SubtitleRun("Hello, ", color: green), SubtitleRun("there", italic: true, color: green)],
        [SubtitleRun("second line", color: green)],
      ])
    XCTAssertEqual(hello.placement, .bottom)
    XCTAssertEqual(text(track, at: 3.5), "Karaoke")
    XCTAssertEqual(track.cues(at: 3.5).first?.placement, .top)
    XCTAssertEqual(text(track, at: 5.5), "", "a drawing is no text")
    // ... but it is drawn: the cue keeps its event for the script's renderer.
    XCTAssertEqual(track.cues(at: 5.5).first?.assEvent?.line.hasSuffix("{\\p1}m 0 0 l 100 0 100 100{\\p0}"), true)
    XCTAssertEqual(text(track, at: 7.5), "Heavy line done\u{00A0}now")
    XCTAssertEqual(track.cues(at: 7.5).first?.pangoMarkup, "<b>Heavy</b> <u>line</u> done\u{00A0}now")
    XCTAssertEqual(text(track, at: 9.5), "Legacy top")
    XCTAssertEqual(track.cues(at: 9.5).first?.placement, .top)
    XCTAssertEqual(track.cues.count, 5, "the comment is no cue")
  }

  func testWebVTT() throws {
    let path = try TestMedia.file(
      named: "captions.vtt",
      contents: """
        WEBVTT

        00:01.000 --> 00:02.000
        Hello <i>vtt</i>

        intro
        00:00:03.000 --> 00:00:04.500 line:0
        Fish &amp; chips, a {brace} and a back\\slash

        """)
    let track = try SubtitleFile.read(path)
    XCTAssertEqual(track.format, "WebVTT")
    XCTAssertEqual(text(track, at: 1.5), "Hello vtt")
    XCTAssertEqual(track.cues(at: 1.5).first?.lines.first?.last, SubtitleRun("vtt", italic: true))
    XCTAssertEqual(text(track, at: 4.4), "Fish & chips, a {brace} and a back\\slash")
    XCTAssertEqual(track.cues(at: 4.4).first?.pangoMarkup, "Fish &amp; chips, a {brace} and a back\\slash")
  }

  func testEmbeddedSRTAndASSInMatroska() throws {
    let srt = try TestMedia.file(
      named: "embed.srt", contents: SubtitleMedia.srt([(1, 2, "First <i>line</i>"), (3, 4, "Second\nof two")]))
    let ass = try TestMedia.file(
      named: "embed.ass",
      contents: Self.assHeader(playRes: false) + """
        Dialogue: 0,0:00:01.50,0:00:02.50,Default,,0,0,0,,{\\an8\\pos(1,2)}Sign, with commas, {\\i1}top{\\i0}
        Dialogue: 0,0:00:04.00,0:00:05.00,Default,,0,0,0,,Two\\Nlines

        """)
    let mkv = try SubtitleMedia.muxed("subs-srt-ass.mkv", subtitles: [srt, ass], codecs: ["srt", "ass"])
    let first = try SubtitleFile.read(mkv)
    XCTAssertEqual(first.format, "SRT")
    XCTAssertEqual(text(first, at: 1.5), "First line")
    XCTAssertEqual(text(first, at: 3.5), "Second\nof two")
    XCTAssertNil(text(first, at: 2.5))
    let styled = try SubtitleFile.read(mkv, streamIndex: 2)
    XCTAssertEqual(styled.format, "ASS")
    XCTAssertEqual(text(styled, at: 2.0), "Sign, with commas, top")
    XCTAssertEqual(styled.cues(at: 2.0).first?.placement, .top)
    XCTAssertEqual(text(styled, at: 4.5), "Two\nlines")
    // Each cue of the script keeps it whole for libass: the header with its styles, and its event as Matroska has it.
    let sign = try XCTUnwrap(styled.cues(at: 2.0).first?.assEvent)
    XCTAssertTrue(sign.header.contains("[V4+ Styles]") && sign.header.contains("Style: Default,Arial,20"), sign.header)
    XCTAssertTrue(
      sign.line.hasSuffix(",0,Default,,0,0,0,,{\\an8\\pos(1,2)}Sign, with commas, {\\i1}top{\\i0}"), sign.line)
    XCTAssertNil(first.cues(at: 1.5).first?.assEvent, "SubRip is shown as text")
    XCTAssertThrowsError(try SubtitleFile.read(mkv, streamIndex: 0)) { error in
      XCTAssertTrue("\(error)".contains("not a subtitle stream"), "\(error)")
    }
  }

  /// The fonts a Matroska file carries for its ASS subtitles are read with it (libass is given them), and listed by
  /// the probe by name and size; a file whose subtitles name no fonts keeps none.
  func testFontsAttachedForASSSubtitlesAreReadWithTheFile() throws {
    let font = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
    let fontBytes = try XCTUnwrap(FileManager.default.contents(atPath: font), "fonts-dejavu-core is installed")
    let ass = try TestMedia.file(
      named: "fonts.ass",
      contents: Self.assHeader(playRes: true) + "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,Serif\n")
    let mkv = try SubtitleMedia.muxed("subs-ass-font.mkv", subtitles: [ass], codecs: ["ass"], fonts: [font])
    let info = try MediaSource(mkv).info
    XCTAssertEqual(info.attachedFonts, [EmbeddedFont(name: "DejaVuSerif.ttf", data: [UInt8](fontBytes))])
    XCTAssertTrue(info.json().contains("\"name\" : \"DejaVuSerif.ttf\""), info.json())
    let srt = try TestMedia.file(named: "fonts.srt", contents: SubtitleMedia.srt([(1, 2, "Plain")]))
    let plain = try SubtitleMedia.muxed("subs-srt-font.mkv", subtitles: [srt], codecs: ["srt"], fonts: [font])
    XCTAssertEqual(try MediaSource(plain).info.attachedFonts, [], "SubRip names no fonts")
  }

  func testMovTextInMP4() throws {
    let srt = try TestMedia.file(
      named: "movtext.srt", contents: SubtitleMedia.srt([(1, 2.5, "Hello <i>mp4</i>"), (3, 4, "Second")]))
    let mp4 = try SubtitleMedia.muxed("subs-movtext.mp4", subtitles: [srt], codecs: ["mov_text"])
    let track = try SubtitleFile.read(mp4)
    XCTAssertEqual(track.format, "mov_text")
    XCTAssertNil(text(track, at: 0.5))
    XCTAssertEqual(text(track, at: 1.2), "Hello mp4")
    XCTAssertEqual(track.cues(at: 1.2).first?.lines.first?.last, SubtitleRun("mp4", italic: true))
    XCTAssertNil(text(track, at: 2.7), "the gap between cues shows nothing")
    XCTAssertEqual(text(track, at: 3.9), "Second")
  }

  func testLegacyCharacterSetsComeOutExactly() throws {
    let french = "Déjà vu, naïve façade"
    let w1252 = try SubtitleMedia.encoded(
      "fr-1252.srt", SubtitleMedia.srt([(1, 2, french), (3, 4, "« Où est l’hôtel ? » — c’est à côté.")]),
      charset: "WINDOWS-1252")
    let fr = try SubtitleFile.read(w1252)
    XCTAssertEqual(text(fr, at: 1.5), french)
    XCTAssertEqual(text(fr, at: 3.5), "« Où est l’hôtel ? » — c’est à côté.")
    XCTAssertEqual(fr.charset?.encoding, .legacy("WINDOWS-1252"))
    // A single short line: uchardet says ISO-8859-1, read as its superset.
    let latin1 = try SubtitleMedia.encoded(
      "fr-latin1.srt", SubtitleMedia.srt([(1, 2, french)]), charset: "ISO-8859-1")
    XCTAssertEqual(text(try SubtitleFile.read(latin1), at: 1.5), french)

    let polish = ["Zażółć gęślą jaźń", "Pchnąć w tę łódź jeża lub ośm skrzyń fig."]
    let pl = try SubtitleFile.read(
      try SubtitleMedia.encoded(
        "pl-8859-2.srt", SubtitleMedia.srt([(1, 2, polish[0]), (3, 4, polish[1])]), charset: "ISO-8859-2"))
    XCTAssertEqual(text(pl, at: 1.5), polish[0])
    XCTAssertEqual(text(pl, at: 3.5), polish[1])
    let czech = "Příliš žluťoučký kůň úpěl ďábelské ódy."
    let cz = try SubtitleFile.read(
      try SubtitleMedia.encoded(
        "cs-8859-2.srt", SubtitleMedia.srt([(1, 2, czech), (3, 4, polish[0])]), charset: "ISO-8859-2"))
    XCTAssertEqual(text(cz, at: 1.5), czech)
    XCTAssertEqual(text(cz, at: 3.5), polish[0])
    let cz1250 = try SubtitleFile.read(
      try SubtitleMedia.encoded(
        "cs-1250.srt", SubtitleMedia.srt([(1, 2, czech), (3, 4, "Dobrý den, jak se máte?")]), charset: "WINDOWS-1250"))
    XCTAssertEqual(text(cz1250, at: 1.5), czech)

    let body = SubtitleMedia.srt([(1, 2, french), (3, 4, polish[0])])
    for (name, charset, bom) in [("le", "UTF-16LE", [UInt8]([0xFF, 0xFE])), ("be", "UTF-16BE", [0xFE, 0xFF])] {
      let track = try SubtitleFile.read(try SubtitleMedia.encoded("utf16\(name).srt", body, charset: charset, bom: bom))
      XCTAssertEqual(text(track, at: 1.5), french, charset)
      XCTAssertEqual(text(track, at: 3.5), polish[0], charset)
    }
    let utf8BOM = try TestMedia.file(named: "bom.srt", contents: Data([0xEF, 0xBB, 0xBF]) + Data(body.utf8))
    XCTAssertEqual(text(try SubtitleFile.read(utf8BOM), at: 1.5), french)
  }

  func testOverlappingCuesAreShownTogetherInStartOrder() throws {
    let path = try TestMedia.file(
      named: "overlap.srt", contents: SubtitleMedia.srt([(1, 4, "Long one"), (2, 3, "Short one"), (5, 6, "Later")]))
    let track = try SubtitleFile.read(path)
    XCTAssertEqual(track.cues(at: 2.5).map(\.plainText), ["Long one", "Short one"])
    XCTAssertEqual(track.cues(at: 3.5).map(\.plainText), ["Long one"])
    let store = CueStore()
    store.add(track.cues.reversed())
    XCTAssertEqual(store.active(at: 2.5).map(\.plainText), ["Long one", "Short one"])
    XCTAssertEqual(store.active(at: 5.5).map(\.plainText), ["Later"])
  }

  func testBadTimesAreDroppedOrClampedWithWarnings() throws {
    let path = try TestMedia.file(
      named: "bad-times.srt",
      contents: SubtitleMedia.srt([
        (1, 2, "Good one"), (3, 2.5, "Backwards"), (4, 4 + 5 * 3600, "Five hours"), (6, 7, "Good two"),
      ]))
    let track = try SubtitleFile.read(path)
    XCTAssertEqual(text(track, at: 1.5), "Good one")
    XCTAssertEqual(text(track, at: 6.5), "Good two")
    XCTAssertEqual(text(track, at: 5), "Five hours")
    XCTAssertEqual(track.cues.first { $0.plainText == "Five hours" }?.end, 6, "ends where the next cue starts")
    XCTAssertNil(track.cues.first { $0.start > 6.9 && $0.plainText == "Five hours" })
    XCTAssertTrue(
      track.warnings.contains { $0.contains("Five hours") && $0.contains("shortened") }, "\(track.warnings)")
  }

  /// The last cue ending before it starts: FFmpeg's reader gives it a length of -3.5 s (a cue before another lasts
  /// until that one), which came through the decoder's unsigned field as 49 days less 3.5 s: it showed for ten
  /// seconds, with a warning of a cue "1193:02:40" long.
  func testALastCueThatEndsBeforeItStartsIsDropped() throws {
    let path = try TestMedia.file(
      named: "backwards-last.srt",
      contents: "1\n00:00:01,000 --> 00:00:02,000\nGood\n\n2\n00:00:04,500 --> 00:00:01,000\nBackwards\n\n")
    let track = try SubtitleFile.read(path)
    XCTAssertEqual(text(track, at: 1.5), "Good")
    XCTAssertNil(text(track, at: 5), "\(track.cues.map { ($0.start, $0.end, $0.plainText) })")
    XCTAssertTrue(
      track.warnings.contains { $0.contains("Backwards") && $0.contains("ends before it starts") }, "\(track.warnings)")
  }

  func testGarbageNeverCrashesAndGoodCuesSurvive() throws {
    let random = try TestMedia.file(named: "random.srt", contents: Data(pseudoRandomBytes(4096, seed: 7)))
    XCTAssertThrowsError(try SubtitleFile.read(random)) { error in
      XCTAssertTrue("\(error)".contains(random), "the error names the file: \(error)")
      XCTAssertTrue("\(error)".contains("binary"), "\(error)")
    }
    let noisyTail = try TestMedia.file(
      named: "random-text.srt",
      contents: Data("1\n00:00:01,000 --> 00:00:02,000\nOK\n\n".utf8 + pseudoRandomBytes(2000, seed: 9)))
    // Refused as binary, or read: either way no crash, and a cue that is read is the good one.
    do {
      let track = try SubtitleFile.read(noisyTail)
      XCTAssertEqual(track.cues(at: 1.5).first?.plainText, "OK")
    } catch {
      XCTAssertTrue("\(error)".contains(noisyTail) && "\(error)".contains("binary"), "\(error)")
    }

    let good = SubtitleMedia.srt([(1, 2, "Good one"), (3, 4, "Good two"), (9, 10, "Good three")])
    let garbled =
      good.replacingOccurrences(
        of: "2\n00:00:03", with: "@@#$ garbage ~~ line\n\u{01}\u{02} control junk\n\n}{ more junk {\n\n2\n00:00:03")
      + "\n\n7\n00:00:11,0"
    let track = try SubtitleFile.read(try TestMedia.file(named: "garbled.srt", contents: garbled))
    XCTAssertEqual(track.cues(at: 1.5).first?.lines.first?.map(\.text).joined(), "Good one")
    XCTAssertEqual(track.cues(at: 3.5).first?.lines.first?.map(\.text).joined(), "Good two")
    XCTAssertEqual(track.cues(at: 9.5).first?.lines.first?.map(\.text).joined(), "Good three")

    let whole = try TestMedia.file(named: "to-cut.srt", contents: good)
    let cut = try TestMedia.truncated(whole, bytes: good.utf8.count - 12)
    let partial = try SubtitleFile.read(cut)
    XCTAssertEqual(text(partial, at: 1.5), "Good one")
    XCTAssertEqual(text(partial, at: 3.5), "Good two")

    let video = try Media.h264()
    XCTAssertThrowsError(try SubtitleFile.read(video)) { error in
      XCTAssertEqual(error as? MediaError, MediaError(.unplayable, source: video, reason: "no subtitle stream in it"))
    }
    let empty = try TestMedia.file(named: "empty.srt", contents: Data())
    XCTAssertThrowsError(try SubtitleFile.read(empty)) { XCTAssertTrue("\($0)".contains("empty file"), "\($0)") }
    XCTAssertThrowsError(try SubtitleFile.read("/nonexistent/movie.srt")) {
      XCTAssertEqual(($0 as? MediaError)?.kind, .missing)
    }
    let notSubtitles = try TestMedia.file(named: "prose.srt", contents: "Just some prose.\nNo timings at all.\n")
    XCTAssertThrowsError(try SubtitleFile.read(notSubtitles)) { error in
      XCTAssertTrue("\(error)".contains(notSubtitles), "\(error)")
    }
  }

  func testVobSubBitmapIsPlacedWithItsPaletteColours() throws {
    let idx = try SubtitleMedia.vobSub()
    let track = try SubtitleFile.read(idx)
    XCTAssertEqual(track.format, "VobSub")
    XCTAssertTrue(track.isBitmap)
    XCTAssertEqual(track.language, "en")
    try assertBoxes(track)
    // The .sub opened directly is read through its .idx.
    let sub = (idx as NSString).deletingPathExtension + ".sub"
    try assertBoxes(try SubtitleFile.read(sub))
  }

  func testDVDSubtitleTrackInMatroska() throws {
    let idx = try SubtitleMedia.vobSub()
    // Stream copy: the palette travels in the track's codec private data, as mkvmerge writes it.
    let mkv = try TestMedia.path("dvdsub.mkv", ["-i", idx, "-map", "0:s", "-c:s", "copy"])
    let track = try SubtitleFile.read(mkv)
    XCTAssertEqual(track.format, "DVD")
    try assertBoxes(track)
  }

  func testDVBSubtitleEndsWhenTheNextPacketClearsTheScreen() throws {
    let idx = try SubtitleMedia.vobSub()
    // DVB packets carry a time-out (30 s here) and the next, empty packet clears the screen at 2.5 s. The TS
    // starts at 1.4 s: times are the video's, from 0.
    let ts = try TestMedia.path(
      "dvbsub.ts",
      [
        "-f", "lavfi", "-i", "testsrc2=size=720x480:rate=25:duration=4", "-i", idx, "-map", "0:v", "-map", "1:s",
        "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:s", "dvbsub",
      ])
    let track = try SubtitleFile.read(ts)
    XCTAssertEqual(track.format, "DVB")
    try assertBoxes(track, tolerance: 0.05)
  }

  /// The spumux boxes shown from 1.0 s to 2.5 s, where they were drawn, in red and white, nothing around them.
  private func assertBoxes(
    _ track: SubtitleTrack, tolerance: Double = 0.01, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    XCTAssertEqual(track.cues.count, 1, file: file, line: line)
    let cue = try XCTUnwrap(track.cues.first, file: file, line: line)
    XCTAssertEqual(cue.start, 1.0, accuracy: tolerance, file: file, line: line)
    XCTAssertEqual(cue.end, 2.5, accuracy: tolerance, file: file, line: line)
    XCTAssertTrue(track.cues(at: 0.9).isEmpty && track.cues(at: 2.6).isEmpty, file: file, line: line)
    XCTAssertEqual(cue.plainText, "", file: file, line: line)
    let bitmap = try XCTUnwrap(cue.bitmaps.first, file: file, line: line)
    XCTAssertEqual(bitmap.canvasWidth, 720, file: file, line: line)
    XCTAssertEqual(bitmap.canvasHeight, 480, file: file, line: line)
    let red = SubtitleMedia.red
    let white = SubtitleMedia.white
    /// The colour at canvas point (x, y).
    func at(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
      guard x >= bitmap.x, y >= bitmap.y, x < bitmap.x + bitmap.width, y < bitmap.y + bitmap.height else {
        return (0, 0, 0, 0)
      }
      return bitmap.pixel(x - bitmap.x, y - bitmap.y)
    }
    func near(_ value: UInt8, _ target: UInt8) -> Bool { abs(Int(value) - Int(target)) <= 3 }
    for (x, y) in [(red.x, red.y), (red.x + red.width - 1, red.y + red.height - 1), (red.x + 100, red.y + 20)] {
      let c = at(x, y)
      XCTAssertTrue(
        near(c.r, 255) && near(c.g, 0) && near(c.b, 0) && c.a == 255, "red at \(x),\(y): \(c)", file: file, line: line)
    }
    for (x, y) in [(white.x, white.y), (white.x + white.width - 1, white.y + white.height - 1)] {
      let c = at(x, y)
      XCTAssertTrue(
        near(c.r, 255) && near(c.g, 255) && near(c.b, 255) && c.a == 255, "white at \(x),\(y): \(c)", file: file,
        line: line)
    }
    for (x, y) in [(red.x - 1, red.y), (red.x, red.y - 1), (350, 320), (white.x + white.width, white.y), (10, 10)] {
      XCTAssertEqual(at(x, y).a, 0, "transparent at \(x),\(y)", file: file, line: line)
    }
  }
}
