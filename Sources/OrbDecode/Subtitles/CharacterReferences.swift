/// HTML's character references in subtitle text whose format is HTML-like (SubRip, SAMI): `&amp;`, `&lt;`, `&gt;`,
/// `&quot;`, `&apos;`, `&nbsp;`, `&lrm;`, `&rlm;`, and numeric ones (`&#233;`, `&#xE9;`), become their characters, as
/// VLC and browsers show them. FFmpeg's SubRip and SAMI decoders turn the tags into ASS and leave the references as
/// written, so a caption made from a web page showed "Tom &amp; Jerry". A bare `&`, an unknown name, and a number
/// that is no character (0, a surrogate, past U+10FFFF) stay as written.
/// Thread-safety: stateless; safe from any thread.
enum CharacterReferences {
  static let named: [Substring: Character] = [
    "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "lrm": "\u{200E}",
    "rlm": "\u{200F}",
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
    guard !number.isEmpty, let value = UInt32(number, radix: hex ? 16 : 10), value != 0,
      let scalar = Unicode.Scalar(value)
    else { return nil }
    return Character(scalar)
  }
}
