/// A piece of cue text in one style.
/// Thread-safety: a value type; safe to pass between threads.
public struct SubtitleRun: Sendable, Equatable {
  public var text: String
  public var bold: Bool
  public var italic: Bool
  public var underline: Bool
  /// The text's colour, 0xRRGGBB; nil: the default (white).
  public var color: UInt32?

  public init(
    _ text: String, bold: Bool = false, italic: Bool = false, underline: Bool = false, color: UInt32? = nil
  ) {
    self.text = text
    self.bold = bold
    self.italic = italic
    self.underline = underline
    self.color = color
  }

  /// Whether `other` has the same style (so the two can be one run).
  func sameStyle(as other: SubtitleRun) -> Bool {
    bold == other.bold && italic == other.italic && underline == other.underline && color == other.color
  }
}

/// Where a cue goes on the picture, by its row: ASS `\an7`–`\an9` (legacy SSA `\a5`–`\a7`) the top, `\an4`–`\an6`
/// (SSA `\a9`–`\a11`) the middle, everything else the bottom.
/// Thread-safety: a value type; safe to pass between threads.
public enum SubtitlePlacement: Sendable, Equatable {
  case bottom
  case top
  case middle
}

/// One picture of a bitmap cue (DVD, VobSub, DVB, PGS), placed on the codec's canvas.
/// Thread-safety: a value type; safe to pass between threads.
public struct SubtitleBitmap: Sendable, Equatable {
  /// The picture's place and size in canvas pixels.
  public var x: Int
  public var y: Int
  public var width: Int
  public var height: Int
  /// The canvas the place is measured on: the codec's size, else the video's size the decoder was given.
  /// Scale `x`, `y`, `width` and `height` by the displayed video size over this.
  public var canvasWidth: Int
  public var canvasHeight: Int
  /// Straight (not premultiplied) RGBA, 8 bits a component, `width * 4` bytes a row, no padding, top row first.
  public var rgba: [UInt8]

  public init(
    x: Int, y: Int, width: Int, height: Int, canvasWidth: Int, canvasHeight: Int, rgba: [UInt8]
  ) {
    self.x = x
    self.y = y
    self.width = width
    self.height = height
    self.canvasWidth = canvasWidth
    self.canvasHeight = canvasHeight
    self.rgba = rgba
  }

  /// The RGBA components of the pixel at (`column`, `row`) of the picture.
  public func pixel(_ column: Int, _ row: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
    let i = (row * width + column) * 4
    return (rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3])
  }
}

/// A cue of an ASS/SSA script, as the script has it, for a renderer that draws the whole language (libass): its
/// place, fonts, sizes, outlines, movement, fades and drawings, which `lines` keeps only the text and colours of.
/// Thread-safety: a value type; safe to pass between threads.
public struct ASSEvent: Sendable, Equatable {
  /// The script's header: `[Script Info]`, `[V4+ Styles]` and the `[Events]` format line. The same storage is shared
  /// by every cue of a track.
  public var header: String
  /// The event as Matroska stores it (and FFmpeg decodes it): "ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,
  /// Effect,Text".
  public var line: String

  public init(header: String, line: String) {
    self.header = header
    self.line = line
  }

  /// The longest event drawn as its script has it, in bytes: a sign's drawing runs to tens of KB.
  public static let longestLine = 256 * 1024
  /// The longest script header drawn with: styles and a few fonts of its own.
  public static let longestHeader = 16 << 20
}

/// What is shown from `start` to `end`: styled lines of text, or pictures.
/// Thread-safety: a value type; safe to pass between threads.
public struct SubtitleCue: Sendable, Equatable {
  /// Media seconds, on the scale of video frames' times.
  public var start: Double
  /// Media seconds; `.infinity` while open-ended (a bitmap cue that lasts until the track's next cue or clear).
  public var end: Double
  /// The text, one array of runs a line. Empty for a bitmap cue.
  public var lines: [[SubtitleRun]]
  public var placement: SubtitlePlacement
  /// The pictures of a bitmap cue. Empty for a text cue.
  public var bitmaps: [SubtitleBitmap]
  /// The cue as its script has it, for a cue of an ASS or SSA track; nil for every other format. A script's cue may
  /// have no `lines` (a drawing) and still be shown.
  public var assEvent: ASSEvent?

  public init(
    start: Double, end: Double, lines: [[SubtitleRun]] = [], placement: SubtitlePlacement = .bottom,
    bitmaps: [SubtitleBitmap] = [], assEvent: ASSEvent? = nil
  ) {
    self.start = start
    self.end = end
    self.lines = Self.capped(lines)
    self.placement = placement
    self.bitmaps = bitmaps
    // A cue too long to show whole is shown cut, as text: never handed whole to a renderer, which would take the
    // window's thread for as long as it lays it out.
    self.assEvent = assEvent.flatMap { $0.line.utf8.count <= ASSEvent.longestLine && self.lines == lines ? $0 : nil }
  }

  /// The most characters of a cue shown (a long paragraph is about 2,000), and the most lines: past them the text
  /// ends in "…". A broken or hostile file's cue of 10 MB on one line held the window's thread in Pango's layout
  /// for good (no picture, no event, no quit).
  public static let longestText = 4000
  public static let mostLines = 40

  static func capped(_ lines: [[SubtitleRun]]) -> [[SubtitleRun]] {
    var left = longestText
    var kept: [[SubtitleRun]] = []
    for line in lines.prefix(mostLines) {
      var runs: [SubtitleRun] = []
      for var run in line {
        let count = run.text.unicodeScalars.count
        if count > left {
          run.text = String(String.UnicodeScalarView(run.text.unicodeScalars.prefix(left))) + "…"
          runs.append(run)
          kept.append(runs)
          return kept
        }
        left -= count
        runs.append(run)
      }
      kept.append(runs)
    }
    if lines.count > mostLines, var last = kept.popLast() {
      last.append(SubtitleRun("…"))
      kept.append(last)
    }
    return kept
  }

  /// Whether its end is not known yet.
  public var isOpenEnded: Bool { end == .infinity }

  /// Whether it is shown at media time `time`.
  public func isActive(at time: Double) -> Bool { start <= time && time < end }

  /// The text without styles, lines joined with "\n".
  public var plainText: String {
    lines.map { $0.map(\.text).joined() }.joined(separator: "\n")
  }

  /// The text as Pango markup: `<b>`, `<i>`, `<u>` for the styles, markup characters escaped, lines joined with "\n".
  public var pangoMarkup: String {
    lines.map { line in
      line.map { run in
        var text = Self.escaped(run.text)
        if run.underline { text = "<u>\(text)</u>" }
        if run.italic { text = "<i>\(text)</i>" }
        if run.bold { text = "<b>\(text)</b>" }
        if let color = run.color { text = "<span foreground=\"#" + Self.hex(color) + "\">\(text)</span>" }
        return text
      }.joined()
    }.joined(separator: "\n")
  }

  /// "ff8000" for 0xFF8000.
  static func hex(_ color: UInt32) -> String {
    let digits = String(color & 0xFF_FFFF, radix: 16)
    return String(repeating: "0", count: 6 - digits.count) + digits
  }

  /// `text` with the five characters Pango's markup parser treats specially written as entities.
  static func escaped(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for ch in text {
      switch ch {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "'": out += "&apos;"
      case "\"": out += "&quot;"
      default: out.append(ch)
      }
    }
    return out
  }
}
