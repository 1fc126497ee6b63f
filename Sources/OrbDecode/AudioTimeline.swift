/// Places decoded audio on the media timeline: each piece at its own timestamp, or right after the piece before
/// it; what lies before a seek target trimmed, so sound starts exactly where the picture does; and holes (packets
/// that did not decode) found, so they are heard as silence of their length and the clock never leaps ahead.
/// Thread-safety: a value type, owned by the audio decode thread.
struct AudioTimeline {
  /// Frames a second.
  let sampleRate: Int
  private(set) var target = 0.0
  /// Where the next piece starts if it carries no timestamp (nil: nothing placed since the seek).
  private(set) var nextTime: Double?

  /// A piece that starts later than the sound before it ended by more than this leaves a hole.
  static let gapTolerance = 0.02
  /// Holes up to this long are filled; a longer jump is a timestamp discontinuity (a damaged index, a spliced
  /// stream), and filling it would hold the picture that long.
  static let longestGap = 10.0

  init(sampleRate: Int) { self.sampleRate = sampleRate }

  /// A seek to `target` seconds.
  mutating func restart(at target: Double) {
    self.target = target
    nextTime = nil
  }

  struct Placement: Equatable {
    /// Silence to play first: from `start`, `frames` long (a hole before this piece).
    var silence: (start: Double, frames: Int)?
    /// Frames to drop from the start of the piece (they lie before the target).
    var drop: Int
    /// Media time of the first frame kept.
    var time: Double

    static func == (a: Placement, b: Placement) -> Bool {
      a.silence?.start == b.silence?.start && a.silence?.frames == b.silence?.frames && a.drop == b.drop
        && a.time == b.time
    }
  }

  /// Where a decoded piece of `frames` frames, stamped `stamped` seconds (nil: no stamp), goes; nil when all of it
  /// lies before the target.
  mutating func place(frames: Int, stamped: Double?) -> Placement? {
    let rate = Double(sampleRate)
    var time = stamped ?? nextTime ?? target
    let expected = nextTime ?? target
    var silence: (Double, Int)?
    if time > expected + Self.gapTolerance && time < expected + Self.longestGap {
      let start = max(expected, target)
      let count = Int(((time - start) * rate).rounded())
      if count > 0 { silence = (start, count) }
    }
    let end = time + Double(frames) / rate
    if end <= target { return nil }
    var drop = 0
    if time < target {
      drop = min(frames, Int(((target - time) * rate).rounded()))
      time += Double(drop) / rate
    }
    nextTime = time + Double(frames - drop) / rate
    return Placement(silence: silence, drop: drop, time: time)
  }
}
