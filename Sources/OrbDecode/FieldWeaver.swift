import CFFmpeg

/// Makes frames of the fields of a stream coded in fields (`HEVCFields`). A field of the parity that goes first
/// (the stream's field order) waits for the next; a field of the other parity right after it joins it in one frame of
/// twice the height, the top field's rows at the even rows, marked interlaced with the first one taken first. The
/// `Deinterlacer` then shows each field whole at its own moment, as it does for a stream coded in frames (or, with
/// deinterlacing off, the frame as woven). A field with no partner (the first or last, one beside a lost field) becomes
/// a frame alone, each of its rows twice; pairs start again with the next field of the first parity, never shifted by
/// one field. A picture of a frame's shape (the stream turned to frames) passes as it is.
/// Thread-safety: Unsafe; owned by the video decode thread.
struct FieldWeaver {
  /// Whether the top field goes first in a pair; until known (the stream did not say), the first field's parity.
  private var topFirst: Bool?
  /// The field waiting for its partner (owned).
  private var waiting: Deinterlacer.Timed?

  init(topFirst: Bool?) { self.topFirst = topFirst }

  /// Takes `picture` (owned) and returns the frames that are ready (owned by the caller), in order.
  mutating func offer(_ picture: Deinterlacer.Timed) -> [Deinterlacer.Timed] {
    var ready: [Deinterlacer.Timed] = []
    let kind = Self.kind(picture.frame)
    if let held = waiting {
      waiting = nil
      if case .field(let top) = kind, top != topFirst, Self.matches(held.frame, picture.frame),
        picture.time > held.time, picture.time - held.time <= 1.5 * max(held.duration, 0.001),
        let frame = weave(first: held, second: picture, topFirst: !top)
      {
        return [frame]
      }
      ready.append(alone(held))
    }
    switch kind {
    case .field(let top) where top == (topFirst ?? top):
      topFirst = top
      waiting = picture
    case .field, .unmarkedField: ready.append(alone(picture))
    case .frame: ready.append(picture)
    }
    return ready
  }

  /// The end of the stream: the field still waiting, alone.
  mutating func finish() -> [Deinterlacer.Timed] {
    defer { waiting = nil }
    return waiting.map { [alone($0)] } ?? []
  }

  /// A seek: the waiting field belongs to the place before it.
  mutating func reset() {
    var held = waiting?.frame
    av_frame_free(&held)
    waiting = nil
  }

  private enum Kind {
    /// A field that can be woven: top (true) or bottom.
    case field(Bool)
    /// A picture of a field's shape whose parity is not known, or that cannot be woven.
    case unmarkedField
    /// A picture of a frame's shape.
    case frame
  }

  /// What `frame` is. FFmpeg marks a field picture interlaced, with "top field first" for a top field.
  private static func kind(_ frame: UnsafeMutablePointer<AVFrame>) -> Kind {
    let f = frame.pointee
    guard HEVCFields.areFields(width: Int(f.width), height: Int(f.height), sar: f.sample_aspect_ratio) else {
      return .frame
    }
    guard orb_frame_is_interlaced(frame) != 0, Deinterlacer.canSplit(frame) else { return .unmarkedField }
    return .field(orb_frame_top_field_first(frame) != 0)
  }

  private static func matches(_ a: UnsafeMutablePointer<AVFrame>, _ b: UnsafeMutablePointer<AVFrame>) -> Bool {
    a.pointee.width == b.pointee.width && a.pointee.height == b.pointee.height && a.pointee.format == b.pointee.format
  }

  /// `first` and `second` (both taken) woven into one frame lasting both; nil without memory (both are left as they
  /// were).
  private func weave(first: Deinterlacer.Timed, second: Deinterlacer.Timed, topFirst: Bool) -> Deinterlacer.Timed? {
    let (top, bottom) = topFirst ? (first.frame, second.frame) : (second.frame, first.frame)
    guard let frame = Self.frame(twiceTheHeightOf: first.frame, rows: [top, bottom]) else { return nil }
    // The marks say a frame of two fields, the first taken first.
    orb_frame_set_interlaced(frame, topFirst ? 1 : 0)
    var used: [UnsafeMutablePointer<AVFrame>?] = [first.frame, second.frame]
    for i in used.indices { av_frame_free(&used[i]) }
    return Deinterlacer.Timed(
      frame: frame, time: first.time, duration: second.time + second.duration - first.time)
  }

  /// `field` (taken) as a frame on its own, each row twice; one that cannot be split, or without memory for it, as
  /// it is.
  private func alone(_ field: Deinterlacer.Timed) -> Deinterlacer.Timed {
    guard Deinterlacer.canSplit(field.frame),
      let frame = Self.frame(twiceTheHeightOf: field.frame, rows: [field.frame, field.frame])
    else { return field }
    orb_frame_clear_interlaced(frame)
    var used: UnsafeMutablePointer<AVFrame>? = field.frame
    av_frame_free(&used)
    return Deinterlacer.Timed(frame: frame, time: field.time, duration: field.duration)
  }

  /// A new frame like `like` (its properties, format and width) of twice its height, with the rows of `rows[0]` at the
  /// even rows and those of `rows[1]` at the odd ones, in every plane; nil without memory.
  private static func frame(
    twiceTheHeightOf like: UnsafeMutablePointer<AVFrame>, rows: [UnsafeMutablePointer<AVFrame>]
  ) -> UnsafeMutablePointer<AVFrame>? {
    guard let out = av_frame_alloc() else { return nil }
    out.pointee.format = like.pointee.format
    out.pointee.width = like.pointee.width
    out.pointee.height = like.pointee.height * 2
    let format = AVPixelFormat(like.pointee.format)
    guard av_frame_get_buffer(out, 0) >= 0, av_frame_copy_props(out, like) >= 0,
      let desc = av_pix_fmt_desc_get(format)
    else {
      var unused: UnsafeMutablePointer<AVFrame>? = out
      av_frame_free(&unused)
      return nil
    }
    for plane in 0..<Int(av_pix_fmt_count_planes(format)) {
      let chroma = plane > 0 && plane < 3 && desc.pointee.nb_components >= 3
      let fieldRows = chroma ? -((-like.pointee.height) >> Int32(desc.pointee.log2_chroma_h)) : like.pointee.height
      let bytes = av_image_get_linesize(format, like.pointee.width, Int32(plane))
      let outStride = Deinterlacer.stride(out, plane)
      for (parity, source) in rows.enumerated() {
        guard let to = Deinterlacer.plane(out, plane), let from = Deinterlacer.plane(source, plane) else { continue }
        av_image_copy_plane(
          to + Int(outStride) * parity, 2 * outStride, from, Deinterlacer.stride(source, plane), bytes, fieldRows)
      }
    }
    return out
  }
}
