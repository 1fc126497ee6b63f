import COrbASS
import OrbDecode

/// Draws the cues of an ASS/SSA script as the script says, with libass: each at its place (`\an`, `\pos`, margins),
/// in its style's font, size, outline and shadow, moving (`\move`), fading (`\fad`), turned, blurred, karaoke and
/// drawings included, into one premultiplied BGRA picture of the part of the frame they cover.
///
/// Give it the cues on screen (`show`) whenever they change, and ask for the picture at every frame (`render`): it
/// answers `.unchanged` when libass drew the same as last time, so a cue that stands still costs one call a frame
/// and no copy. Sizes are in device pixels of the picture's area on screen.
/// Thread-safety: not `Sendable`; made and used by one thread (the window's).
public final class ASSRenderer {
  /// What the cues look like: at (`x`, `y`) of the frame, `width` by `height` pixels of premultiplied BGRA (cairo's order), rows of
  /// `width * 4` bytes, top row first.
  public struct Picture: Equatable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public var bgra: [UInt8]
    /// Asked for as masks (`render(…, masks: true)`): each of libass's pictures, in drawing order, and no `bgra`
    /// (`pixel` is then not to be asked).
    public var masks: [Mask] = []

    /// The premultiplied components of the pixel at (`column`, `row`) of the picture.
    public func pixel(_ column: Int, _ row: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
      let i = (row * width + column) * 4
      return (bgra[i + 2], bgra[i + 1], bgra[i], bgra[i + 3])
    }
  }

  /// One of libass's pictures: a coverage mask painted in one colour, at (`x`, `y`) of the frame, `width` by
  /// `height`, one byte a pixel, rows of `width` bytes.
  public struct Mask: Equatable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    /// The colour, and its opacity (255: opaque).
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var opacity: UInt8
    public var coverage: [UInt8]
  }

  /// The answer of `render`.
  public enum Frame: Equatable {
    /// The same as the last answer.
    case unchanged
    /// The cues' picture, or nil when nothing is to be seen.
    case picture(Picture?)
  }

  /// A cue to show: its event and its times on the clock `render` is asked at (seconds; `end` may be infinite).
  public struct Cue {
    public var event: ASSEvent
    public var start: Double
    public var end: Double

    public init(_ event: ASSEvent, start: Double, end: Double) {
      self.event = event
      self.start = start
      self.end = end
    }
  }

  private let library: OpaquePointer
  private let renderer: OpaquePointer
  /// The script's styles and the cues on screen; made again when the header changes (another track).
  private var track: UnsafeMutablePointer<ASS_Track>?
  /// The scripts whose [Fonts] sections were read (their headers' hashes).
  private var fontsRead: Set<Int> = []
  /// The bottom-aligned cues' smallest margin, a share of the height (`bottomMargin(_:)`).
  private var bottomMargin = 0.0
  private var header: String?
  /// Frame and storage size and font scale, as last set.
  private var settings: [Int] = []
  /// The next answer is a picture even if libass says nothing changed: the cues or the settings did.
  private var redraw = true
  /// The last answer was a picture (not nil, not `.unchanged`).
  private var showing = false

  /// - Parameter fonts: the fonts the media carries for its scripts, found before the machine's by the names in
  ///   them (their family names).
  /// nil when libass cannot start (no FreeType); the cues are then shown as plain text.
  public init?(fonts: [EmbeddedFont] = []) {
    guard let library = ass_library_init() else { return nil }
    orb_ass_set_messages(library, 1)  // errors only: its warnings are about fonts a script names and we lack
    guard let renderer = ass_renderer_init(library) else {
      ass_library_done(library)
      return nil
    }
    self.library = library
    self.renderer = renderer
    // A script's own [Fonts] section (fonts written into a sidecar .ass) is read too (`script`).
    for font in fonts {
      font.data.withUnsafeBytes { raw in
        ass_add_font(library, font.name, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count))
      }
    }
    // Fonts through fontconfig, as the rest of the desktop finds them, after those the media carries; a font the
    // script names and neither has falls back to the default sans-serif.
    ass_set_fonts(renderer, nil, "sans-serif", Int32(ASS_FONTPROVIDER_AUTODETECT.rawValue), nil, 1)
    // Its caches, bounded below libass's defaults (a 128 MB bitmap cache): glyphs at the default count, 32 MB of
    // pictures, which hold a scene's signs at 4K.
    ass_set_cache_limits(renderer, 0, 32)
  }

  deinit {
    if let track { ass_free_track(track) }
    ass_renderer_done(renderer)
    ass_library_done(library)
  }

  /// Makes `cues` the ones drawn (those of the first cue's script; a cue of another script is left out), at most
  /// `mostEvents` of them and `mostBytes` of their lines: libass draws on the window's thread, and a file with
  /// thousands of large events at once would hold it for seconds at every frame.
  public func show(_ cues: [Cue]) {
    redraw = true
    guard let first = cues.first else {
      if let track { ass_flush_events(track) }
      return
    }
    let track = script(first.event.header)
    ass_flush_events(track)
    var (count, bytes) = (0, 0)
    for cue in cues where cue.event.header == first.event.header {
      count += 1
      bytes += cue.event.line.utf8.count
      guard count <= Self.mostEvents, bytes <= Self.mostBytes else { break }
      let start = Self.milliseconds(cue.start)
      let length = cue.end.isFinite ? max(1, Self.milliseconds(cue.end) - start) : Int64(Int32.max)
      var line = Array(cue.event.line.utf8)
      line.withUnsafeMutableBytes { raw in
        ass_process_chunk(
          track, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count), start, length)
      }
    }
    bottomMargin = Self.bottomMargin(track.pointee)
  }

  /// The events given to libass (for tests).
  var events: Int { Int(track?.pointee.n_events ?? 0) }

  /// The most events, and bytes of their lines, drawn at once: far more than a typeset scene has (a karaoke line
  /// split letter by letter: a few hundred).
  static let mostEvents = 2000
  static let mostBytes = 4 << 20

  /// The smallest vertical margin of the bottom-aligned events of `track` (the event's own, else its style's), as a
  /// share of the script's height: dialogue that high already clears that much of the bottom.
  private static func bottomMargin(_ track: ASS_Track) -> Double {
    guard let events = track.events, let styles = track.styles, track.n_events > 0 else { return 0 }
    var least: Int32?
    for event in UnsafeBufferPointer(start: events, count: Int(track.n_events)) {
      guard (0..<track.n_styles).contains(event.Style) else { continue }
      let style = styles[Int(event.Style)]
      // libass keeps alignments as its flags: bottom is neither top (4) nor middle (8).
      guard style.Alignment & 12 == 0 else { continue }
      // Not one placed by its own \pos or \move, or moved up from the bottom by \an4-9 (\a5-7, 9-11 in SSA's
      // numbers): libass does not move those.
      if let text = event.Text,
        String(cString: text).contains(/\\(pos|move)\(|\\an[4-9]|\\a(?:[5-79]|1[01])(?![0-9])/)
      {
        continue
      }
      let margin = event.MarginV != 0 ? event.MarginV : style.MarginV
      least = min(least ?? margin, margin)
    }
    // The height libass takes when a script gives none (ass_lazy_track_init).
    let height =
      track.PlayResY > 0
      ? Double(track.PlayResY)
      : track.PlayResX == 1280 ? 1024 : track.PlayResX > 0 ? Double(track.PlayResX) * 3 / 4 : 288
    return least.map { max(0, Double($0) / height) } ?? 0
  }

  /// The track of the script with `header`, made when it is not the current one.
  private func script(_ header: String) -> UnsafeMutablePointer<ASS_Track> {
    if let track, header == self.header { return track }
    if let track { ass_free_track(track) }
    let made = ass_new_track(library)!
    // The events given are the ones on screen, already told apart by the store: a cue given again after a seek or
    // a delay change is to be drawn, not dropped as a repeat of its read order.
    ass_set_check_readorder(made, 0)
    // A [Fonts] section is added to the library once: libass keeps every font given until it is done, and a script
    // read again (tracks switched back and forth) added its fonts again each time.
    ass_set_extract_fonts(library, fontsRead.insert(header.hashValue).inserted ? 1 : 0)
    var bytes = Array(header.utf8)
    bytes.withUnsafeMutableBytes { raw in
      ass_process_codec_private(made, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count))
    }
    track = made
    self.header = header
    return made
  }

  /// The cues at `time` (seconds) drawn for a frame `width` by `height` device pixels, a video of `storageWidth`
  /// by `storageHeight` (for scripts whose shape differs from the video's; 0 for the frame's), the text scaled by
  /// `fontScale`. The bottom `hiddenBelow` pixels are covered (the controls): dialogue is laid out above them, as the
  /// text labels are; a cue the script places itself stays where it is. With `masks`, the picture is libass's masks
  /// as they are, for a painter that blends them itself (cairo: no picture of the whole box is composed and copied).
  public func render(
    at time: Double, width: Int, height: Int, storageWidth: Int = 0, storageHeight: Int = 0, fontScale: Double = 1,
    hiddenBelow: Int = 0, masks: Bool = false
  ) -> Frame {
    guard let track, width > 0, height > 0 else { return nothing() }
    let storage = storageWidth > 0 && storageHeight > 0 ? (storageWidth, storageHeight) : (width, height)
    // Dialogue at the bottom is raised by what is covered beyond its own margin (libass moves it by a share of the
    // height; a sign the script places stays): a script whose margin already clears the controls is not moved.
    let covered = min(max(0, hiddenBelow), height / 2)
    let margin = Int((bottomMargin * Double(height)).rounded())
    let lift = max(0, covered - margin)
    let wanted = [width, height, storage.0, storage.1, Int((fontScale * 1000).rounded()), lift, masks ? 1 : 0]
    if wanted != settings {
      ass_set_frame_size(renderer, Int32(width), Int32(height))
      // libass moves a line by that share of the height above its margin.
      ass_set_line_position(renderer, Double(lift) * 100 / Double(max(1, height - margin)))
      ass_set_storage_size(renderer, Int32(storage.0), Int32(storage.1))
      ass_set_font_scale(renderer, fontScale)
      settings = wanted
      redraw = true
    }
    var change: Int32 = 0
    let images = ass_render_frame(renderer, track, Self.milliseconds(time), &change)
    guard change != 0 || redraw else { return .unchanged }
    let box = orb_ass_bounds(images)
    let (x0, y0) = (max(0, Int(box.x0)), max(0, Int(box.y0)))
    let (x1, y1) = (min(width, Int(box.x1)), min(height, Int(box.y1)))
    // libass says "changed" at every frame without a cue: nothing after nothing is no change.
    guard x1 > x0, y1 > y0 else { return nothing() }
    (redraw, showing) = (false, true)
    let (w, h) = (x1 - x0, y1 - y0)
    if masks {
      return .picture(
        Picture(x: x0, y: y0, width: w, height: h, bgra: [], masks: Self.masks(images, width: width, height: height)))
    }
    var bgra = [UInt8](repeating: 0, count: w * h * 4)
    bgra.withUnsafeMutableBufferPointer {
      orb_ass_compose(images, $0.baseAddress, Int32(x0), Int32(y0), Int32(w), Int32(h))
    }
    return .picture(Picture(x: x0, y: y0, width: w, height: h, bgra: bgra))
  }

  /// Copies of the masks of `images`, each clipped to the frame.
  private static func masks(_ images: UnsafeMutablePointer<ASS_Image>?, width: Int, height: Int) -> [Mask] {
    var masks: [Mask] = []
    var next = images
    while let image = next?.pointee {
      next = image.next
      let opacity = UInt8(255 - (image.color & 0xFF))
      let (x0, y0) = (max(0, Int(image.dst_x)), max(0, Int(image.dst_y)))
      let (x1, y1) = (min(width, Int(image.dst_x + image.w)), min(height, Int(image.dst_y + image.h)))
      guard opacity > 0, x1 > x0, y1 > y0, let bitmap = image.bitmap else { continue }
      let (w, h, stride) = (x1 - x0, y1 - y0, Int(image.stride))
      let (skipX, skipY) = (x0 - Int(image.dst_x), y0 - Int(image.dst_y))
      var coverage = [UInt8](repeating: 0, count: w * h)
      coverage.withUnsafeMutableBufferPointer { out in
        for row in 0..<h {
          (out.baseAddress! + row * w).update(from: bitmap + (row + skipY) * stride + skipX, count: w)
        }
      }
      masks.append(
        Mask(
          x: x0, y: y0, width: w, height: h, red: UInt8(image.color >> 24), green: UInt8((image.color >> 16) & 0xFF),
          blue: UInt8((image.color >> 8) & 0xFF), opacity: opacity, coverage: coverage))
    }
    return masks
  }

  /// Nothing to be seen: said once.
  private func nothing() -> Frame {
    defer { (redraw, showing) = (false, false) }
    return redraw || showing ? .picture(nil) : .unchanged
  }

  private static func milliseconds(_ seconds: Double) -> Int64 {
    guard seconds.isFinite else { return seconds > 0 ? Int64(Int32.max) : 0 }
    return seconds.wholeMilliseconds
  }
}
