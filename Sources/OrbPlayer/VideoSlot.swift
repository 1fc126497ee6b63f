import OrbDecode
import OrbRender

/// One picture of the ring the render thread draws ahead into, and the main thread shows from.
/// A slot is free, being drawn, drawn (ready, waiting for its time), or shown (until the display lets go of it).
/// Thread-safety: `state` and `frame` are guarded by the owning `Player`'s lock; `target` is drawn only while
/// the slot is free to the render thread, and read only while it is ready or shown.
public final class VideoSlot: @unchecked Sendable {
  enum State { case free, drawing, ready, shown }

  /// Unique in the process: a display can key what it imported from a slot's memory by it.
  public let id: Int
  public let target: RenderTarget
  var state = State.free
  /// The frame drawn into the slot (kept so a resize can draw it again).
  public internal(set) var frame: VideoFrame?
  /// The time of the frame drawn, seconds of media time.
  public var time: Double { frame?.time ?? 0 }

  init(id: Int, target: RenderTarget) {
    self.id = id
    self.target = target
  }
}
