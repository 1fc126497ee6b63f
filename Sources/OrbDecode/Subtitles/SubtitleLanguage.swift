/// Language codes as they appear in subtitle file names ("movie.en.srt", "movie.pt-BR.srt") and track tags, and
/// the names shown for them: the common ISO 639-1 and 639-2 (both B and T) codes; others are shown as given.
/// Thread-safety: stateless; safe from any thread.
public enum SubtitleLanguage {
  private static let names: [String: String] = {
    let table: [(codes: [String], name: String)] = [
      (["en", "eng"], "English"), (["fr", "fra", "fre"], "French"), (["de", "deu", "ger"], "German"),
      (["es", "spa"], "Spanish"), (["it", "ita"], "Italian"), (["pt", "por"], "Portuguese"),
      (["nl", "nld", "dut"], "Dutch"), (["sv", "swe"], "Swedish"), (["da", "dan"], "Danish"),
      (["no", "nor", "nb", "nob"], "Norwegian"), (["fi", "fin"], "Finnish"), (["pl", "pol"], "Polish"),
      (["cs", "ces", "cze"], "Czech"), (["hu", "hun"], "Hungarian"), (["ro", "ron", "rum"], "Romanian"),
      (["ru", "rus"], "Russian"), (["ja", "jpn"], "Japanese"), (["zh", "zho", "chi"], "Chinese"),
      (["ko", "kor"], "Korean"), (["ar", "ara"], "Arabic"), (["he", "heb"], "Hebrew"), (["tr", "tur"], "Turkish"),
      (["el", "ell", "gre"], "Greek"),
    ]
    var names: [String: String] = [:]
    for entry in table { for code in entry.codes { names[code] = entry.name } }
    return names
  }()

  /// The English name of `code` ("en", "ENG", "pt-BR" → "Portuguese (BR)"), or nil for a code not in the table.
  public static func name(_ code: String) -> String? {
    let parts = code.split(separator: "-", maxSplits: 1).map(String.init)
    guard let first = parts.first, let name = names[first.lowercased()] else { return nil }
    return parts.count == 2 ? "\(name) (\(parts[1]))" : name
  }

  /// `name(code)`, or the code itself when it is not in the table.
  public static func displayName(_ code: String) -> String { name(code) ?? code }

  /// Whether `tag` is a code in the table, alone or with a region ("en", "pt-BR", "zh-Hant").
  static func isKnown(_ tag: String) -> Bool { name(tag) != nil }
}
