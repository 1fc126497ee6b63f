import CUchardet

/// The character set of a text subtitle file, found from its bytes.
///
/// A byte-order mark decides; then text that is valid UTF-8 is UTF-8; anything else is asked of uchardet. uchardet
/// 0.0.7 names short Western text ISO-8859-1 as often as WINDOWS-1252, and Central European text in ISO-8859-2
/// WINDOWS-1250; both are corrected here (see `refined`). Text uchardet cannot name is read as WINDOWS-1252,
/// with a warning.
/// Thread-safety: a value type; safe to pass between threads.
public struct SubtitleCharset: Sendable, Equatable {
  public enum Encoding: Sendable, Equatable {
    case utf8
    /// UTF-16 with a byte-order mark: FFmpeg's text demuxers convert it to UTF-8 themselves.
    case utf16LittleEndian
    case utf16BigEndian
    /// A legacy character set, by the name iconv knows it by ("WINDOWS-1252", "ISO-8859-2").
    case legacy(String)
  }

  public var encoding: Encoding
  /// Why the guess may be wrong, for the track's warnings; nil when it is certain or uchardet was sure.
  public var warning: String?

  /// What to pass to `SubtitleDecoder` as `characterSet`: nil where FFmpeg's packets are UTF-8 already.
  public var decoderCharacterSet: String? {
    if case .legacy(let name) = encoding { return name }
    return nil
  }

  init(encoding: Encoding, warning: String? = nil) {
    self.encoding = encoding
    self.warning = warning
  }

  /// The character set of `bytes`, a whole subtitle file (or its first few hundred kilobytes).
  public init(of bytes: [UInt8]) {
    warning = nil
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
      encoding = .utf8
    } else if bytes.starts(with: [0xFF, 0xFE]) {
      encoding = .utf16LittleEndian
    } else if bytes.starts(with: [0xFE, 0xFF]) {
      encoding = .utf16BigEndian
    } else if String(validating: bytes, as: UTF8.self) != nil {
      encoding = .utf8
    } else if let detected = Self.detect(bytes) {
      encoding = .legacy(Self.refined(detected, bytes))
    } else {
      encoding = .legacy("WINDOWS-1252")
      warning = "the character set could not be recognised; read as Windows-1252"
    }
  }

  /// uchardet's name for `bytes`, or nil when it has none (or only says ASCII, which valid UTF-8 covered).
  static func detect(_ bytes: [UInt8]) -> String? {
    guard let detector = uchardet_new() else { return nil }
    defer { uchardet_delete(detector) }
    let accepted = bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { uchardet_handle_data(detector, $0.baseAddress, $0.count) }
    }
    guard accepted == 0 else { return nil }
    uchardet_data_end(detector)
    guard let name = uchardet_get_charset(detector) else { return nil }
    let charset = String(cString: name)
    return charset.isEmpty || charset == "ASCII" ? nil : charset
  }

  /// `detected` where uchardet's name would give wrong letters:
  /// - ISO-8859-1 becomes WINDOWS-1252, its superset for printable text (as browsers read it): 0x80–0x9F are
  ///   control codes in one and quotes, dashes and € in the other.
  /// - WINDOWS-1250 becomes ISO-8859-2 when no byte is in 0x80–0x9F: text in 1250 keeps š, ś, ť, ž, ź there, and
  ///   ISO-8859-2 has only control codes there; for the rest of the letters the two differ (ą, ś, š, ž, ź), so
  ///   the wrong one garbles Polish and Czech.
  static func refined(_ detected: String, _ bytes: [UInt8]) -> String {
    let name = detected.uppercased()
    let usesC1Range = bytes.contains { (0x80...0x9F).contains($0) }
    if name == "ISO-8859-1" { return "WINDOWS-1252" }
    if name == "WINDOWS-1250" && !usesC1Range { return "ISO-8859-2" }
    return name
  }
}
