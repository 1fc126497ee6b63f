import Foundation
import OrbDecode

/// Where a person left off in their own local files: a file played for more than a minute and left before its last
/// minutes is remembered (the position, the audio and subtitle tracks), keyed by its path and size, in
/// `$XDG_STATE_HOME/orb-player/resume.json` (else `~/.local/state/…`); playing it to the end forgets it. Hosts give
/// their own resume point (`--resume-ms`), which always wins. Several windows may be open at once: each change is
/// made to what the file holds then, under a lock on `FILE.lock`, so that one window's places never erase another's.
/// Thread-safety: Unsafe; one owner (the window, on the main thread) reads and writes its file.
public struct ResumeMemory {
  /// What is remembered of one file.
  /// Thread-safety: a value type.
  public struct Entry: Codable, Equatable, Sendable {
    /// Media seconds.
    public var position: Double
    /// 1-based audio track, subtitle track (0: none), when known.
    public var audioTrack: Int?
    public var subtitleTrack: Int?

    public init(position: Double, audioTrack: Int? = nil, subtitleTrack: Int? = nil) {
      self.position = position
      self.audioTrack = audioTrack
      self.subtitleTrack = subtitleTrack
    }
  }

  /// Played less than this (seconds), nothing is remembered.
  public static let leastPlayed = 60.0
  /// Left with less than this to go (seconds), the file counts as watched and is forgotten.
  public static let finishedWithin = 180.0
  /// The most files remembered (the oldest go first).
  static let capacity = 500

  public let file: String
  private var entries: [String: Entry]
  private var order: [String]

  private struct Stored: Codable {
    var entries: [String: Entry]
    var order: [String]
  }

  /// The memory kept in `file` (default: the XDG state folder's), empty when there is none or it cannot be read.
  public init(file: String = ResumeMemory.defaultFile) {
    self.file = file
    let stored = Self.read(file)
    entries = stored?.entries ?? [:]
    order = stored?.order ?? []
  }

  /// What `file` holds; a place that no file can have (not finite, negative, past 10^9 s: a damaged or hand-edited
  /// file) is left out (one of 1e300 made the player die on opening that file, every time).
  private static func read(_ file: String) -> Stored? {
    guard
      var stored = (try? Data(contentsOf: URL(fileURLWithPath: file))).flatMap({
        try? JSONDecoder().decode(Stored.self, from: $0)
      })
    else { return nil }
    stored.entries = stored.entries.filter { $0.value.position.isFinite && (0...1e9).contains($0.value.position) }
    stored.order = stored.order.filter { stored.entries[$0] != nil }
    return stored
  }

  public static var defaultFile: String {
    let environment = ProcessInfo.processInfo.environment
    let base =
      environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
    return "\(base)/orb-player/resume.json"
  }

  /// The key of a local file: its absolute path and size (a file replaced by another cut is another file); nil for
  /// a URL or a file that is not there.
  public static func key(for source: String) -> String? {
    guard let bytes = MediaSource.pathBytes(source) else { return nil }
    var info = stat()
    // A pipe (standard input, a named pipe) is not a file to come back to.
    guard MediaSource.filePath(source) != "-", stat(bytes, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      return nil
    }
    // A name that is not UTF-8 stays the file:// URL that carries its bytes (`MediaSource.pathBytes`).
    let path = MediaSource.filePath(source)
    let absolute = path.hasPrefix("file://") ? path : URL(fileURLWithPath: path).standardizedFileURL.path
    return "\(absolute)|\(info.st_size)"
  }

  /// Where `source` was left, as the file says now (another window may have played it since this one opened).
  public func entry(for source: String) -> Entry? {
    guard let key = Self.key(for: source) else { return nil }
    return (Self.read(file)?.entries ?? entries)[key]
  }

  /// Playback of `source` stopped at `entry.position` of `duration`: remembered when it played long enough and is
  /// not near its end, forgotten near its end, left as it was when it hardly played. Written at once.
  /// - Returns: why it could not be written (a folder that is read-only, full, or a file), in words; nil when it was,
  ///   or nothing needed writing.
  @discardableResult
  public mutating func left(_ source: String, at entry: Entry, duration: Double?) -> String? {
    guard let key = Self.key(for: source) else { return nil }
    let finished = duration.map { entry.position > $0 - Self.finishedWithin } ?? false
    // Hardly played (opened and closed again, the offer not taken): what was remembered stays.
    if entry.position < Self.leastPlayed && !finished { return nil }
    let url = URL(fileURLWithPath: file)
    try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let lock = open(file + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    // Waited for a second at most (this is the window's thread): a window stopped while it held the lock (SIGSTOP)
    // must not freeze this one, which then writes without it.
    for _ in 0..<100 where lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0 { usleep(10_000) }
    defer { if lock >= 0 { close(lock) } }  // (closing lets go of the lock)
    // What other windows wrote since this one read the file stays.
    if let stored = Self.read(file) {
      entries = stored.entries
      order = stored.order
    }
    order.removeAll { $0 == key }
    if finished {
      entries[key] = nil
    } else {
      entries[key] = entry
      order.append(key)
      while order.count > Self.capacity { entries[order.removeFirst()] = nil }
    }
    guard let data = try? JSONEncoder().encode(Stored(entries: entries, order: order)) else { return nil }
    return writeWhole(data, to: file).map { "\(file): \($0)" }
  }
}
