import OrbDecode
import Synchronization

/// The ring of targets the render thread draws ahead into: the slots, the size they were made at and the size the
/// display wants. Making targets and drawing is the render thread's; this is the bookkeeping.
/// Thread-safety: a value type, kept under the owning `Player`'s lock, like the slots' states.
struct SlotRing {
  /// One shown, one waiting to be let go by the display, two drawn ahead.
  static let size = 4

  private(set) var slots: [VideoSlot] = []
  private(set) var width = 0
  private(set) var height = 0
  /// The display's size in pixels: targets are drawn at it, so scaling happens once, in the shader.
  private(set) var wantedWidth: Int
  private(set) var wantedHeight: Int

  init(width: Int, height: Int) {
    wantedWidth = max(1, width)
    wantedHeight = max(1, height)
  }

  /// Whether the targets must be made anew (a new size, or another presentation).
  var needsRebuild: Bool { width != wantedWidth || height != wantedHeight }

  /// Drawn frames waiting for their time, earliest first.
  var ready: [VideoSlot] { slots.filter { $0.state == .ready && $0.frame != nil }.sorted { $0.time < $1.time } }

  var hasReady: Bool { slots.contains { $0.state == .ready } }

  /// Returns whether the size changed.
  mutating func want(width: Int, height: Int) -> Bool {
    guard width > 0, height > 0, width != wantedWidth || height != wantedHeight else { return false }
    wantedWidth = width
    wantedHeight = height
    return true
  }

  /// Forces a rebuild at the same size (another presentation path).
  mutating func invalidate() { width = 0 }

  /// A free slot, now marked as being drawn; nil when all are busy.
  func takeFree() -> VideoSlot? {
    guard let slot = slots.first(where: { $0.state == .free }) else { return nil }
    slot.state = .drawing
    slot.frame = nil
    return slot
  }

  /// Frees what was drawn ahead (a seek).
  func freeReady() {
    for slot in slots where slot.state == .ready { free(slot) }
  }

  func free(_ slot: VideoSlot) {
    slot.state = .free
    slot.frame = nil
  }

  /// What to draw again at a new size: the frame on screen, then those waiting.
  func framesToRedraw(shown: VideoFrame?) -> [VideoFrame] {
    ([shown] + slots.filter { $0.state == .ready }.map(\.frame)).compactMap { $0 }
  }

  /// Puts targets made at `width`x`height` in place of the old ones.
  mutating func install(_ made: [VideoSlot], width: Int, height: Int) {
    slots = made
    self.width = width
    self.height = height
  }

  private static let lastID = Atomic<Int>(0)

  /// A slot id unique in the process: a display keys what it imported from a slot's memory by it.
  static func nextID() -> Int { lastID.wrappingAdd(1, ordering: .relaxed).newValue }
}
