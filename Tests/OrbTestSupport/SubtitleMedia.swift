import Foundation
import XCTest

/// Subtitle files the subtitle tests read: text written by the test, legacy encodings made with iconv, tracks
/// muxed into containers with ffmpeg, DVD subpictures made with spumux (dvdauthor). Cached like `Media`'s clips.
public enum SubtitleMedia {
  /// SRT text: one cue a (start, end, text) triple; times in seconds.
  public static func srt(_ cues: [(Double, Double, String)]) -> String {
    cues.enumerated().map { i, cue in "\(i + 1)\n\(srtTime(cue.0)) --> \(srtTime(cue.1))\n\(cue.2)\n" }
      .joined(separator: "\n")
  }

  public static func srtTime(_ seconds: Double) -> String {
    let ms = Int((seconds * 1000).rounded())
    return String(format: "%02d:%02d:%02d,%03d", ms / 3_600_000, (ms / 60000) % 60, (ms / 1000) % 60, ms % 1000)
  }

  /// `text` converted from UTF-8 to `charset` by iconv, written as `name`; with a byte-order mark first if given.
  public static func encoded(_ name: String, _ text: String, charset: String, bom: [UInt8] = []) throws -> String {
    try Requirement.require(Tool.find("iconv") != nil, "iconv is not installed")
    let source = try TestMedia.file(named: "utf8-\(name)", contents: text)
    let result = Tool.run("iconv", ["-f", "UTF-8", "-t", charset, source])
    guard result.succeeded else { throw TestMediaError("iconv to \(charset) failed: \(result.stderr)") }
    return try TestMedia.file(named: name, contents: Data(bom) + result.stdoutData)
  }

  /// An ASS script for a picture `width` by `height` (PlayResX, PlayResY): `styles` (each a Style line's fields,
  /// in the standard V4+ order), then `events` (each a Dialogue line's fields, "Layer,Start,End,Style,…,Text").
  public static func assScript(width: Int, height: Int, styles: [String], events: [String] = []) -> String {
    let styleFormat =
      "Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, "
      + "StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, "
      + "MarginV, Encoding"
    let eventFormat = "Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text"
    let lines =
      ["[Script Info]", "ScriptType: v4.00+", "PlayResX: \(width)", "PlayResY: \(height)", "", "[V4+ Styles]"]
      + ["Format: \(styleFormat)"] + styles.map { "Style: \($0)" } + ["", "[Events]", "Format: \(eventFormat)"]
      + events.map { "Dialogue: \($0)" }
    return lines.joined(separator: "\n") + "\n"
  }

  /// An ASS style line's fields (after "Style: "): DejaVu Sans at `size`, in `colour` (&HAABBGGRR), bold or not, a
  /// 2-pixel black outline, bottom centre, margins of 10.
  public static func assStyle(
    _ name: String, size: Int = 24, colour: String = "&H00FFFFFF", bold: Bool = false
  ) -> String {
    "\(name),DejaVu Sans,\(size),\(colour),\(colour),&H00000000,&H00000000,\(bold ? 1 : 0),0,0,0,100,100,0,0,1,2,0,2,"
      + "10,10,10,1"
  }

  /// An ASS event's fields (after "Dialogue: ") drawing a 60x60 green square whose top left is at (`x`, `y`) of the
  /// script, from `start` to `end` (H:MM:SS.cc).
  public static func assGreenSquare(layer: Int = 0, _ start: String, _ end: String, style: String, x: Int, y: Int)
    -> String
  {
    "\(layer),\(start),\(end),\(style),,0,0,0,,{\\an7\\pos(\(x),\(y))\\bord0\\1c&H00FF00&\\p1}m 0 0 l 60 0 60 60 0 60{\\p0}"
  }

  /// A 2 s 320x240 H.264 clip with the given subtitle files as tracks, in order, each converted to `codecs[i]`.
  public static func muxed(_ name: String, subtitles: [String], codecs: [String], fonts: [String] = []) throws
    -> String
  {
    var args = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=6"]
    for file in subtitles { args += ["-i", file] }
    args += ["-map", "0:v"]
    for i in subtitles.indices { args += ["-map", "\(i + 1):s"] }
    args += ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
    for (i, codec) in codecs.enumerated() { args += ["-c:s:\(i)", codec] }
    // Matroska attachments, as mkvmerge writes a release's fonts.
    for (i, font) in fonts.enumerated() {
      args += ["-attach", font, "-metadata:s:t:\(i)", "mimetype=application/x-truetype-font"]
    }
    return try TestMedia.path(name, args)
  }

  /// The DVD subpicture's boxes on a 720x480 canvas: a red one at (100, 300), 200x40, and a white one at
  /// (400, 300), 100x40; nothing else is drawn.
  public static let red = (x: 100, y: 300, width: 200, height: 40)
  public static let white = (x: 400, y: 300, width: 100, height: 40)

  /// A VobSub pair (.idx and .sub) showing the boxes from 1.0 s to 2.5 s: spumux turns a PNG into a DVD
  /// subpicture stream, and the .idx (written here) gives the palette: red, white, black, grey.
  public static func vobSub() throws -> String {
    try Requirement.require(Tool.find("spumux") != nil, "spumux is not installed (Debian package dvdauthor)")
    let png = try TestMedia.path(
      "spu-boxes.png",
      [
        "-f", "lavfi", "-i",
        "color=c=black:s=720x480,drawbox=x=\(red.x):y=\(red.y):w=\(red.width):h=\(red.height):color=red:t=fill,"
          + "drawbox=x=\(white.x):y=\(white.y):w=\(white.width):h=\(white.height):color=white:t=fill",
        "-frames:v", "1", "-pix_fmt", "rgb24",
      ])
    let xml = try TestMedia.file(
      named: "spu-boxes.xml",
      contents: """
        <subpictures format="NTSC">
          <stream>
            <spu start="00:00:01.00" end="00:00:02.50" image="\(png)" transparent="000000" force="yes" />
          </stream>
        </subpictures>

        """)
    let muxed = Tool.run("spumux", ["--nomux", "-m", "dvd", xml])
    guard muxed.succeeded, !muxed.stdoutData.isEmpty else {
      throw TestMediaError("spumux failed (status \(muxed.status)): \(muxed.stderr)")
    }
    _ = try TestMedia.file(named: "spu-boxes.sub", contents: muxed.stdoutData)
    let palette = ["ff0000", "ffffff", "000000", "808080"] + Array(repeating: "000000", count: 12)
    return try TestMedia.file(
      named: "spu-boxes.idx",
      contents: """
        # VobSub index file, v7 (do not modify this line!)
        size: 720x480
        palette: \(palette.joined(separator: ", "))

        id: en, index: 0
        timestamp: 00:00:01:000, filepos: 000000000

        """)
  }
}

/// Deterministic bytes that look random (SplitMix64), so a failure can be reproduced.
public func pseudoRandomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
  var rng = SplitMix64(seed: seed)
  return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
}
