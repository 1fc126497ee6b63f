import Foundation

/// A subtitle file beside a video: `movie.srt`, `movie.en.srt`, `movie.eng.forced.srt`, `movie.pt-BR.default.ass`.
/// Thread-safety: a value type; safe to pass between threads.
public struct Sidecar: Sendable, Equatable {
  public var path: String
  /// The dot-separated tags between the video's name and the extension, as written ("pt-BR", "forced").
  public var tags: [String]
  /// The first tag that is not a flag word, as written; nil when there is none.
  public var language: String?
  public var isForced: Bool
  public var isDefault: Bool
  /// From the extension: "SRT", "ASS", "SSA", "WebVTT", "VobSub" (.idx) or "SUB" (a .sub without an .idx:
  /// MicroDVD or SubViewer; `SubtitleFile` reads which).
  public var format: String

  /// "English (SRT)", "Portuguese (BR), forced (ASS)", "xx (SRT)" for a code not in the table, "SRT" untagged.
  public var displayName: String {
    var words: [String] = []
    if let language { words.append(SubtitleLanguage.displayName(language)) }
    if isForced { words.append("forced") }
    if isDefault { words.append("default") }
    return words.isEmpty ? format : "\(words.joined(separator: ", ")) (\(format))"
  }
}

/// Finds the subtitle files that go with a local video: in its folder, named after it.
/// Thread-safety: stateless; safe from any thread (it reads the folder when asked).
public enum SidecarFinder {
  /// Extensions (lowercased) and the format each names.
  static let formats: [String: String] = [
    "srt": "SRT", "ass": "ASS", "ssa": "SSA", "vtt": "WebVTT", "idx": "VobSub", "sub": "SUB",
  ]
  /// Tags that are flags rather than languages.
  static let flagWords: Set<String> = ["forced", "default", "sdh", "cc", "hi"]

  /// The sidecars of the video at `videoPath`: files whose name is the video's name without its extension, then
  /// optional dot-separated tags, then a subtitle extension (any case). A .sub with an .idx of the same name is
  /// left out (the .idx opens both). Untagged files come first, then the rest by file name.
  /// `source` is a path or a file:// URL; one whose name is not UTF-8 (`MediaSource.pathBytes`) is looked for beside
  /// byte for byte, and its sidecars' names that are not UTF-8 either come as file:// URLs, which `SubtitleFile`
  /// reads.
  public static func find(forVideo source: String) -> [Sidecar] {
    guard let bytes = MediaSource.pathBytes(source) else { return [] }
    let raw = bytes.dropLast().map { UInt8(bitPattern: $0) }
    let found: [Sidecar]
    if let videoPath = String(validating: raw, as: UTF8.self) {
      let video = URL(fileURLWithPath: videoPath)
      let folder = video.deletingLastPathComponent().path
      let base = video.deletingPathExtension().lastPathComponent
      guard !base.isEmpty, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
      found = names.compactMap { sidecar(named: $0, in: folder, base: base) }
    } else {
      found = byteNamed(besideVideo: raw)
    }
    let idxStems = Set(found.filter { $0.format == "VobSub" }.map { stem(of: $0.path) })
    return found.filter { !($0.format == "SUB" && idxStems.contains(stem(of: $0.path))) }
      .sorted { a, b in
        if a.tags.isEmpty != b.tags.isEmpty { return a.tags.isEmpty }
        return a.path < b.path
      }
  }

  /// The sidecar `name` describes, or nil when it is not one of the video named `base`.
  static func sidecar(named name: String, in folder: String, base: String) -> Sidecar? {
    guard name.hasPrefix(base + ".") else { return nil }
    return sidecar(after: String(name.dropFirst(base.count)), path: folder == "/" ? "/\(name)" : "\(folder)/\(name)")
  }

  /// The sidecar whose name goes on from the video's with `rest` (".srt", ".en.forced.ass"), found at `path`.
  private static func sidecar(after rest: String, path: String) -> Sidecar? {
    guard rest.hasPrefix("."), let dot = rest.lastIndex(of: ".") else { return nil }
    guard let format = formats[String(rest[rest.index(after: dot)...]).lowercased()] else { return nil }
    let tags = rest[..<dot].split(separator: ".", omittingEmptySubsequences: false).dropFirst().map(String.init)
    guard !tags.contains(where: \.isEmpty) else { return nil }  // "movie..srt"
    let lowered = tags.map { $0.lowercased() }
    return Sidecar(
      path: path, tags: tags, language: tags.first { !flagWords.contains($0.lowercased()) },
      isForced: lowered.contains("forced"), isDefault: lowered.contains("default"), format: format)
  }

  /// The sidecars of a video whose absolute path `video` is not UTF-8 (an old archive's Latin-1), read from its
  /// folder byte for byte.
  private static func byteNamed(besideVideo video: [UInt8]) -> [Sidecar] {
    guard let slash = video.lastIndex(of: UInt8(ascii: "/")) else { return [] }
    let folder = Array(video[..<slash])
    let name = video[(slash + 1)...]
    let base = Array(name.lastIndex(of: UInt8(ascii: ".")).map { name[..<$0] } ?? name)
    guard !base.isEmpty, let directory = opendir((folder.isEmpty ? [UInt8(ascii: "/")] : folder).map(CChar.init) + [0])
    else { return [] }
    defer { closedir(directory) }
    var found: [Sidecar] = []
    while let entry = readdir(directory) {
      let entryName = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
      guard entryName.count > base.count, entryName.starts(with: base) else { continue }
      let path = folder + [UInt8(ascii: "/")] + entryName
      let named = String(validating: path, as: UTF8.self) ?? MediaSource.fileURL(absolute: path)
      if let sidecar = sidecar(after: String(decoding: entryName[base.count...], as: UTF8.self), path: named) {
        found.append(sidecar)
      }
    }
    return found
  }

  /// The path without its extension (not NSString's: it would fold a file:// URL's "//").
  static func stem(of path: String) -> String { path.lastIndex(of: ".").map { String(path[..<$0]) } ?? path }
}
