import CFFmpeg
import Foundation
import OrbTestSupport
import XCTest

@testable import OrbDecode

/// The parts of subtitle reading on their own: ASS text, character sets, the cue store, sidecar names, and the
/// packet-by-packet decoder the demux thread will use.
final class SubtitlePartsTests: XCTestCase {
  func testASSTextFieldKeepsCommasAndTagsBecomeStyles() {
    let text = ASSText(event: "3,0,Default,,0,0,0,,{\\i1}One, two{\\i0}, three\\N{\\b1\\u1}four{\\r}")
    XCTAssertEqual(
      text.lines,
      [
        [SubtitleRun("One, two", italic: true), SubtitleRun(", three")],
        [SubtitleRun("four", bold: true, underline: true)],
      ])
    XCTAssertEqual(
      ASSText(event: "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,Old, form").lines, [[SubtitleRun("Old, form")]])
    XCTAssertEqual(ASSText(text: "{\\an9}x").placement, .top)
    XCTAssertEqual(ASSText(text: "{\\an2}x").placement, .bottom)
    XCTAssertEqual(ASSText(text: "{\\a7}x").placement, .top)
    XCTAssertEqual(ASSText(text: "{\\a10}x").placement, .middle)
    XCTAssertEqual(ASSText(text: "{\\a2}x").placement, .bottom)
    XCTAssertEqual(ASSText(text: "{\\an5}x").placement, .middle)
    XCTAssertEqual(ASSText(text: "{\\an4}x").placement, .middle)
    XCTAssertTrue(ASSText(text: "{\\pos(1,2)}").isEmpty)
    XCTAssertTrue(ASSText(text: "{\\p2}m 0 0 l 1 1{\\p0}  ").isEmpty)
    XCTAssertEqual(
      ASSText(text: "a{\\t(0,500,\\i1\\b1)}b{\\1c&HFF00FF&\\alpha&H80&}c").lines,
      [[SubtitleRun("ab"), SubtitleRun("c", color: 0xFF00FF)]])
    XCTAssertEqual(ASSText(text: "line\\n{nested {odd} tag}x").lines, [[SubtitleRun("line  tag}x")]])
    XCTAssertEqual(ASSText(text: "a soft\\nbreak").lines, [[SubtitleRun("a soft break")]])
    XCTAssertEqual(ASSText(text: "one\\Ntwo").lines, [[SubtitleRun("one")], [SubtitleRun("two")]])
    XCTAssertEqual(
      ASSText(text: "keep \\{this\\} \\\\ {\\b600}w").lines,
      [[SubtitleRun("keep {this} \\ "), SubtitleRun("w", bold: true)]])
    XCTAssertEqual(ASSText(text: "\\N\\NMiddle\\N\\N").lines, [[SubtitleRun("Middle")]])
  }

  /// Each style's colour, weight and slant as the script's header gives them (ASS writes colours &HAABBGGRR), the
  /// text starting in its event's style, `\c`/`\1c` changing the colour (empty: back to the style's), `\r` back to
  /// the event's style and `\rName` to another; Pango markup carries the colour. Everything was white.
  func testASSStylesAndColourTagsColourTheText() {
    let styles = ASSStyles(
      header: """
        [Script Info]
        ScriptType: v4.00+

        [V4+ Styles]
        Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, \
        Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, \
        MarginR, MarginV, Encoding
        Style: Default,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1
        Style: Sign,Arial,20,&H0000FFFF,&H000000FF,&H00000000,&H00000000,-1,-1,0,0,100,100,0,0,1,2,0,8,10,10,10,1

        [Events]
        """.replacingOccurrences(of: "\\\n", with: ""))
    XCTAssertEqual(styles.style(named: "Sign"), ASSStyles.Style(bold: true, italic: true, color: 0xFFFF00))
    XCTAssertEqual(styles.style(named: "Default"), ASSStyles.Style())
    XCTAssertEqual(styles.style(named: "Missing"), ASSStyles.Style(), "an unknown style is Default")
    let sign = ASSText(event: "1,0,Sign,,0,0,0,,Yellow {\\c&H0000FF&}red{\\c} back{\\r} again", styles: styles)
    XCTAssertEqual(
      sign.lines,
      [
        [
          SubtitleRun("Yellow ", bold: true, italic: true, color: 0xFFFF00),
          SubtitleRun("red", bold: true, italic: true, color: 0xFF0000),
          SubtitleRun(" back again", bold: true, italic: true, color: 0xFFFF00),
        ]
      ])
    let plain = ASSText(event: "2,0,Default,,0,0,0,,white {\\rSign}sign{\\r}white", styles: styles)
    XCTAssertEqual(
      plain.lines,
      [[SubtitleRun("white "), SubtitleRun("sign", bold: true, italic: true, color: 0xFFFF00), SubtitleRun("white")]])
    XCTAssertEqual(ASSStyles.color("&H00FF8000&"), 0x0080FF)
    XCTAssertEqual(ASSStyles.color("&HFF8000"), 0x0080FF)
    XCTAssertEqual(ASSStyles.color("255"), 0xFF0000, "SSA's decimal BGR")
    XCTAssertNil(ASSStyles.color("&Hxyz&"))
    XCTAssertNil(ASSStyles.readable(0x101010), "too dark to read over the outline: white")
    XCTAssertEqual(ASSStyles.readable(0x0000FF), 0x0000FF)
    // A style named with a leading * is found without it; an unknown \rName is the event's own style; an empty \c
    // after \rName goes back to that style's colour.
    let starred = ASSStyles(
      header: "[V4+ Styles]\nStyle: *Blue,Arial,20,&H00FF0000\nStyle: Default,Arial,20,&H0000FF00")
    XCTAssertEqual(starred.style(named: "Blue").color, 0x0000FF, "no Format line: ASS's order")
    // SSA's order, without a Format line: field 10 is its BorderStyle (1), not an underline.
    let ssa = ASSStyles(header: "[V4 Styles]\nStyle: Red,Arial,20,255,65535,65535,0,-1,0,1,2,0,2,10,10,10,0,0")
    XCTAssertEqual(ssa.style(named: "Red"), ASSStyles.Style(bold: true, color: 0xFF0000))
    XCTAssertEqual(
      ASSText(event: "1,0,Default,,0,0,0,,a{\\rBlue}b{\\c&H0000FF&}c{\\c}d{\\rNone}e", styles: starred).lines,
      [
        [
          SubtitleRun("a", color: 0x00FF00), SubtitleRun("b", color: 0x0000FF), SubtitleRun("c", color: 0xFF0000),
          SubtitleRun("d", color: 0x0000FF), SubtitleRun("e", color: 0x00FF00),
        ]
      ])
    let cue = SubtitleCue(start: 0, end: 1, lines: sign.lines)
    XCTAssertEqual(
      cue.pangoMarkup,
      "<span foreground=\"#ffff00\"><b><i>Yellow </i></b></span><span foreground=\"#ff0000\"><b><i>red</i></b></span>"
        + "<span foreground=\"#ffff00\"><b><i> back again</i></b></span>")
  }

  func testACueIsCutAtItsLongestText() {
    let long = SubtitleCue(
      start: 0, end: 1, lines: [[SubtitleRun("ab"), SubtitleRun(String(repeating: "x", count: 9000))]])
    XCTAssertEqual(long.plainText.count, SubtitleCue.longestText + 1)
    XCTAssertTrue(long.plainText.hasPrefix("abxx") && long.plainText.hasSuffix("x…"))
    let many = SubtitleCue(start: 0, end: 1, lines: (1...100).map { [SubtitleRun("line \($0)")] })
    XCTAssertEqual(many.lines.count, SubtitleCue.mostLines)
    XCTAssertEqual(many.plainText.split(separator: "\n").last, "line 40…")
    let usual = SubtitleCue(start: 0, end: 1, lines: [[SubtitleRun("One", italic: true)], [SubtitleRun("two")]])
    XCTAssertEqual(usual.lines, [[SubtitleRun("One", italic: true)], [SubtitleRun("two")]])
  }

  func testPangoMarkupEscapesAndNests() {
    let cue = SubtitleCue(
      start: 0, end: 1,
      lines: [[SubtitleRun("<Tom> & \"Jerry's\"", bold: true, italic: true)], [SubtitleRun("plain")]])
    XCTAssertEqual(cue.pangoMarkup, "<b><i>&lt;Tom&gt; &amp; &quot;Jerry&apos;s&quot;</i></b>\nplain")
    XCTAssertEqual(cue.plainText, "<Tom> & \"Jerry's\"\nplain")
  }

  func testCharsetDetection() {
    XCTAssertEqual(SubtitleCharset(of: Array("plain ascii".utf8)).encoding, .utf8)
    XCTAssertEqual(SubtitleCharset(of: Array("żółw".utf8)).encoding, .utf8)
    XCTAssertEqual(SubtitleCharset(of: [0xEF, 0xBB, 0xBF, 0x41]).encoding, .utf8)
    XCTAssertEqual(SubtitleCharset(of: [0xFF, 0xFE, 0x41, 0x00]).encoding, .utf16LittleEndian)
    XCTAssertEqual(SubtitleCharset(of: [0xFE, 0xFF, 0x00, 0x41]).encoding, .utf16BigEndian)
    XCTAssertNil(SubtitleCharset(of: [0xFE, 0xFF, 0x00, 0x41]).decoderCharacterSet)
    XCTAssertEqual(SubtitleCharset.refined("ISO-8859-1", [0xE9]), "WINDOWS-1252")
    XCTAssertEqual(SubtitleCharset.refined("WINDOWS-1250", [0xB1]), "ISO-8859-2")
    XCTAssertEqual(SubtitleCharset.refined("WINDOWS-1250", [0x9A]), "WINDOWS-1250")
    let unknown = SubtitleCharset(of: [0xFF, 0x81, 0x82, 0xFF, 0x90])
    XCTAssertNotNil(unknown.decoderCharacterSet)
    if unknown.warning != nil { XCTAssertEqual(unknown.encoding, .legacy("WINDOWS-1252")) }
  }

  func testCueStoreDedupsClosesAndDelays() {
    let store = CueStore()
    let a = SubtitleCue(start: 1, end: 3, lines: [[SubtitleRun("A")]])
    let b = SubtitleCue(start: 2, end: 4, lines: [[SubtitleRun("B")]])
    var generation = store.generation
    store.add([a, b])
    XCTAssertNotEqual(store.generation, generation)
    generation = store.generation
    store.add([a])  // read again after a seek
    XCTAssertEqual(store.count, 2)
    XCTAssertEqual(store.generation, generation, "nothing changed")
    XCTAssertEqual(store.active(at: 2.5).map(\.plainText), ["A", "B"])
    XCTAssertEqual(store.active(at: 3.5).map(\.plainText), ["B"])

    store.delay = 0.5
    XCTAssertNotEqual(store.generation, generation)
    XCTAssertEqual(store.active(at: 1.2).map(\.plainText), [])
    XCTAssertEqual(store.active(at: 4.2).map(\.plainText), ["B"])
    XCTAssertEqual(store.active(at: 4.2).first?.start, 2.5, "cues come back with the delay applied")
    store.delay = 0

    // Open-ended bitmap-like cues on track 1: each ends where the next starts; track 0 is left alone.
    let open1 = SubtitleCue(start: 10, end: .infinity, lines: [[SubtitleRun("P1")]])
    let open2 = SubtitleCue(start: 12, end: .infinity, lines: [[SubtitleRun("P2")]])
    store.add([open1], track: 1)
    XCTAssertEqual(store.active(at: 100).map(\.plainText), ["P1"])
    store.add([open2], track: 1)
    XCTAssertEqual(store.active(at: 11).map(\.plainText), ["P1"])
    XCTAssertEqual(store.active(at: 12.5).map(\.plainText), ["P2"])
    generation = store.generation
    store.apply(SubtitleUpdate(clearsAt: 13), track: 1)
    XCTAssertNotEqual(store.generation, generation)
    XCTAssertEqual(store.active(at: 13.5).map(\.plainText), [])
    XCTAssertEqual(store.active(at: 2.5).map(\.plainText), ["A", "B"])

    // A finite bitmap cue with a time-out is cut short by its track's next packet.
    store.apply(
      SubtitleUpdate(cues: [SubtitleCue(start: 20, end: 50, lines: [[SubtitleRun("T")]])], clearsAt: 20), track: 1)
    store.apply(SubtitleUpdate(clearsAt: 22), track: 1)
    XCTAssertEqual(store.active(at: 21).map(\.plainText), ["T"])
    XCTAssertEqual(store.active(at: 23).map(\.plainText), [])

    generation = store.generation
    store.clear()
    XCTAssertNotEqual(store.generation, generation)
    XCTAssertEqual(store.count, 0)
    XCTAssertEqual(store.active(at: 2.5), [])
  }

  func testCueStoreFindsLongCuesAmongMany() {
    let store = CueStore()
    var cues = (0..<2000).map { SubtitleCue(start: Double($0), end: Double($0) + 0.5, lines: [[SubtitleRun("\($0)")]]) }
    cues.append(SubtitleCue(start: 100, end: 400, lines: [[SubtitleRun("long")]]))
    store.add(cues.shuffled())
    XCTAssertEqual(store.active(at: 300.25).map(\.plainText), ["long", "300"])
    XCTAssertEqual(store.active(at: 1500.25).map(\.plainText), ["1500"])
    XCTAssertEqual(store.active(at: 1500.75).map(\.plainText), [])
  }

  /// A video whose name is not UTF-8 (an old archive's Latin-1 "café", E9 as one byte), named by the file:// URL the
  /// command line turns it into: its sidecars are found byte for byte, come as file:// URLs where their names are not
  /// UTF-8 either, pass the file check, and are read.
  func testSidecarsOfAVideoNamedInLatin1() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("orb-latin1-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let stem = Array("\(folder)/caf".utf8) + [0xE9]
    let srt = "1\n00:00:00,500 --> 00:00:02,000\nBonjour du fichier\n"
    for (suffix, text) in [(".mkv", "x"), (".srt", srt), (".fr.srt", srt), ("e.srt", srt)] {
      let path = (stem + Array(suffix.utf8)).map { CChar(bitPattern: $0) } + [0]
      let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
      XCTAssertGreaterThanOrEqual(fd, 0)
      _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      close(fd)
    }
    let found = SidecarFinder.find(forVideo: MediaSource.fileURL(absolute: stem + Array(".mkv".utf8)))
    let expected = [".srt", ".fr.srt"].map { MediaSource.fileURL(absolute: stem + Array($0.utf8)) }
    XCTAssertEqual(found.map(\.path), expected)
    XCTAssertEqual(found.map(\.displayName), ["SRT", "French (SRT)"])
    let first = try XCTUnwrap(found.first)
    XCTAssertNil(MediaError.checkLocalFile(first.path, what: "subtitle file"))
    let track = try SubtitleFile.read(first.path)
    XCTAssertEqual(track.cues.map(\.plainText), ["Bonjour du fichier"])
  }

  func testSidecarFinder() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("orb-sidecars-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let names = [
      "movie.mkv", "movie.srt", "movie.en.srt", "movie.eng.forced.SRT", "movie.pt-BR.default.ass", "movie.xx.vtt",
      "movie.sub", "movie.idx", "movie.fr.sub", "movie2.srt", "movie.en.txt", "other.srt", "movie..srt",
    ]
    for name in names {
      XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder)/\(name)", contents: Data("x".utf8)))
    }
    let found = SidecarFinder.find(forVideo: "\(folder)/movie.mkv")
    XCTAssertEqual(
      found.map { ($0.path as NSString).lastPathComponent },
      [
        "movie.idx", "movie.srt", "movie.en.srt", "movie.eng.forced.SRT", "movie.fr.sub", "movie.pt-BR.default.ass",
        "movie.xx.vtt",
      ])
    XCTAssertEqual(
      found.map(\.displayName),
      [
        "VobSub", "SRT", "English (SRT)", "English, forced (SRT)", "French (SUB)", "Portuguese (BR), default (ASS)",
        "xx (WebVTT)",
      ])
    let forced = try XCTUnwrap(found.first { $0.tags == ["eng", "forced"] })
    XCTAssertEqual(forced.language, "eng")
    XCTAssertTrue(forced.isForced)
    XCTAssertFalse(forced.isDefault)
    XCTAssertEqual(SubtitleLanguage.displayName("GER"), "German")
    XCTAssertEqual(SubtitleLanguage.displayName("chi"), "Chinese")
    XCTAssertEqual(SubtitleFile.language(inName: "/x/The.Movie.2020.fra.forced.srt"), "fra")
    XCTAssertNil(SubtitleFile.language(inName: "/x/The.Big.Fat.srt"))
  }

  /// The demux thread's path: one packet's bytes and times at a time.
  func testDecoderTakesPacketBytes() throws {
    let path = try TestMedia.file(
      named: "packets.srt", contents: "1\n00:00:01,000 --> 00:00:02,500\n<i>Packet</i> one\n")
    var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
    XCTAssertEqual(avformat_open_input(&ctx, path, nil, nil), 0)
    defer { avformat_close_input(&ctx) }
    let opened = try XCTUnwrap(ctx)
    let stream = try XCTUnwrap(opened.pointee.streams[0])
    let parameters = try XCTUnwrap(StreamParameters(stream))
    let decoder = try SubtitleDecoder(parameters)
    XCTAssertFalse(decoder.isBitmap)
    let packet = try XCTUnwrap(av_packet_alloc())
    defer {
      var p: UnsafeMutablePointer<AVPacket>? = packet
      av_packet_free(&p)
    }
    XCTAssertEqual(av_read_frame(opened, packet), 0)
    let bytes = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    let update = try bytes.withUnsafeBytes {
      try decoder.decode($0, pts: 1000, duration: 1500, timeBase: AVRational(num: 1, den: 1000), origin: 0.25)
    }
    XCTAssertNil(update.clearsAt)
    XCTAssertEqual(update.cues.count, 1)
    XCTAssertEqual(update.cues.first?.start, 0.75)
    XCTAssertEqual(update.cues.first?.end, 2.25)
    XCTAssertEqual(update.cues.first?.pangoMarkup, "<i>Packet</i> one")
    let unknownEnd = try bytes.withUnsafeBytes {
      try decoder.decode($0, pts: 4000, duration: nil, timeBase: AVRational(num: 1, den: 1000))
    }
    XCTAssertEqual(unknownEnd.cues.first?.start, 4)
    XCTAssertNotNil(unknownEnd.cues.first?.end)
    XCTAssertThrowsError(try SubtitleDecoder(parameters, characterSet: "NO-SUCH-CHARSET-1"))
  }
}
