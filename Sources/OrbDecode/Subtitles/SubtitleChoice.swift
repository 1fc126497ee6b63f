import Foundation

/// Which subtitle track to show at the start (`--sid`).
/// Thread-safety: a value type.
public enum SubtitleRequest: Sendable, Equatable {
  /// A track marked default or forced (a sidecar beside the video counts as default), else none.
  case automatic
  /// None (`--sid 0` or `--sid no`).
  case off
  /// Track `n`, 1-based in `SubtitleChoice.list`'s order.
  case track(Int)
}

/// One subtitle track a viewer can choose: a stream of the media, or a file (a sidecar found beside a local video,
/// or one given with `--sub-file`). Tracks are numbered from 1: the media's streams in their order, then the files.
/// Thread-safety: a value type.
public struct SubtitleChoice: Sendable, Equatable {
  public enum Origin: Sendable, Equatable {
    /// Stream `index` of the media.
    case embedded(index: Int)
    case file(path: String)
  }

  public var origin: Origin
  public var language: String?
  public var title: String?
  /// "SRT", "ASS", "WebVTT", "PGS", "DVD", "VobSub" …
  public var format: String
  public var isDefault: Bool
  public var isForced: Bool

  /// "English (SRT)", "French, forced (PGS)", "Commentary (ASS)" (a title without a language), "SRT".
  public var displayName: String {
    var words: [String] = []
    if let language { words.append(SubtitleLanguage.displayName(language)) }
    if let title, !title.isEmpty, title.lowercased() != language.map(SubtitleLanguage.displayName)?.lowercased() {
      words.append(language == nil ? title : "“\(title)”")
    }
    if isForced { words.append("forced") }
    return words.isEmpty ? format : "\(words.joined(separator: ", ")) (\(format))"
  }

  /// The tracks of a media: its subtitle streams, the sidecars beside it (a local file only), then `files`.
  public static func list(info: MediaInfo, files: [String]) -> [SubtitleChoice] {
    var tracks = info.subtitles.map { s in
      SubtitleChoice(
        origin: .embedded(index: s.index), language: s.language, title: s.title,
        format: SubtitleFile.codecNames[s.codec] ?? s.codec.uppercased(), isDefault: s.isDefault, isForced: s.isForced)
    }
    // A path, or a file:// URL (a name that is not UTF-8 stays one: `LocalName`).
    let sidecars = MediaSource.isLocal(info.source) ? SidecarFinder.find(forVideo: info.source) : []
    for sidecar in sidecars {
      // Put beside the video by a person, for this video: shown unless another track is marked forced.
      tracks.append(
        SubtitleChoice(
          origin: .file(path: sidecar.path), language: sidecar.language, title: nil, format: sidecar.format,
          isDefault: true, isForced: sidecar.isForced))
    }
    let known = Set(sidecars.map(\.path))
    for path in files where !known.contains(path) { tracks.append(file(path)) }
    return tracks
  }

  /// A subtitle file given by name (`--sub-file`, one dropped on the window): its language from the name.
  public static func file(_ path: String) -> SubtitleChoice {
    let ext = (path as NSString).pathExtension.lowercased()
    return SubtitleChoice(
      origin: .file(path: path), language: SubtitleFile.language(inName: path), title: nil,
      format: SidecarFinder.formats[ext] ?? (ext.isEmpty ? "file" : ext.uppercased()), isDefault: true,
      isForced: false)
  }

  /// Whether `path` names a subtitle file by its extension (what a drop on a playing video adds, not plays).
  public static func isSubtitleFile(_ path: String) -> Bool {
    let ext = (path as NSString).pathExtension.lowercased()
    return SidecarFinder.formats[ext] != nil || ["smi", "sami"].contains(ext)
  }

  /// The track to start with (1-based), or nil for none. `--sub-file` files are chosen over everything (the last
  /// given), then a forced track, then a default one; an asked-for track that is not there is none.
  public static func initial(_ tracks: [SubtitleChoice], request: SubtitleRequest, files: [String]) -> Int? {
    switch request {
    case .off: return nil
    case .track(let n): return n >= 1 && n <= tracks.count ? n : nil
    case .automatic:
      if let last = files.last, let i = tracks.lastIndex(where: { $0.origin == .file(path: last) }) { return i + 1 }
      if let i = tracks.firstIndex(where: \.isForced) { return i + 1 }
      return tracks.firstIndex(where: \.isDefault).map { $0 + 1 }
    }
  }
}
