/// The files and URLs a window plays in order (given on the command line, dropped on the window, or opened), which
/// one is playing, and the rule the family's players share for failures: an entry that cannot be played is skipped,
/// and three failures in a row stop.
/// Thread-safety: a value type, kept by the window on the main thread.
public struct Playlist: Sendable, Equatable {
  public private(set) var entries: [String]
  /// The entry playing (0-based), or nil before the first and when empty.
  public private(set) var index: Int?
  /// Entries that failed one after another, without one that played between them.
  public private(set) var failuresInARow = 0

  /// Failures in a row after which playback stops.
  public static let failureLimit = 3

  public init(_ entries: [String] = []) {
    self.entries = entries
    index = entries.isEmpty ? nil : 0
  }

  public var current: String? { index.map { entries[$0] } }
  public var count: Int { entries.count }
  public var canGoNext: Bool { index.map { $0 + 1 < entries.count } ?? false }
  public var canGoPrevious: Bool { index.map { $0 > 0 } ?? false }

  /// Moves to the next entry; false at the last one.
  public mutating func next() -> Bool {
    guard canGoNext, let i = index else { return false }
    index = i + 1
    return true
  }

  /// Moves to the previous entry; false at the first one.
  public mutating func previous() -> Bool {
    guard canGoPrevious, let i = index else { return false }
    index = i - 1
    return true
  }

  /// Plays `entries` from the first instead (a drop, an Open).
  public mutating func replace(with entries: [String]) {
    self = Playlist(entries)
  }

  /// The entry playing could not be played. Returns whether playback goes on with the next one (false: the last
  /// entry failed, or `failureLimit` failed in a row).
  public mutating func failed() -> Bool {
    failuresInARow += 1
    guard failuresInARow < Self.failureLimit else { return false }
    return next()
  }

  /// The entry playing showed something: the failure count starts again.
  public mutating func played() { failuresInARow = 0 }
}
