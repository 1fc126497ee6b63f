import OrbDecode
import Synchronization

/// The ring of targets the render thread draws ahead into: the slots, what each is doing and holds, the size they
/// were made at and the size the display wants. Making targets and drawing is the render thread's; this is the
/// bookkeeping.
/// Thread-safety: a value type, kept in the owning `Player`'s locked state.
struct SlotRing {
  /// How many targets the ring has: one shown and one the display has yet to let go of, then two drawn ahead where
  /// GTK holds a GL texture over the target itself (zero-copy: it lets go of a texture when its renderer is done),
  /// one where the display copies the picture (cairo, or a memory texture), which hands a replaced picture back by
  /// the next refresh. A target less in a cairo window is 3.7 MB less at 1280x720 (peak 142-143 -> 136-137 MB for
  /// 1080p H.264, 174 -> 170 MB for HDR10 1080p) and dropped no more pictures in the runs that measured it (1080p30
  /// and 1080p60 H.264, 4K HDR10, each also beside a busy loop).
  static func size(for presentation: Player.Presentation) -> Int { presentation == .zeroCopy ? 4 : 3 }

  /// A decoded picture larger than this is let go once it is drawn (`VideoFrame.releasePicture`): at 4K and 10 bits
  /// a picture is 25 MB, and each one waiting in the ring or on screen kept its own (HDR10 2160p24, peak RSS 349-351
  /// -> 325-328 MB). A resize draws again only the pictures that still have theirs; the ones drawn ahead without are
  /// skipped, and a paused one is decoded again. 1080p pictures (3-6 MB) are kept.
  static let keptPictureBytes = 16 << 20

  enum Use { case free, drawing, ready, shown }

  private struct Entry {
    let slot: VideoSlot
    var use = Use.free
    var frame: VideoFrame?
  }

  private var entries: [Entry] = []
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

  /// A drawn slot and the decoded frame drawn in it.
  struct Drawn {
    let slot: VideoSlot
    let frame: VideoFrame
  }

  /// Drawn frames waiting for their time, earliest first.
  var ready: [Drawn] {
    entries.compactMap { e in e.use == .ready ? e.frame.map { Drawn(slot: e.slot, frame: $0) } : nil }
      .sorted { $0.frame.time < $1.frame.time }
  }

  var hasReady: Bool { entries.contains { $0.use == .ready } }

  var hasFree: Bool { entries.contains { $0.use == .free } }

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
  mutating func takeFree() -> VideoSlot? {
    guard let i = entries.firstIndex(where: { $0.use == .free }) else { return nil }
    entries[i].use = .drawing
    entries[i].frame = nil
    return entries[i].slot
  }

  /// `slot` (of this ring) now holds `frame`, drawn, waiting for its time.
  mutating func drawn(_ slot: VideoSlot, frame: VideoFrame) {
    guard let i = index(of: slot), entries[i].use == .drawing else { return }
    entries[i].use = .ready
    entries[i].frame = frame
  }

  /// `slot` was handed to the display. Its decoded frame is let go: the player keeps the one on screen (to draw it
  /// again at a new size), and a picture the display has not let go of yet is no longer on screen. Each decoded
  /// frame held keeps a buffer of the decoder's pool in use (3 MB at 1080p, 25 MB for 4K at 10 bits).
  mutating func shown(_ slot: VideoSlot) {
    set(slot, .shown)
    if let i = index(of: slot) { entries[i].frame = nil }
  }

  /// Lets go of the free slots before a new ring is made: their targets go now instead of after the new ones exist.
  /// Those drawn ahead stay until the new ring is in place, so the display has them to show meanwhile (drawing a
  /// ring again takes a few frames' time).
  mutating func releaseFree() {
    entries.removeAll { $0.use == .free }
  }

  /// What `slot` is doing; nil for a slot of an older ring.
  func use(of slot: VideoSlot) -> Use? { index(of: slot).map { entries[$0].use } }

  /// Frees what was drawn ahead (a seek).
  mutating func freeReady() {
    for i in entries.indices where entries[i].use == .ready {
      entries[i].use = .free
      entries[i].frame = nil
    }
  }

  mutating func free(_ slot: VideoSlot) { set(slot, .free) }

  /// What to draw again at a new size, in a ring of `size`: the frame on screen, then those waiting, in time order,
  /// of those whose picture was kept (`keptPictureBytes`). Those waiting come first when the ring cannot hold them
  /// all (the display let go of the picture on screen early): a frame lost there would be a jump in the picture,
  /// while the one on screen stays there, scaled, until the next.
  func framesToRedraw(shown: VideoFrame?, size: Int) -> [VideoFrame] {
    let waiting = ready.map(\.frame).filter(\.hasPicture)
    guard let shown, shown.hasPicture, waiting.count < size else { return Array(waiting.prefix(size)) }
    return [shown] + waiting
  }

  /// Puts targets made at `width`x`height` in place of the old ones; the first `drawn.count` already hold the
  /// frames given, ready.
  mutating func install(_ made: [VideoSlot], drawn: [VideoFrame], width: Int, height: Int) {
    entries = made.enumerated().map { i, slot in
      i < drawn.count ? Entry(slot: slot, use: .ready, frame: drawn[i]) : Entry(slot: slot)
    }
    self.width = width
    self.height = height
  }

  private func index(of slot: VideoSlot) -> Int? { entries.firstIndex { $0.slot === slot } }

  private mutating func set(_ slot: VideoSlot, _ use: Use) {
    guard let i = index(of: slot) else { return }
    entries[i].use = use
    if use == .free { entries[i].frame = nil }
  }

  private static let lastID = Atomic<Int>(0)

  /// A slot id unique in the process: a display keys what it imported from a slot's memory by it.
  static func nextID() -> Int { lastID.wrappingAdd(1, ordering: .relaxed).newValue }
}
