/// What one subtitle packet changes on screen: new cues, and for bitmap streams (DVB, PGS) where a packet without
/// pictures clears the screen, the time from which the track's open-ended cues end.
/// Thread-safety: a value type; safe to pass between threads.
public struct SubtitleUpdate: Sendable, Equatable {
  public var cues: [SubtitleCue]
  /// Media seconds at which the track's earlier open-ended cues stop showing; nil when the packet clears nothing.
  public var clearsAt: Double?

  public init(cues: [SubtitleCue] = [], clearsAt: Double? = nil) {
    self.cues = cues
    self.clearsAt = clearsAt
  }
}
