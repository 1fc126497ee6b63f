import Foundation
import OrbDecode
import OrbPlayer
import Synchronization

/// What the host hears on `--events-fd`: states around pauses and waits for data, progress once a second, the
/// error or the end with the last position. Writes nothing without an events descriptor.
/// Thread-safety: main actor, compiler-checked (the writer it feeds has a thread of its own).
final class HostReport {
  private let events: EventWriter?
  /// The run's last word, shared with the thread that speaks for the main thread when it cannot (`SignalWatch`).
  let lastWord: LastWord
  /// Where playback begins (`--resume-ms`): the position to report before anything played.
  private let resumeMs: Int64
  /// The host was told playback waits for data.
  private(set) var buffering = false
  /// The viewer's choices as last sent (nil: not yet for this entry).
  private var lastSettings: ViewerSettings?
  /// The state last sent (nil: none yet for this entry): each change is said once. The end of a wait to try again
  /// is seen both by the periodic check (`buffering(false)`) and by the open it led to (`opened`), in either order.
  private var lastState: String?
  /// The progress last told, of which player and after how many seeks (`Player.seeksAsked`).
  private var lastProgress: (player: ObjectIdentifier, seeks: Int, ms: Int64)?

  init(eventsFd: Int32?, resumeMs: Int64) {
    events = eventsFd.map { EventWriter(fd: $0) }
    self.resumeMs = resumeMs
    lastWord = LastWord(events: events, resumeMs: resumeMs)
  }

  private func ms(_ seconds: Double) -> Int64 { seconds.wholeMilliseconds }

  /// The media opened at `position` (the resume point, or 0 when that is past the end): playing, or paused where it
  /// starts paused (`--paused`).
  func opened(paused: Bool, at position: Double) {
    buffering = false  // the wait to try again is over: this says so, and no second "playing" follows
    state(paused ? "paused" : "playing", at: position)
  }

  func paused(_ paused: Bool, at position: Double) {
    state(paused ? "paused" : buffering ? "buffering" : "playing", at: position)
  }

  /// Says `buffering` when a wait for data begins, and `playing` (or `paused`, `paused`: a pause during the wait)
  /// when it ends: a pause while buffering was told as `paused`, then `playing` at once.
  func buffering(_ now: Bool, paused: Bool = false, at position: Double) {
    guard now != buffering else { return }
    buffering = now
    state(now ? "buffering" : paused ? "paused" : "playing", at: position)
  }

  private func state(_ state: String, at position: Double) {
    guard state != lastState else { return }
    lastState = state
    events?.state(state, positionMs: ms(position))
  }

  /// The subtitle text shown changed: `{"event":"cue","text":…,"start_ms":…,"end_ms":…}`, with `"text":""` when
  /// it clears (and no times), so hosts and screen readers can follow.
  func cue(text: String, start: Double?, end: Double?) {
    var fields: [String: Any] = ["event": "cue", "text": text]
    if let start { fields["start_ms"] = ms(start) }
    if let end { fields["end_ms"] = end.isFinite ? ms(end) : NSNull() }
    events?.write(fields)
  }

  /// A skip button came up or went: `{"event":"marker","kind":…,"state":"shown"|"hidden","position_ms":…,
  /// "start_ms":…,"end_ms":…}` (`end_ms` null for credits that run to the end).
  func marker(_ marker: Marker, shown: Bool, end: Double, at position: Double) {
    events?.write([
      "event": "marker", "kind": marker.kind.rawValue, "state": shown ? "shown" : "hidden",
      "position_ms": ms(position), "start_ms": ms(marker.start), "end_ms": end.isFinite ? ms(end) : NSNull(),
    ])
  }

  /// The viewer skipped: `{"event":"skip","kind":…,"from_ms":…,"to_ms":…}`.
  func skip(_ kind: Marker.Kind, from: Double, to: Double) {
    events?.write([
      "event": "skip", "kind": kind.rawValue, "from_ms": ms(from), "to_ms": to.isFinite ? ms(to) : NSNull(),
    ])
  }

  /// An entry of the playlist starts: `{"event":"file","index":…,"count":…,"title":…}` (`index` from 0).
  func file(index: Int, count: Int, title: String) {
    events?.write(["event": "file", "index": index, "count": count, "title": title])
    lastSettings = nil
    lastState = nil
  }

  /// What the viewer chose, once for each entry and again whenever it changes, by key, button, slider or MPRIS:
  /// `{"event":"settings","volume":…,"muted":…,"speed":…,"audio_track":…|null,"subtitle_track":…|null,
  /// "fullscreen":…,"audio_delay_ms":…}` (tracks 1-based, as `--aid`/`--sid` take them), so the host can keep a viewer's language and
  /// volume for the next episode.
  func settings(_ now: ViewerSettings) {
    guard now != lastSettings else { return }
    lastSettings = now
    events?.write([
      "event": "settings", "volume": now.volumePercent, "muted": now.isMuted, "speed": now.speed,
      "audio_track": now.audioTrack ?? NSNull(), "subtitle_track": now.subtitleTrack ?? NSNull(),
      "fullscreen": now.isFullscreen, "audio_delay_ms": now.audioDelayMs,
    ])
  }

  /// A network source is tried again: `{"event":"retry","attempt":…,"of":…,"in_ms":…,"reason":…}`.
  func retry(attempt: Int, of: Int, delay: Double, reason: String) {
    events?.write(["event": "retry", "attempt": attempt, "of": of, "in_ms": ms(delay), "reason": reason])
  }

  /// Something was left out or changed, playback going on: `{"event":"warning","message":…}` (an HLS rendition
  /// that could not be loaded, no audio output, a damaged subtitle track).
  func warning(_ message: String) { events?.write(["event": "warning", "message": message]) }

  /// A screenshot was saved: `{"event":"screenshot","path":…}`.
  func screenshot(path: String) { events?.write(["event": "screenshot", "path": path]) }

  /// Where playback is: the host can count on from `at` at `speed`, which is 0 while the position does not move
  /// (paused, loading, buffering, or the sound server stalled). Without a seek the position never goes back: a
  /// stalled sound server let the clock run on over what it held, then took it back about 90 ms.
  func progress(_ player: Player) {
    let now = Date()
    let state = player.state
    var moving = state == .playing && !buffering && !player.isPaused
    let position = told(player)
    let (id, seeks) = (ObjectIdentifier(player), player.seeksAsked.count)
    if let last = lastProgress, last.player == id, last.seeks == seeks, position <= last.ms {
      moving = false  // not moved in the second since the last: the host must not count on
    }
    lastProgress = (id, seeks, position)
    lastWord.follow(player, toldMs: position, seeks: seeks)
    events?.progress(
      positionMs: position, durationMs: player.duration.map(ms),
      state: buffering ? "buffering" : state.rawValue, speed: moving ? player.speed : 0, at: now)
  }

  /// `player`'s position as the host hears it: never before the last progress told of it, without a seek since (a
  /// broken stream taken up again reads a few pictures back; the error or end after it went back with it).
  private func told(_ player: Player) -> Int64 {
    let position = ms(player.position)
    guard let last = lastProgress, last.player == ObjectIdentifier(player), last.seeks == player.seeksAsked.count
    else { return position }
    return max(position, last.ms)
  }

  /// The error, with the position once something played (a picture shown, or sound that moved the clock), so the
  /// host can resume there.
  /// `final`: the error ends the run (its last word: nothing follows it); else a playlist goes on to its next entry.
  func failed(_ error: MediaError, player: Player?, final: Bool) {
    let position = player.flatMap { $0.stats.presented > 0 || $0.position > 0 ? told($0) : nil }
    let say: () -> Void = { [events] in
      events?.error(kind: error.kind.rawValue, message: error.description, positionMs: position)
    }
    if final { lastWord.tell(say) } else { say() }
  }

  /// The end, with the position (the resume point when nothing played yet) and how smoothly it went.
  /// Played to its end (`eof`), the position is at most the length: a seek past the end of a sound file set the
  /// clock there (6004 ms of a 5000 ms file).
  func ended(reason: String, player: Player?) {
    var position = player.map(told) ?? resumeMs
    if reason == "eof", let length = player?.duration.map(ms), position > length { position = length }
    let stats = player?.stats ?? PlaybackStats()
    lastWord.tell { events?.ended(positionMs: position, reason: reason, stats: stats) }
  }

  /// Sends what is queued before the process exits.
  func flush() { events?.flush() }
}

/// The choices a viewer makes while watching that a host may keep. Thread-safety: a value.
struct ViewerSettings: Equatable {
  var volumePercent: Int
  var isMuted: Bool
  var speed: Double
  /// 1-based; nil when no sound plays.
  var audioTrack: Int?
  /// 1-based; nil when subtitles are off.
  var subtitleTrack: Int?
  var isFullscreen: Bool
  /// Milliseconds the sound is heard after its picture (Ctrl+plus/minus).
  var audioDelayMs: Int
}

/// Whether the run's last word (its `ended`, or the error that ends it) has gone to the host, and where playback was
/// as last seen, so that another thread can say it when the main thread cannot (`SignalWatch`): `ended` with reason
/// `terminated`, at the player's position, never before the progress last told of it without a seek since. Whoever
/// says the last word queues it while holding the state (`tell`), so that once another finds it said, it is in the
/// writer's queue.
/// Thread-safety: Sendable; its state is behind a `Mutex`; the writer and the player it calls are thread-safe.
nonisolated final class LastWord: Sendable {
  private struct State {
    var said = false
    var player: Player?
    /// The position last told of `player`, and after how many of its seeks (`Player.seeksAsked`).
    var told: (ms: Int64, seeks: Int)?
    var status: Int32 = 0
  }
  private let state = Mutex(State())
  private let events: EventWriter?
  private let resumeMs: Int64

  init(events: EventWriter?, resumeMs: Int64) {
    self.events = events
    self.resumeMs = resumeMs
  }

  /// The player now playing (from its start: nothing told of it yet), and the position last told of it.
  func follow(_ player: Player, toldMs: Int64? = nil, seeks: Int = 0) {
    state.withLock { s in
      s.player = player
      s.told = toldMs.map { ($0, seeks) }
    }
  }

  /// The exit status the main thread's close chose.
  var status: Int32 {
    get { state.withLock { $0.status } }
    set { state.withLock { $0.status = newValue } }
  }

  /// Runs `say` (which queues the last word) unless the last word went already; true when it ran.
  @discardableResult
  func tell(_ say: () -> Void) -> Bool {
    state.withLock { s in
      guard !s.said else { return false }
      s.said = true
      say()
      return true
    }
  }

  /// Says `ended` (`terminated`) with where playback was, unless the last word went already; true when this said it.
  /// The player is asked on a thread of its own, for at most `playerWait` seconds: this runs where the main thread
  /// does not answer, and a thread hung holding the player's lock (or its clock's, which asks PipeWire) would have
  /// held the watch too, and the process would never have exited. Without an answer, the position last told (else
  /// the start) is said, with no stats.
  func speak() -> Bool {
    // Read before the state is held: the player's lock is never taken inside it.
    let (said, player, told) = state.withLock { ($0.said, $0.player, $0.told) }
    if said { return false }
    let read =
      player.flatMap { player in
        answer(within: Self.playerWait, named: "orb-last-word") { () -> (ms: Int64, stats: PlaybackStats) in
          let now = player.position.wholeMilliseconds
          guard let told, told.seeks == player.seeksAsked.count else { return (now, player.stats) }
          return (max(now, told.ms), player.stats)
        }
      }
    let position = read?.ms ?? told?.ms ?? resumeMs
    return tell {
      events?.ended(positionMs: position, reason: "terminated", stats: read?.stats ?? PlaybackStats())
    }
  }

  /// Seconds `speak` waits for the player's answer.
  static let playerWait = 1.0

  /// Sends what the writer holds, waiting at most a second.
  func flush() { events?.flush(timeout: 1) }
}
