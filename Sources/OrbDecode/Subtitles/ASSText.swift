/// The text of an ASS event as styled lines: what libavcodec's text subtitle decoders (SubRip, ASS/SSA, mov_text,
/// WebVTT, MicroDVD …) put in `AVSubtitleRect.ass`.
///
/// In FFmpeg 5.1 the event is "ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text": eight fields, then
/// the text, which may hold commas. Understood in the text: `\N` (a line break), `\n` (a soft break: a space, as
/// libass draws it but with WrapStyle 2), `\h` (a no-break space),
/// `\{`, `\}` and `\\` (WebVTT's escapes), and in override blocks `\b` (1, 0 or a weight: 600 and more is bold),
/// `\i`, `\u`, `\c` and `\1c` (the colour, `&HBBGGRR&`; empty: the style's), `\r` (back to the event's style, or
/// `\rName` to that style), `\an1`–`\an9` and SSA's `\a1`–`\a11` (the row: top, middle or bottom) and `\p` (drawing mode: the vector
/// drawing's text is dropped). Every other tag, with its parenthesised arguments, is removed, as is an override block
/// left open at the end. The event's style (its Style field, looked up in the script's `ASSStyles`) gives the
/// colour, bold, italic and underline the text starts with; SubRip's `<font color>` comes as `\c` too.
/// Thread-safety: a value type; safe to pass between threads.
public struct ASSText: Sendable, Equatable {
  public var lines: [[SubtitleRun]]
  public var placement: SubtitlePlacement

  /// Whether nothing visible is left (no text, or only spaces).
  public var isEmpty: Bool {
    lines.allSatisfy { line in line.allSatisfy { $0.text.allSatisfy(\.isWhitespace) } }
  }

  /// Decodes HTML's character references in every run (`CharacterReferences`), for formats whose text is HTML-like.
  mutating func decodeCharacterReferences() {
    for l in lines.indices {
      for r in lines[l].indices { lines[l][r].text = CharacterReferences.decoded(lines[l][r].text) }
    }
  }

  /// Parses a whole event as FFmpeg gives it (the fields before the text are skipped but its Style, which `styles`
  /// describes).
  public init(event: String, styles: ASSStyles = ASSStyles()) {
    self.init(text: Self.textField(of: event), styles: styles, style: Self.styleField(of: event))
  }

  /// Parses the Text field alone, in the style named `style` of `styles`.
  public init(text: String, styles: ASSStyles = ASSStyles(), style: String? = nil) {
    var parser = Parser(styles: styles, base: styles.style(named: style))
    // Far more than a cue shows (`SubtitleCue.longestText`), with room for its tags.
    parser.parse(Array(text.unicodeScalars.prefix(16 * SubtitleCue.longestText)))
    lines = parser.finishedLines()
    placement = parser.placement
  }

  /// The Text field of an event: after the eighth comma ("ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect"),
  /// or after the ninth in the "Dialogue: Layer,Start,End,…" form older FFmpeg versions wrote. Text with fewer commas
  /// is taken whole.
  static func textField(of event: String) -> String {
    let fields = event.hasPrefix("Dialogue:") ? 9 : 8
    var commas = 0
    for index in event.indices where event[index] == "," {
      commas += 1
      if commas == fields { return String(event[event.index(after: index)...]) }
    }
    return event
  }

  /// The Style field of an event: the third ("ReadOrder,Layer,Style,…"), or the fourth in the "Dialogue: Layer,Start,
  /// End,Style,…" form.
  static func styleField(of event: String) -> String? {
    let fields = event.split(separator: ",", maxSplits: 4, omittingEmptySubsequences: false)
    let index = event.hasPrefix("Dialogue:") ? 3 : 2
    return fields.count > index ? String(fields[index]).trimmingSpaces : nil
  }

  /// The state of one pass over the text.
  private struct Parser {
    let styles: ASSStyles
    /// The event's style: what `\r` goes back to.
    let base: ASSStyles.Style
    /// The style in force (`\rName` changes it): what an empty `\c` goes back to.
    var current: ASSStyles.Style
    init(styles: ASSStyles, base: ASSStyles.Style) {
      self.styles = styles
      self.base = base
      current = base
      take(base)
    }

    mutating func take(_ style: ASSStyles.Style) {
      current = style
      bold = style.bold
      italic = style.italic
      underline = style.underline
      color = style.color
    }
    var lines: [[SubtitleRun]] = []
    var line: [SubtitleRun] = []
    var pending = String.UnicodeScalarView()
    var bold = false
    var italic = false
    var underline = false
    var color: UInt32?
    var drawing = false
    var placement = SubtitlePlacement.bottom

    mutating func parse(_ s: [Unicode.Scalar]) {
      var i = 0
      while i < s.count {
        let c = s[i]
        if c == "{" {
          guard let close = s[(i + 1)...].firstIndex(of: "}") else { break }  // an unclosed block hides the rest
          overrideBlock(s[(i + 1)..<close])
          i = close + 1
          continue
        }
        if c == "\\", i + 1 < s.count {
          switch s[i + 1] {
          case "N":
            breakLine()
            i += 2
            continue
          case "n":
            // A soft break, which ASS renderers make a space unless the script wraps with WrapStyle 2 (rare).
            append(" ")
            i += 2
            continue
          case "h":
            append("\u{00A0}")
            i += 2
            continue
          case "{", "}", "\\":
            append(s[i + 1])
            i += 2
            continue
          default: break
          }
        }
        if c == "\n" {
          breakLine()
        } else if c.value >= 0x20 && c.value != 0x7F {  // control characters are never shown
          append(c)
        }
        i += 1
      }
    }

    mutating func append(_ c: Unicode.Scalar) {
      if !drawing { pending.append(c) }
    }

    /// Ends the text in the current style, so a tag can change it.
    mutating func flush() {
      guard !pending.isEmpty else { return }
      let run = SubtitleRun(String(pending), bold: bold, italic: italic, underline: underline, color: color)
      pending = String.UnicodeScalarView()
      if let last = line.last, last.sameStyle(as: run) {
        line[line.count - 1].text += run.text
      } else {
        line.append(run)
      }
    }

    mutating func breakLine() {
      flush()
      lines.append(line)
      line = []
    }

    /// The lines, without spaces at their ends (`\h` stays) and without the empty ones at the start and the end.
    mutating func finishedLines() -> [[SubtitleRun]] {
      breakLine()
      let trimmed = lines.map(Self.trimmed)
      guard let first = trimmed.firstIndex(where: { !$0.isEmpty }), let last = trimmed.lastIndex(where: { !$0.isEmpty })
      else { return [] }
      return Array(trimmed[first...last])
    }

    /// `line` without the plain spaces (and tabs) it starts or ends with, and without runs left empty.
    static func trimmed(_ line: [SubtitleRun]) -> [SubtitleRun] {
      var runs = line
      let space: (Character) -> Bool = { $0 == " " || $0 == "\t" }
      while let first = runs.first {
        let text = String(first.text.drop(while: space))
        guard text.isEmpty else {
          runs[0].text = text
          break
        }
        runs.removeFirst()
      }
      while let last = runs.last {
        let text = String(last.text.reversed().drop(while: space).reversed())
        guard text.isEmpty else {
          runs[runs.count - 1].text = text
          break
        }
        runs.removeLast()
      }
      return runs
    }

    /// The tags between `{` and `}`: each starts with a backslash; parentheses may hold backslashes (`\t(\i1)`).
    mutating func overrideBlock(_ block: ArraySlice<Unicode.Scalar>) {
      var tag = String.UnicodeScalarView()
      var depth = 0
      for c in block {
        if c == "(" { depth += 1 }
        if c == ")" { depth = max(0, depth - 1) }
        if c == "\\" && depth == 0 {
          apply(String(tag))
          tag = String.UnicodeScalarView()
        } else {
          tag.append(c)
        }
      }
      apply(String(tag))
    }

    /// One tag without its backslash ("i1", "an8", "pos(10,20)"); unknown ones do nothing.
    mutating func apply(_ tag: String) {
      let tag = tag.trimmingSpaces
      guard let name = tag.first else { return }
      if tag.hasPrefix("an"), let n = Int(tag.dropFirst(2)) {
        placement = (7...9).contains(n) ? .top : (4...6).contains(n) ? .middle : .bottom
        return
      }
      if tag == "c" || tag == "1c" || tag.hasPrefix("c&") || tag.hasPrefix("1c&") {
        let value = tag.drop { $0 != "&" }
        let color = ASSStyles.color(value)
        // A colour given and readable, or white (nil) where it is white or too dark; one that does not parse: as was.
        setStyle { $0.color = value.isEmpty ? $0.current.color : color.map { ASSStyles.readable($0) } ?? $0.color }
        return
      }
      if tag.hasPrefix("r"), tag.count > 1 {
        let style = styles.style(named: String(tag.dropFirst()), otherwise: base)
        setStyle { $0.take(style) }
        return
      }
      let argument = tag.dropFirst()
      guard argument.isEmpty || argument.allSatisfy(\.isASCIIDigit) || name == "r" else { return }
      let value = Int(argument) ?? 0
      switch name {
      case "a": placement = (5...7).contains(value) ? .top : (9...11).contains(value) ? .middle : .bottom
      case "b": setStyle { $0.bold = value == 1 || value >= 600 }
      case "i": setStyle { $0.italic = value == 1 }
      case "u": setStyle { $0.underline = value == 1 }
      case "r":
        setStyle { $0.take($0.base) }
      case "p":
        flush()
        drawing = value > 0
      default: return
      }
    }

    mutating func setStyle(_ change: (inout Parser) -> Void) {
      flush()
      change(&self)
    }
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
  fileprivate var trimmingSpaces: String {
    String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
  }
}

/// The styles of an ASS script (its `[V4+ Styles]` or `[V4 Styles]` section, which FFmpeg gives as the decoder's
/// subtitle header, for SubRip and the other text formats too): by name, what a cue's text starts with.
/// Thread-safety: a value type; safe to pass between threads.
public struct ASSStyles: Sendable, Equatable {
  /// What text in a style starts as. `color` nil: the default (white).
  public struct Style: Sendable, Equatable {
    var bold = false
    var italic = false
    var underline = false
    var color: UInt32?
  }
  var byName: [String: Style] = [:]

  public init() {}

  /// The fields of a Style line where the section has no Format line, as libass takes them: ASS's (`[V4+ Styles]`)
  /// and SSA's (`[V4 Styles]`).
  static let ssaFormat = [
    "name", "fontname", "fontsize", "primarycolour", "secondarycolour", "tertiarycolour", "backcolour", "bold",
    "italic", "borderstyle", "outline", "shadow", "alignment", "marginl", "marginr", "marginv", "alphalevel",
    "encoding",
  ]
  static let standardFormat = [
    "name", "fontname", "fontsize", "primarycolour", "secondarycolour", "outlinecolour", "backcolour", "bold",
    "italic", "underline", "strikeout", "scalex", "scaley", "spacing", "angle", "borderstyle", "outline", "shadow",
    "alignment", "marginl", "marginr", "marginv", "encoding",
  ]

  /// Reads the Style lines of `header`, by its Format line's order of fields (ASS's where it has none).
  public init(header: String) {
    var format = Self.standardFormat
    var inStyles = false
    for raw in header.split(whereSeparator: \.isNewline) {
      let line = String(raw).trimmingSpaces
      if line.hasPrefix("[") {
        inStyles = line.lowercased().hasSuffix("styles]")
        format = line.lowercased() == "[v4 styles]" ? Self.ssaFormat : Self.standardFormat
        continue
      }
      guard inStyles, let colon = line.firstIndex(of: ":") else { continue }
      let key = line[..<colon].lowercased()
      let values = line[line.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        .map { String($0).trimmingSpaces }
      if key == "format" {
        format = values.map { $0.lowercased() }
      } else if key == "style" {
        var fields: [String: String] = [:]
        for (name, value) in zip(format, values) { fields[name] = value }
        guard let written = fields["name"] else { continue }
        let name = written.hasPrefix("*") ? String(written.dropFirst()) : written
        // -1 is true in ASS (SSA's too); 0 false.
        let on = { (field: String) in fields[field].flatMap { Int($0) }.map { $0 != 0 } ?? false }
        let color = fields["primarycolour"].flatMap { Self.color($0) }.flatMap(Self.readable)
        byName[name] = Style(bold: on("bold"), italic: on("italic"), underline: on("underline"), color: color)
      }
    }
  }

  /// The style named `name` (as written, a leading `*` ignored, as libass does); else `otherwise`, or the script's
  /// Default (in any case), or the plain one.
  func style(named name: String?, otherwise: Style? = nil) -> Style {
    let bare = name.map { $0.hasPrefix("*") ? String($0.dropFirst()) : $0 }
    if let bare, let style = byName[bare] { return style }
    if let otherwise { return otherwise }
    return byName["Default"] ?? byName.first { $0.key.lowercased() == "default" }?.value ?? Style()
  }

  /// `color` as the text is shown: white (nil) for white, and for colours too dark to read over the black outline
  /// every cue has (a black sign made to show by its white outline, which is not drawn here): no channel past a
  /// quarter.
  static func readable(_ color: UInt32) -> UInt32? {
    let brightest = max(color >> 16 & 0xFF, color >> 8 & 0xFF, color & 0xFF)
    return color == 0xFF_FFFF || brightest < 0x40 ? nil : color
  }

  /// An ASS colour ("&H00BBGGRR&", "&HBBGGRR", SSA's decimal "16777215") as 0xRRGGBB; its alpha is ignored.
  static func color<S: StringProtocol>(_ text: S) -> UInt32? {
    var digits = Substring(String(text).trimmingSpaces)
    if digits.hasPrefix("&") { digits = digits.dropFirst() }
    while digits.hasSuffix("&") { digits = digits.dropLast() }
    let value: UInt32?
    if digits.hasPrefix("H") || digits.hasPrefix("h") {
      value = UInt32(digits.dropFirst().prefix(8), radix: 16)
    } else {
      value = UInt32(digits)
    }
    guard let bgr = value else { return nil }
    return (bgr & 0xFF) << 16 | (bgr & 0xFF00) | (bgr >> 16) & 0xFF
  }
}
