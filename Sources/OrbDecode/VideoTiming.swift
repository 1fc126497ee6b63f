/// Gives each decoded picture its time and duration: its own timestamp where the stream has one, else the time
/// after the picture before it (raw elementary streams, as ffplay and mpv time them); its container's duration
/// where that differs from the nominal rate by more than rounding (variable-frame-rate recordings), else
/// `1 / frame rate`, exact for constant rates that a millisecond time base (Matroska) rounds.
/// Thread-safety: a value type, owned by the video decode thread.
struct VideoTiming {
  /// Seconds a picture lasts at the stream's nominal rate.
  let nominalDuration: Double
  /// Seconds of one tick of the stream's time base.
  let tick: Double
  /// Whether a picture's own duration may stand (not for a still picture, which the container gives a 25th of a
  /// second).
  let ownDurations: Bool
  private var nextTime: Double?

  init(nominalDuration: Double, tick: Double, ownDurations: Bool = true) {
    self.nominalDuration = nominalDuration
    self.tick = tick
    self.ownDurations = ownDurations
  }

  /// A seek: the next picture's time comes from its stamp (or starts again from 0 for a stream without stamps).
  mutating func restart() { nextTime = nil }

  /// - Parameters:
  ///   - stamped: the picture's timestamp in seconds, if it has one.
  ///   - ownDuration: the container's duration for it in seconds (0 or less: none).
  mutating func place(stamped: Double?, ownDuration: Double) -> (time: Double, duration: Double) {
    let time = stamped ?? nextTime ?? 0
    let ownIsReal =
      ownDurations && ownDuration > 0 && ownDuration < 10
      && abs(ownDuration - nominalDuration) > max(1.5 * tick, 0.002)
    let duration = ownIsReal ? ownDuration : nominalDuration
    nextTime = time + duration
    return (time, duration)
  }
}

/// After a seek, holds back the pictures before the target and lets out the one that covers it: the last picture
/// that starts at or before the target, or the first one after it when none does. Which one is last is known when the
/// next one starts past the target (or the stream ends), never from a picture's own duration: that is settled only
/// when the next picture is decoded, and until then it may be a nominal rate that a variable-rate recording does not
/// keep (a frame step in Matroska landed on the picture it stepped from).
/// Thread-safety: a value type, owned by the video decode thread.
struct SeekHold<Picture> {
  private(set) var target = 0.0
  private var held: (picture: Picture, time: Double)?
  /// Whether a picture has gone out since the seek (every later one goes at once).
  private(set) var emitted = false

  /// A seek to `target` seconds.
  mutating func restart(at target: Double) {
    self.target = target
    held = nil
    emitted = false
  }

  /// The pictures to let out now, in order, for a decoded picture starting at `time`. One that starts at the target
  /// covers it whatever comes next, so it goes at once (the first picture after opening, at 0).
  mutating func offer(_ picture: Picture, time: Double) -> [Picture] {
    if !emitted && time < target - 1e-6 {
      held = (picture, time)  // the one that covers the target, unless a later one also starts by then
      return []
    }
    var out: [Picture] = []
    if !emitted, let h = held, time > target + 1e-6, h.time <= target { out.append(h.picture) }
    held = nil
    emitted = true
    out.append(picture)
    return out
  }

  /// The end of the stream: a picture still held is the last one there is, so it is let out.
  mutating func finish() -> Picture? {
    defer { held = nil }
    return held?.picture
  }
}

/// Keeps each picture until the next one is decoded, so a picture lasts until the next one starts: the only duration
/// that is right for variable-frame-rate recordings (phones, screen captures), whose containers often carry none
/// (Matroska) or a nominal one. The container's or nominal duration is kept where the next start says nothing
/// useful: the last picture, a jump of 10 s or more (a discontinuity), or a next start that is not later; and where
/// the two differ by no more than the time base's rounding (a constant rate in Matroska's milliseconds).
/// Thread-safety: a value type, owned by the video decode thread.
struct DurationLookahead<Picture> {
  /// A picture with its time and the duration it is shown for.
  struct Placed {
    let picture: Picture
    let time: Double
    let duration: Double
  }

  /// Seconds of one tick of the stream's time base.
  let tick: Double
  private var held: Placed?

  init(tick: Double) { self.tick = tick }

  /// A seek: what is held belongs to before it.
  mutating func restart() { held = nil }

  /// Takes the next decoded picture; gives back the one before it, now that its duration is known (the video decode
  /// thread settles it on a picture already on its way: `VideoFrame.settle(duration:)`).
  mutating func offer(_ picture: Picture, time: Double, duration: Double) -> Placed? {
    defer { held = Placed(picture: picture, time: time, duration: duration) }
    guard let before = held else { return nil }
    let gap = time - before.time
    let rounding = abs(gap - before.duration) <= max(1.5 * tick, 0.002)
    let lasting = gap > 1e-6 && gap < 10 && !rounding ? gap : before.duration
    return Placed(picture: before.picture, time: before.time, duration: lasting)
  }

  /// The end of the stream: the picture still held, with its own duration.
  mutating func finish() -> Placed? {
    defer { held = nil }
    return held
  }
}
