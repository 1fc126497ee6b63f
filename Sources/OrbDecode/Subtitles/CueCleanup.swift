/// The checks a whole track's cues pass before they are shown: sorted by start, and each one dropped or shortened
/// when its times cannot be meant (each change a warning).
/// - An end before the start, or a start or end that is not a number: dropped.
/// - No length at all: dropped (it would never be seen).
/// - A start before 0 with an end after it: starts at 0.
/// - Longer than an hour (`longest`): a typing error (hours for minutes); it ends at the next cue's start, or after
///   ten seconds (`shortened`) if that is sooner.
/// Thread-safety: stateless; safe from any thread.
enum CueCleanup {
  static let longest: Double = 3600
  static let shortened: Double = 10

  static func clean(_ cues: [SubtitleCue], warnings: inout [String]) -> [SubtitleCue] {
    let sorted = cues.enumerated().sorted { a, b in
      a.element.start != b.element.start ? a.element.start < b.element.start : a.offset < b.offset
    }.map(\.element)
    var kept: [SubtitleCue] = []
    for (i, original) in sorted.enumerated() {
      var cue = original
      let what = "the cue at \(time(cue.start))" + (cue.plainText.isEmpty ? "" : " (\"\(excerpt(cue.plainText))\")")
      guard !cue.start.isNaN, !cue.end.isNaN, cue.start.isFinite else {
        warnings.append("\(what) has no valid time; dropped")
        continue
      }
      if cue.end < cue.start {
        warnings.append("\(what) ends before it starts (\(time(cue.end))); dropped")
        continue
      }
      if cue.end == cue.start {
        warnings.append("\(what) lasts no time; dropped")
        continue
      }
      if cue.start < 0 {
        guard cue.end > 0 else {
          warnings.append("\(what) ends before the video starts; dropped")
          continue
        }
        warnings.append("\(what) starts before the video; it starts at 0")
        cue.start = 0
      }
      if cue.end - cue.start > longest {
        let next = sorted[(i + 1)...].first { $0.start > cue.start }?.start ?? .infinity
        cue.end = min(cue.start + shortened, next)
        warnings.append(
          "\(what) lasts \(time(original.end - original.start)); shortened to \(time(cue.end - cue.start))")
      }
      kept.append(cue)
    }
    return kept
  }

  /// "1:02:03.450" or "12.5 s".
  static func time(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "\(seconds)" }
    if abs(seconds) < 60 { return "\((seconds * 1000).rounded() / 1000) s" }
    let ms = Int(abs(seconds).wholeMilliseconds)
    let text =
      "\(ms / 3_600_000):" + pad((ms / 60000) % 60) + ":" + pad((ms / 1000) % 60) + "." + pad(ms % 1000, 3)
    return seconds < 0 ? "-" + text : text
  }

  private static func pad(_ value: Int, _ width: Int = 2) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }

  private static func excerpt(_ text: String) -> String {
    let flat = text.split(separator: "\n").joined(separator: " ")
    return flat.count > 40 ? String(flat.prefix(40)) + "…" : flat
  }
}
