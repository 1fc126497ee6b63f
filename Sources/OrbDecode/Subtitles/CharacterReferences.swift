/// HTML's character references in subtitle text whose format is HTML-like (SubRip, SAMI): `&amp;`, `&lt;`, `&gt;`,
/// `&quot;`, `&apos;`, `&nbsp;`, `&lrm;`, `&rlm;`, and numeric ones (`&#233;`, `&#xE9;`), become their characters, as
/// VLC and browsers show them. FFmpeg's SubRip and SAMI decoders turn the tags into ASS and leave the references as
/// written, so a caption made from a web page showed "Tom &amp; Jerry". As in HTML, `&AMP;`, `&LT;`, `&GT;` and
/// `&QUOT;` are the same, and numbers 128-159 name Windows-1252's characters (`&#146;` is ’). A bare `&`, an
/// unknown name, and a number that is no character to show (0, a control character, a surrogate, past U+10FFFF)
/// stay as written.
/// Thread-safety: stateless; safe from any thread.
enum CharacterReferences {
  static let named: [Substring: Character] = [
    "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "lrm": "\u{200E}",
    "rlm": "\u{200F}", "AMP": "&", "LT": "<", "GT": ">", "QUOT": "\"",
  ]
  /// Windows-1252's characters at 128-159, which HTML gives numbers there (0: none).
  static let windows1252: [UInt32] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E,
    0x0178,
  ]
  /// The longest reference read (`&#x10FFFF;` and the names above fit).
  static let longest = 10

  static func decoded(_ text: String) -> String {
    guard text.contains("&") else { return text }
    var out = ""
    var rest = text[...]
    while let amp = rest.firstIndex(of: "&") {
      out += rest[..<amp]
      let after = rest[rest.index(after: amp)...]
      if let semicolon = after.prefix(longest).firstIndex(of: ";"),
        let character = character(for: after[..<semicolon])
      {
        out.append(character)
        rest = after[after.index(after: semicolon)...]
      } else {
        out.append("&")
        rest = after
      }
    }
    return out + rest
  }

  /// The character a reference's body (between `&` and `;`) names; nil for none.
  private static func character(for body: Substring) -> Character? {
    guard body.first == "#" else { return named[body] }
    let digits = body.dropFirst()
    let hex = digits.first == "x" || digits.first == "X"
    let number = hex ? digits.dropFirst() : digits
    guard !number.isEmpty, number.allSatisfy({ hex ? $0.isHexDigit : $0.isASCII && $0.isNumber }),
      var value = UInt32(number, radix: hex ? 16 : 10)
    else { return nil }
    if (128...159).contains(value) { value = windows1252[Int(value - 128)] }
    guard value >= 0x20, value != 0x7F, let scalar = Unicode.Scalar(value) else { return nil }
    return Character(scalar)
  }
}
