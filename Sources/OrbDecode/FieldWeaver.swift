import CFFmpeg

/// Makes frames of the fields of a stream coded in fields (`HEVCFields`). Each field waits for the next; a top and a
/// bottom field one right after the other become one frame of twice the height, the top field's rows at the even
/// rows, marked interlaced with the one that came first taken first. The `Deinterlacer` then shows each field whole at
/// its own moment, as it does for a stream coded in frames (or, with deinterlacing off, the frame as woven). A field
/// with no partner (the first or last, one beside a lost field, two of one parity in a row) becomes a frame alone,
/// each of its rows twice.
/// Thread-safety: Unsafe; owned by the video decode thread.
struct FieldWeaver {
  /// The field waiting for its partner (owned).
  private var waiting: Deinterlacer.Timed?

  /// Takes `field` (owned) and returns the frames that are ready (owned by the caller), in order.
  mutating func offer(_ field: Deinterlacer.Timed) -> [Deinterlacer.Timed] {
    let top = Self.isTop(field.frame)
    guard let held = waiting else {
      if top == nil { return [alone(field)] }
      waiting = field
      return []
    }
    waiting = nil
    if let top, let heldTop = Self.isTop(held.frame), top != heldTop, Self.matches(held.frame, field.frame),
      field.time > held.time, field.time - held.time <= 1.5 * max(held.duration, 0.001),
      let frame = weave(first: held, second: field, topFirst: heldTop)
    {
      return [frame]
    }
    var ready = [alone(held)]
    if top != nil { waiting = field } else { ready.append(alone(field)) }
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

  /// Whether `frame` is a top field (true) or a bottom one (false): FFmpeg marks a field picture interlaced, with
  /// "top field first" for a top field. Nil for a picture not marked a field, or one that cannot be woven.
  private static func isTop(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool? {
    guard orb_frame_is_interlaced(frame) != 0, Deinterlacer.canSplit(frame) else { return nil }
    return orb_frame_top_field_first(frame) != 0
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

  /// `field` (taken) as a frame on its own, each row twice; where memory for it cannot be had, the field as it is.
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
