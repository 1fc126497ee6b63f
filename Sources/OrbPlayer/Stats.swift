/// Playback counters for the stats overlay, `--benchmark` and events.
/// Thread-safety: a value type (the player hands out copies).
public struct PlaybackStats: Sendable, Encodable {
  /// Frames shown.
  public var presented = 0
  /// Frames decoded but never shown because they were late.
  public var dropped = 0
  /// Display refreshes that showed the previous frame again although a newer one was due.
  public var repeated = 0
  /// Presented frame time minus clock time at presentation, seconds (last value).
  public var avOffset = 0.0
  /// Packets that failed to decode and were skipped.
  public var corruptPackets = 0
  /// Audio cycles that found nothing to play (silence was written instead).
  public var audioUnderruns = 0
  /// Milliseconds from the process's start to the first picture on screen (nil before it).
  public var firstFrameMs: Int?
  /// The median of the seeks asked for (`Player.seek`): milliseconds from the request to its picture on screen.
  public var seekMsMedian: Int?
  /// How many seeks that median is of.
  public var seeks = 0

  public init() {}
}
