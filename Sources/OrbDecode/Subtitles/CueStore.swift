import Synchronization

/// The cues of the subtitle track being shown, and which of them are on screen at a given time.
///
/// Cues come from a `SubtitleFile` (all at once) or packet by packet from the demux thread (`apply`); the same cue
/// read twice (the demuxer re-reads packets after a seek) is kept once. An open-ended cue (a bitmap cue whose end the
/// stream does not say) ends where the next cue of its track starts, or where the track clears the screen.
/// `delay` shifts every cue (positive: later). `generation` changes whenever `active(at:)` could answer otherwise
/// for the same time, so a view can poll it each frame and rebuild its text only then.
/// Thread-safety: Safe; all of its state is one value behind a `Mutex`, taken by no other lock's holder (a leaf).
public final class CueStore: Sendable {
  private struct State {
    /// Each track's cues by start time (ties in arrival order).
    var cues: [SubtitleCue] = []
    /// The track of each cue in `cues`.
    var tracks: [Int] = []
    /// The longest finite duration among `cues`: how far before a time a cue shown then can start.
    var longest: Double = 0
    /// Indices into `cues` of the open-ended ones.
    var open: [Int] = []
    var delay: Double = 0
    var generation: UInt64 = 0

    /// Ends `track`'s open-ended cues that start before `time` at `time`.
    mutating func closeOpen(track: Int, at time: Double) -> Bool {
      var changed = false
      open.removeAll { i in
        guard tracks[i] == track, cues[i].start < time else { return false }
        cues[i].end = time
        longest = max(longest, time - cues[i].start)
        changed = true
        return true
      }
      return changed
    }

    /// Ends every cue of `track` still shown at `time` (open-ended or not) that started before it, at `time`.
    mutating func clear(track: Int, at time: Double) -> Bool {
      var changed = closeOpen(track: track, at: time)
      var i = firstIndex(startingAfter: time) - 1
      while i >= 0 && cues[i].start >= time - longest {
        if tracks[i] == track && cues[i].start < time && cues[i].end > time {
          cues[i].end = time
          changed = true
        }
        i -= 1
      }
      return changed
    }

    /// The first index whose cue starts after `time` (`cues.count` when none does).
    func firstIndex(startingAfter time: Double) -> Int {
      var low = 0
      var high = cues.count
      while low < high {
        let mid = (low + high) / 2
        if cues[mid].start <= time { low = mid + 1 } else { high = mid }
      }
      return low
    }

    mutating func insert(_ cue: SubtitleCue, track: Int) -> Bool {
      // After its equals, so ties keep arrival order.
      let low = firstIndex(startingAfter: cue.start)
      var i = low - 1
      while i >= 0 && abs(cues[i].start - cue.start) < 0.0005 {
        if tracks[i] == track && cues[i].lines == cue.lines && cues[i].bitmaps == cue.bitmaps
          && cues[i].assEvent == cue.assEvent
        {
          return false
        }
        i -= 1
      }
      cues.insert(cue, at: low)
      tracks.insert(track, at: low)
      open = open.map { $0 >= low ? $0 + 1 : $0 }
      if cue.isOpenEnded { open.append(low) } else { longest = max(longest, cue.end - cue.start) }
      return true
    }
  }

  private let state = Mutex(State())

  public init() {}

  /// Changes whenever the cues on screen at some time may have changed: cues added or closed, cleared, a new delay.
  public var generation: UInt64 { state.withLock { $0.generation } }

  /// Seconds added to every cue's times when looking them up (positive shows subtitles later).
  public var delay: Double {
    get { state.withLock { $0.delay } }
    set {
      state.withLock { s in
        guard s.delay != newValue else { return }
        s.delay = newValue
        s.generation &+= 1
      }
    }
  }

  /// Adds `cues` of `track`; each one ends the track's open-ended cues that started before it.
  public func add(_ cues: [SubtitleCue], track: Int = 0) {
    state.withLock { s in
      var changed = false
      for cue in cues {
        changed = s.closeOpen(track: track, at: cue.start) || changed
        changed = s.insert(cue, track: track) || changed
      }
      if changed { s.generation &+= 1 }
    }
  }

  /// What a decoded packet says: where it clears the screen, then its cues.
  public func apply(_ update: SubtitleUpdate, track: Int = 0) {
    if let time = update.clearsAt { clearScreen(track: track, at: time) }
    add(update.cues, track: track)
  }

  /// Ends every cue of `track` still shown at `time` (media seconds) that started before it, at `time`: a bitmap
  /// stream's packet replaces what its track showed.
  public func clearScreen(track: Int = 0, at time: Double) {
    state.withLock { s in
      if s.clear(track: track, at: time) { s.generation &+= 1 }
    }
  }

  /// Ends `track`'s open-ended cues that started before `time` (media seconds) at `time`.
  public func close(track: Int = 0, at time: Double) {
    state.withLock { s in
      if s.closeOpen(track: track, at: time) { s.generation &+= 1 }
    }
  }

  /// Forgets every cue (a track switch); the delay stays.
  public func clear() {
    state.withLock { s in
      let delay = s.delay
      let generation = s.generation
      s = State()
      s.delay = delay
      s.generation = generation &+ 1
    }
  }

  /// The cues on screen at media time `time` (the delay applied), overlapping ones together, in start order.
  public func active(at time: Double) -> [SubtitleCue] {
    state.withLock { s in
      let t = time - s.delay
      let low = s.firstIndex(startingAfter: t)
      // Cues at low and after start later than t. Before it, a finite cue shown at t starts within `longest`.
      var shown: [Int] = []
      var i = low - 1
      while i >= 0 && s.cues[i].start >= t - s.longest {
        if s.cues[i].isActive(at: t) { shown.append(i) }
        i -= 1
      }
      for j in s.open where j < low && s.cues[j].start < t - s.longest { shown.append(j) }
      return shown.sorted().map { j in
        var cue = s.cues[j]
        cue.start += s.delay
        cue.end += s.delay
        return cue
      }
    }
  }

  /// How many cues it holds.
  public var count: Int { state.withLock { $0.cues.count } }

  /// Every cue it holds, by start time, without the delay.
  public var allCues: [SubtitleCue] { state.withLock { $0.cues } }
}
