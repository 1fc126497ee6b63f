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

  /// Where to seek to show a chapter starting at `start`: its first picture, the first to start at or after it (as
  /// mpv shows). An exact seek shows the picture that covers its target, and at 23.976 fps a chapter at 4 s starts
  /// within the picture of 3.962 s, the last of the chapter before: paused there, the chapter began with the one
  /// before's picture. From the picture shown (`time` and `duration`), the pictures are taken to go on at its rate:
  /// a start within a millisecond of a picture's (chapters in milliseconds round them) goes a millisecond into that
  /// picture, and one more than `slack` into a picture a millisecond into the next, if that is within `mostLater`
  /// (the seek's sound starts there: a slide show's next picture, a second on, would cut the chapter's first words).
  public static func landing(_ start: Double, shown: (time: Double, duration: Double)?) -> Double {
    guard let shown, shown.duration > 0.002, shown.time.isFinite, start.isFinite else { return start }
    let pictures = (start - shown.time) / shown.duration
    let nearest = shown.time + pictures.rounded() * shown.duration
    if abs(start - nearest) <= 0.001 { return nearest + 0.001 }
    let covering = shown.time + pictures.rounded(.down) * shown.duration
    let next = covering + shown.duration + 0.001
    return start - covering > slack && next - start <= mostLater ? next : start
  }

  /// The most a chapter's seek goes past its start to reach its first picture: a picture at 24 fps (42 ms).
  static let mostLater = 0.05

  /// The index of the chapter `position` lies in: the last to start at or before it; nil before the first.
  public static func playing(_ chapters: [ChapterInfo], at position: Double) -> Int? {
    chapters.lastIndex { $0.start <= position + slack }
  }

  /// "Chapter 2/3: Middle" (without a title, "Chapter 2/3"), as the screen and the slider's tooltip name it.
  public static func name(_ chapters: [ChapterInfo], _ index: Int) -> String {
    "Chapter \(index + 1)/\(chapters.count)" + (chapters[index].title.map { ": \($0)" } ?? "")
  }
}
