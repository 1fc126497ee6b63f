import CFFmpeg
import COrbPixels
import Foundation

/// Which pictures are deinterlaced (`--deinterlace`, the `d` key).
public enum DeinterlaceMode: String, Sendable, CaseIterable {
  /// Those the stream marks as interlaced (TV recordings, DVDs, 1080i broadcasts); progressive ones pass as they are.
  case auto
  /// Every picture, for a stream that is interlaced but not marked so.
  case yes
  /// None: interlaced pictures are shown as they are, both fields woven into one (combing where things move).
  case no

  /// Whether `frame` is deinterlaced under this mode. `trustingMarks`: whether the decoder's marks say that a
  /// picture holds two fields (FFmpeg's HEVC decoder marks pictures that are single fields, or flips the order
  /// from one picture to the next: they are left as they are unless every picture is asked for).
  func applies(to frame: UnsafePointer<AVFrame>, trustingMarks: Bool) -> Bool {
    switch self {
    case .auto: return trustingMarks && orb_frame_is_interlaced(frame) != 0
    case .yes: return true
    case .no: return false
    }
  }
}

/// Makes each interlaced picture into two whole ones, one per field, at the field rate (50 pictures a second from
/// 50i, as the fields were filmed), by yadif's rule (`orb_make_field_lines`): each field's missing lines are
/// interpolated along edges and held to what the fields before and after show at that place. It needs the picture
/// after, so an interlaced picture waits here until the next one is decoded (or the stream ends); progressive
/// pictures pass at once and nothing is kept for them.
/// Thread-safety: Unsafe; owned by the video decode thread.
struct Deinterlacer {
  /// A picture with the time and duration it was given, and how it is shown.
  struct Timed {
    var frame: UnsafeMutablePointer<AVFrame>
    var time: Double
    var duration: Double
    var fields = VideoFrame.Fields.progressive
  }

  /// The interlaced picture before `waiting` (owned), the one field lines are taken from going back.
  private var previous: UnsafeMutablePointer<AVFrame>?
  /// The interlaced picture waiting for the next (owned).
  private var waiting: Timed?

  /// Takes `picture` (owned) and returns what is ready to show, in order (owned by the caller): the fields of the
  /// picture that was waiting, then `picture` itself if it is not deinterlaced. An `unseen` picture (one that ends
  /// before a seek's target: it is dropped) is not split, only kept as the one before the next.
  mutating func offer(_ picture: Timed, mode: DeinterlaceMode, trustingMarks: Bool, unseen: Bool = false) -> [Timed] {
    var ready: [Timed] = []
    if let held = waiting {
      ready += fields(of: held, next: picture.frame)
      retire(held.frame)
      waiting = nil
    }
    let splits = mode.applies(to: picture.frame, trustingMarks: trustingMarks) && Self.canSplit(picture.frame)
    if splits && !unseen {
      waiting = picture
    } else {
      var shown = picture
      let interlaced = orb_frame_is_interlaced(picture.frame) != 0
      shown.fields =
        interlaced ? .woven(topFirst: orb_frame_top_field_first(picture.frame) != 0) : .progressive
      ready.append(shown)
      // An unseen picture still serves as the one before the next; a progressive one between: the next interlaced
      // picture has none before it.
      retire(splits ? av_frame_clone(picture.frame) : nil)
    }
    return ready
  }

  /// The end of the stream: the waiting picture's fields, with itself in place of the one after.
  mutating func finish() -> [Timed] {
    defer { reset() }
    guard let held = waiting else { return [] }
    return fields(of: held, next: nil)
  }

  /// A seek: what was kept belongs to the place before it.
  mutating func reset() {
    var held = waiting?.frame
    av_frame_free(&held)
    waiting = nil
    retire(nil)
  }

  private mutating func retire(_ frame: UnsafeMutablePointer<AVFrame>?) {
    av_frame_free(&previous)
    previous = frame
  }

  /// The two whole pictures of `held`'s fields, first-taken first, each lasting half of it. Falls back to `held`
  /// itself, unsplit, where memory for them cannot be had.
  private func fields(of held: Timed, next: UnsafeMutablePointer<AVFrame>?) -> [Timed] {
    let cur = held.frame
    let topFirst = orb_frame_top_field_first(cur) != 0
    let marked = orb_frame_is_interlaced(cur) != 0
    let before = previous.flatMap { Self.matches($0, cur) ? $0 : nil } ?? cur
    let after = next.flatMap { Self.matches($0, cur) ? $0 : nil } ?? cur
    let half = held.duration / 2
    var first = make(cur, before: before, after: after, keepTop: topFirst, topFirst: topFirst)
    guard let made = first, let second = make(cur, before: before, after: after, keepTop: !topFirst, topFirst: topFirst)
    else {
      av_frame_free(&first)
      // `held` stays owned by this deinterlacer (it becomes `previous`); the caller gets its own reference.
      return av_frame_clone(cur).map {
        [Timed(frame: $0, time: held.time, duration: held.duration, fields: .woven(topFirst: topFirst))]
      } ?? []
    }
    return [
      Timed(frame: made, time: held.time, duration: half, fields: .field(topFirst: topFirst, marked: marked)),
      Timed(frame: second, time: held.time + half, duration: half, fields: .field(topFirst: topFirst, marked: marked)),
    ]
  }

  /// `cur` (its top field taken first, or not) with the field of the other parity than the kept one made anew; nil
  /// without memory.
  private func make(
    _ cur: UnsafeMutablePointer<AVFrame>, before: UnsafeMutablePointer<AVFrame>, after: UnsafeMutablePointer<AVFrame>,
    keepTop: Bool, topFirst: Bool
  ) -> UnsafeMutablePointer<AVFrame>? {
    guard let out = av_frame_alloc() else { return nil }
    out.pointee.format = cur.pointee.format
    out.pointee.width = cur.pointee.width
    out.pointee.height = cur.pointee.height
    guard av_frame_get_buffer(out, 0) >= 0, av_frame_copy_props(out, cur) >= 0,
      let desc = av_pix_fmt_desc_get(AVPixelFormat(cur.pointee.format))
    else {
      var unused: UnsafeMutablePointer<AVFrame>? = out
      av_frame_free(&unused)
      return nil
    }
    orb_frame_clear_interlaced(out)
    let d = desc.pointee
    let bytes = Int32(d.comp.0.depth > 8 ? 2 : 1)
    let format = AVPixelFormat(cur.pointee.format)
    for plane in 0..<Int(av_pix_fmt_count_planes(format)) {
      guard let target = Self.plane(out, plane), let source = Self.plane(cur, plane) else { continue }
      // Every component in this plane, and how far apart its samples lie (2 in an interleaved CbCr plane).
      let step = Self.components(d).first { Int($0.plane) == plane }.map { Int32($0.step) / bytes } ?? 1
      let chroma = plane > 0 && plane < 3 && d.nb_components >= 3
      let height = chroma ? -((-cur.pointee.height) >> Int32(d.log2_chroma_h)) : cur.pointee.height
      let rowBytes = av_image_get_linesize(format, cur.pointee.width, Int32(plane))
      var job = orb_field_job()
      job.dst = target
      job.dst_stride = Int(Self.stride(out, plane))
      job.prev = UnsafePointer(Self.plane(before, plane) ?? source)
      job.cur = UnsafePointer(source)
      job.next = UnsafePointer(Self.plane(after, plane) ?? source)
      job.prev_stride = Int(Self.stride(before, plane))
      job.cur_stride = Int(Self.stride(cur, plane))
      job.next_stride = Int(Self.stride(after, plane))
      job.width = rowBytes / bytes
      job.height = height
      job.missing = keepTop ? 1 : 0
      job.missing_is_later = keepTop == topFirst ? 1 : 0  // the first-taken field is kept
      job.bytes = bytes
      job.bits = Int32(d.comp.0.depth)
      job.step = step
      orb_make_field_lines(&job)
    }
    return out
  }

  /// Planar and semi-planar Y'CbCr (and grey) of up to 16 bits a sample: what the line rule reads sample by sample.
  static func canSplit(_ frame: UnsafePointer<AVFrame>) -> Bool {
    guard frame.pointee.height >= 4, let desc = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)) else {
      return false
    }
    let d = desc.pointee
    let unsupported =
      UInt64(AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM)
      | UInt64(AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_RGB)
    guard d.flags & unsupported == 0, d.nb_components >= 1, d.comp.0.depth <= 16 else { return false }
    let bytes = Int32(d.comp.0.depth > 8 ? 2 : 1)
    // Each component a whole sample of `bytes`, one or two to a plane's pixel.
    return components(d).allSatisfy {
      $0.shift == 0 && $0.offset % bytes == 0 && ($0.step == bytes || $0.step == 2 * bytes)
        && ($0.depth > 8) == (bytes == 2)
    }
  }

  /// Whether `other` can stand beside `frame` (same size and format).
  private static func matches(_ other: UnsafeMutablePointer<AVFrame>, _ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
    other.pointee.width == frame.pointee.width && other.pointee.height == frame.pointee.height
      && other.pointee.format == frame.pointee.format
  }

  /// The format's components (Y, Cb, Cr, alpha as it has them).
  private static func components(_ d: AVPixFmtDescriptor) -> ArraySlice<AVComponentDescriptor> {
    [d.comp.0, d.comp.1, d.comp.2, d.comp.3].prefix(Int(d.nb_components))
  }

  /// Plane `index` of `frame`, and its bytes from one row to the next.
  static func plane(_ frame: UnsafeMutablePointer<AVFrame>, _ index: Int) -> UnsafeMutablePointer<UInt8>? {
    let f = frame.pointee
    return [f.data.0, f.data.1, f.data.2, f.data.3][index]
  }

  static func stride(_ frame: UnsafeMutablePointer<AVFrame>, _ index: Int) -> Int32 {
    let f = frame.pointee
    return [f.linesize.0, f.linesize.1, f.linesize.2, f.linesize.3][index]
  }
}
