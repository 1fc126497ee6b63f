import OrbDecode
import OrbRender

/// One target of the ring the render thread draws ahead into, and the main thread shows from. Whether it is free,
/// being drawn, ready or shown, and which frame it holds, is the ring's to know (`SlotRing`, under the player's
/// lock), not the slot's.
/// Thread-safety: Safe to pass around (immutable); `target` is drawn only while the ring has the slot marked as
/// being drawn, and read only while it is ready or shown.
public final class VideoSlot: Sendable {
  /// Unique in the process: a display can key what it imported from a slot's memory by it.
  public let id: Int
  public let target: RenderTarget

  init(id: Int, target: RenderTarget) {
    self.id = id
    self.target = target
  }
}

/// A slot handed to the display with the time of the frame drawn in it; the display gives it back with
/// `Player.release`. The decoded frame stays with the player: a display that holds a picture a little longer (GTK
/// lets go of a texture after it has drawn the next) keeps no decoder buffer in use.
/// Thread-safety: a value type of immutable references.
public struct ShownPicture: Sendable {
  public let slot: VideoSlot
  /// The frame's time, seconds of media time.
  public let time: Double
}
