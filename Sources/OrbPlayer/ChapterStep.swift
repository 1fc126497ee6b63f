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
  /// `picture`: the length of the picture shown at `position`. A chapter that starts within it has been reached: a
  /// seek to a start between two pictures shows the one before it, and its time was taken for the chapter before
  /// (paused, Page Down went back to that chapter's picture again and again, at 23.976 fps).
  public static func target(
    _ chapters: [ChapterInfo], from position: Double, forward: Bool, picture: Double = 0
  ) -> Int? {
    let reach = max(slack, picture)
    if forward { return chapters.firstIndex { $0.start > position + reach } }
    guard let current = chapters.lastIndex(where: { $0.start <= position + reach }) else { return nil }
    return position - chapters[current].start > threshold || current == 0 ? current : current - 1
  }

  /// The index of the chapter `position` lies in: the last to start at or before it; nil before the first.
  public static func playing(_ chapters: [ChapterInfo], at position: Double) -> Int? {
    chapters.lastIndex { $0.start <= position + slack }
  }

  /// "Chapter 2/3: Middle" (without a title, "Chapter 2/3"), as the screen and the slider's tooltip name it.
  public static func name(_ chapters: [ChapterInfo], _ index: Int) -> String {
    "Chapter \(index + 1)/\(chapters.count)" + (chapters[index].title.map { ": \($0)" } ?? "")
  }
}
