/// The cues of one subtitle file (or one subtitle stream of a container), read whole.
/// Thread-safety: a value type; safe to pass between threads.
public struct SubtitleTrack: Sendable {
  public var path: String
  /// "SRT", "ASS", "SSA", "WebVTT", "MicroDVD", "VobSub" …; for a stream of a container its codec ("SRT",
  /// "ASS", "mov_text", "DVD", "DVB", "PGS").
  public var format: String
  /// The language: the stream's tag, else a known code in the file name ("movie.en.srt"); nil when neither says.
  public var language: String?
  /// By start time. Every cue has an end (open-ended cues are closed by the next one; the last by the end of the
  /// file, or ten seconds).
  public var cues: [SubtitleCue]
  /// Cues dropped or changed, a character set guessed, a read cut short: each a sentence for the log.
  public var warnings: [String]
  /// Whether its cues are pictures.
  public var isBitmap: Bool
  /// The character set the text was read as, for a text sidecar; nil for a container's stream and bitmaps.
  public var charset: SubtitleCharset?

  /// The cues shown at media time `time`, in start order.
  public func cues(at time: Double) -> [SubtitleCue] { cues.filter { $0.isActive(at: time) } }
}
