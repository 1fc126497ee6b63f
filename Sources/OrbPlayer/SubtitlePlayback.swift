import Foundation
import OrbDecode
import Synchronization

/// The subtitles of what is playing: the tracks there are, the one shown, and its cues. A stream of the media is
/// read by a `SubtitleReader` paced to the play head; a file is read whole on a thread of its own. The display asks
/// `active(at:)` at each refresh (cheap: a binary search) and rebuilds what it shows only when `generation` or the
/// answer changes. Nothing here can stop playback: a track that fails is one warning, and the video plays on.
/// Thread-safety: Safe; what changes is one value behind a `Mutex` (a leaf: it calls nothing while held), the cues
/// are in a `CueStore`.
public final class SubtitlePlayback: Sendable {
  /// The media's tracks, its sidecars, `--sub-file`s, then files added while it plays (`add`).
  public var tracks: [SubtitleChoice] { state.withLock { $0.tracks } }
  /// How many tracks there were at the start: those after are files added while it played.
  public let listedAtStart: Int
  private let store = CueStore()
  private let source: String
  private let credentials: Credentials
  private let position: @Sendable () -> Double
  /// The canvas of a bitmap file's cues when the file gives none: the video's size.
  private let videoSize: (width: Int, height: Int)
  private let warn: @Sendable (String) -> Void

  private struct State {
    var tracks: [SubtitleChoice] = []
    var current: Int?
    /// File tracks that could not be read (garbage, an encoding that cannot be told): passed over from then on.
    var failed: Set<Int> = []
    var reader: SubtitleReader?
    /// Bumped at each switch, so a file read for a track no longer chosen is dropped.
    var choice = 0
    /// `close` was called: nothing reads any more, whatever is asked.
    var closed = false
  }
  private let state = Mutex(State())

  /// - Parameters:
  ///   - files: `--sub-file` paths, added after the media's own tracks and its sidecars.
  ///   - position: the play head, media seconds.
  ///   - warn: hears each problem once (a file that cannot be read, cues dropped), for the log.
  public init(
    info: MediaInfo, credentials: Credentials, files: [String], request: SubtitleRequest, delay: Double,
    position: @escaping @Sendable () -> Double, warn: @escaping @Sendable (String) -> Void
  ) {
    // A file that is not there, is no file, is empty or cannot be read is no track: one warning, and the choice
    // falls to the media's own (it was chosen over the default track and showed nothing).
    let listed = SubtitleChoice.list(info: info, files: files)
    let tracks = listed.filter { track in
      guard case .file(let path) = track.origin, let problem = MediaError.checkLocalFile(path, what: "subtitle file")
      else { return true }
      warn("subtitles: \(path): \(problem.reason); left out")
      return false
    }
    state.withLock { $0.tracks = tracks }
    listedAtStart = tracks.count
    source = info.source
    self.credentials = credentials
    self.position = position
    videoSize = info.video.first.map { ($0.width, $0.height) } ?? (0, 0)
    self.warn = warn
    store.delay = delay
    var request = request
    if case .track(let n) = request, !(1...max(1, tracks.count)).contains(n) || tracks.isEmpty {
      warn("no subtitle track \(n) (it has \(tracks.count)); showing the default one, if any")
      request = .automatic
    }
    if let first = SubtitleChoice.initial(tracks, request: request, files: files) { select(first) }
  }

  /// Adds the subtitle file at `path` as a track (one dropped on the window), unless it is one already; its number
  /// (1-based), or nil when it cannot be read (said with `warn`).
  public func add(file path: String) -> Int? {
    if let problem = MediaError.checkLocalFile(path, what: "subtitle file") {
      warn("subtitles: \(path): \(problem.reason); left out")
      return nil
    }
    // A VobSub picture file is read through its index: the pair is one track, found by either name.
    let ext = (path as NSString).pathExtension.lowercased()
    let stem = (path as NSString).deletingPathExtension
    let same: (SubtitleChoice) -> Bool = { track in
      guard case .file(let known) = track.origin else { return false }
      let knownStem = (known as NSString).deletingPathExtension
      let pair =
        ["idx", "sub"].contains(ext) && ["idx", "sub"].contains((known as NSString).pathExtension.lowercased())
      return known == path || (pair && knownStem == stem)
    }
    return state.withLock { s in
      if let known = s.tracks.firstIndex(where: same) {
        s.failed.remove(known + 1)  // it may have been mended since
        return known + 1
      }
      s.tracks.append(SubtitleChoice.file(path))
      return s.tracks.count
    }
  }

  /// The track shown (1-based), or nil for none.
  public var current: Int? { state.withLock { $0.current } }

  /// The tracks (1-based) that could not be read: `cycle` passes them over.
  public var unreadable: Set<Int> { state.withLock { $0.failed } }

  /// Shows track `track` (1-based; nil or out of range: none).
  public func select(_ track: Int?) {
    let tracks = self.tracks
    let chosen = track.flatMap { $0 >= 1 && $0 <= tracks.count ? $0 : nil }
    let (old, choice, closed) = state.withLock { s -> (SubtitleReader?, Int, Bool) in
      defer {
        if !s.closed { s.current = chosen }
        s.reader = nil
        s.choice += 1
      }
      return (s.reader, s.choice + 1, s.closed)
    }
    old?.close()
    store.clear()
    guard let chosen, !closed else { return }
    switch tracks[chosen - 1].origin {
    case .embedded(let index):
      let reader = SubtitleReader(
        source: source, credentials: credentials, index: index, start: position(), store: store, track: chosen,
        position: position, warn: warn)
      let stale = state.withLock { s -> Bool in
        guard s.choice == choice else { return true }
        s.reader = reader
        return false
      }
      if stale { reader.close() }
    case .file(let path):
      let (store, warn) = (store, warn)
      let still: @Sendable () -> Bool = { [weak self] in self?.state.withLock { $0.choice == choice } ?? false }
      let video = videoSize
      startThread(named: "orb-subtitle-file") { [weak self] in
        do {
          let read = try SubtitleFile.read(path, videoWidth: video.width, videoHeight: video.height)
          for warning in read.warnings { warn("subtitles: \(path): \(warning)") }
          if still() { store.add(read.cues, track: chosen) }
        } catch let error as MediaError {
          // Said as a file the check before found wrong is said (`init`): by name and reason, left out.
          warn("subtitles: \(error.source): \(error.reason); left out")
          self?.readFailed(chosen, still: still())
        } catch {
          warn("subtitles: \(path): \(error); left out")
          self?.readFailed(chosen, still: still())
        }
      }
    }
  }

  /// File track `track` could not be read: it is passed over from now on, and while it is the one chosen, the
  /// media's own choice (forced, else default) is shown instead, or none.
  private func readFailed(_ track: Int, still current: Bool) {
    let failed = state.withLock { s -> Set<Int> in
      s.failed.insert(track)
      return s.failed
    }
    guard current else { return }
    // The start's own rule, with the tracks that failed no longer forced or default.
    var candidates = tracks
    for track in failed {
      candidates[track - 1].isForced = false
      candidates[track - 1].isDefault = false
    }
    select(SubtitleChoice.initial(candidates, request: .automatic, files: []))
  }

  /// The next track, after the last one none, after none the first (a file that could not be read is passed over);
  /// returns the track now shown.
  @discardableResult
  public func cycle() -> Int? {
    let (current, failed) = state.withLock { ($0.current, $0.failed) }
    var next = current.map { $0 + 1 } ?? 1
    while next <= tracks.count && failed.contains(next) { next += 1 }
    let chosen = next <= tracks.count ? next : nil
    select(chosen)
    return chosen
  }

  /// "Subtitles: 2/3 English (SRT)", or "Subtitles off" (with how many there are).
  public var description: String {
    guard let current else { return tracks.isEmpty ? "No subtitles" : "Subtitles off" }
    return "Subtitles: \(current)/\(tracks.count) \(tracks[current - 1].displayName)"
  }

  /// Playback moved to `seconds`: a stream is read again around there.
  public func seek(to seconds: Double) { state.withLock { $0.reader }?.seek(to: seconds) }

  /// The cues on screen at `time` (media seconds), in start order.
  public func active(at time: Double) -> [SubtitleCue] { store.active(at: time) }

  /// Changes whenever what `active(at:)` says for a time may have changed.
  public var generation: UInt64 { store.generation }

  /// Seconds subtitles are shown later than their times (negative: earlier).
  public var delay: Double {
    get { store.delay }
    set { store.delay = newValue }
  }

  /// Stops reading, for good.
  public func close() {
    state.withLock { s -> SubtitleReader? in
      s.closed = true
      defer { s.reader = nil }
      return s.reader
    }?.close()
  }
}
