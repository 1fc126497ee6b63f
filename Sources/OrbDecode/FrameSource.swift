/// Where the player gets pictures: a decoded file or stream, or a built-in test pattern.
/// Thread-safety: implementations are Safe; `nextFrame` is called from one consumer thread.
public protocol FrameSource: AnyObject, Sendable {
  /// What the source holds, for `--probe`, the title and the stats overlay.
  var info: MediaInfo { get }
  /// Length in seconds, or nil for a live or endless source.
  var duration: Double? { get }
  /// The next frame in presentation order, waiting for it if needed; nil at the end or once closed.
  func nextFrame() -> VideoFrame?
  /// Restarts output at the frame that covers `seconds` (media time).
  func seek(to seconds: Double)
  /// Stops all work; `nextFrame` returns nil from now on.
  func close()
}
