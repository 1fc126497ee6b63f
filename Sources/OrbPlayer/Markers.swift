import OrbDecode

/// A window of the media the host marked (`--intro START-END`, `--credits START[-END]`, milliseconds as the media
/// server sends them), which the viewer may skip.
/// Thread-safety: a value type.
public struct Marker: Sendable, Equatable {
  public enum Kind: String, Sendable {
    case intro, credits
  }

  public var kind: Kind
  /// Seconds of media time.
  public var start: Double
  /// Seconds; nil for credits that run to the end.
  public var end: Double?

  public init(kind: Kind, start: Double, end: Double?) {
    self.kind = kind
    self.start = start
    self.end = end
  }

  /// Reads "START-END" (or "START" where `endOptional`), in milliseconds.
  /// - Returns: the marker, or a message for the user naming the option.
  public static func parse(_ text: String, kind: Kind, endOptional: Bool) -> Result<Marker, MarkerError> {
    let option = "--\(kind.rawValue)"
    let parts = text.split(separator: "-", omittingEmptySubsequences: false).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    let shape = endOptional ? "START[-END]" : "START-END"
    guard parts.count == 2 || (endOptional && parts.count == 1),
      let start = Int64(parts[0]), start >= 0,
      parts.count == 1 || Int64(parts[1]) != nil
    else { return .failure(MarkerError(message: "\(option) takes \(shape) in milliseconds, not '\(text)'")) }
    let end = parts.count == 2 ? Int64(parts[1]).map { Double($0) / 1000 } : nil
    return .success(Marker(kind: kind, start: Double(start) / 1000, end: end))
  }
}

/// A marker option that cannot be read.
public struct MarkerError: Error, CustomStringConvertible, Sendable {
  public var message: String
  public var description: String { message }
}

/// Which marker window the play head is in, as it plays and seeks: what shows a "Skip Intro" or "Skip Credits"
/// button, and where skipping goes.
/// Thread-safety: a value type, kept by the window on the main thread.
public struct MarkerTimeline: Sendable {
  /// The markers kept after checking them against each other and the duration.
  public let markers: [Marker]
  private let duration: Double?
  /// The marker whose window holds the play head, if any.
  public private(set) var current: Marker?

  /// What the viewer's skip does.
  public enum Skip: Equatable, Sendable {
    /// Seek to this time.
    case seek(Double)
    /// Credits that run to the end: playback ends (the host goes on to the next episode).
    case end
  }

  /// Keeps the markers that make sense: END after START, inside the duration (when known), not overlapping each
  /// other. Each one left out is a warning (`warn`), in words for the log.
  public init(_ candidates: [Marker], duration: Double?, warn: (String) -> Void) {
    var kept: [Marker] = []
    for marker in candidates {
      let name = "--\(marker.kind.rawValue)"
      if let end = marker.end, end <= marker.start {
        warn(
          end == marker.start
            ? "\(name) ignored: it ends where it starts (\(Self.ms(end)) ms)"
            : "\(name) ignored: it ends (\(Self.ms(end)) ms) before it starts (\(Self.ms(marker.start)) ms)")
        continue
      }
      if let duration, marker.start >= duration {
        warn("\(name) ignored: it starts at \(Self.ms(marker.start)) ms, after the end (\(Self.ms(duration)) ms)")
        continue
      }
      let end = marker.end ?? duration ?? .infinity
      if let other = kept.first(where: { marker.start < ($0.end ?? duration ?? .infinity) && $0.start < end }) {
        warn("\(name) ignored: it overlaps --\(other.kind.rawValue)")
        continue
      }
      var clamped = marker
      if let duration, let e = marker.end, e > duration { clamped.end = duration }
      kept.append(clamped)
    }
    markers = kept
    self.duration = duration
  }

  private static func ms(_ seconds: Double) -> Int64 { seconds.wholeMilliseconds }

  /// Where `marker`'s window ends: its END, else the end of the media.
  public func end(of marker: Marker) -> Double { marker.end ?? duration ?? .infinity }

  /// The play head is at `position`: returns the marker left and the one entered, when that changed.
  public mutating func update(position: Double) -> (left: Marker?, entered: Marker?) {
    let now = markers.first { position >= $0.start && position < end(of: $0) }
    guard now != current else { return (nil, nil) }
    defer { current = now }
    return (current, now)
  }

  /// What skipping `marker` does: to its END; credits without one, or a window ending within a second of the
  /// media's end, end playback. (An intro that ran to the end was skipped to the last picture, back inside the
  /// window, and its button came back.)
  public func skip(_ marker: Marker) -> Skip {
    if marker.kind == .credits && marker.end == nil { return .end }
    let e = end(of: marker)
    return duration.map({ e < $0 - 1 }) ?? true ? .seek(e) : .end
  }
}
