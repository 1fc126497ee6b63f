import OrbDecode

/// Which chapter Page Down and Page Up go to, by mpv's rule: forward, the first that starts after the position; back,
/// the start of the chapter playing when more than `threshold` seconds into it (a viewer who missed its beginning),
/// else the one before.
/// Thread-safety: stateless.
public enum ChapterStep {
  /// Seconds into a chapter after which going back starts it again rather than going to the one before.
  public static let threshold = 5.0
  /// A seek lands on a chapter's start give or take a rounding: within this, the position is at that start.
  static let slack = 0.01

  /// The index in `chapters` (in order of their start) to go to from `position`, nil when there is none that way.
  public static func target(_ chapters: [ChapterInfo], from position: Double, forward: Bool) -> Int? {
    let starts = chapters.map(\.start)
    if forward { return starts.firstIndex { $0 > position + slack } }
    guard let current = starts.lastIndex(where: { $0 <= position + slack }) else { return nil }
    return position - starts[current] > threshold || current == 0 ? current : current - 1
  }
}
