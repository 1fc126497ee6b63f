import CFFmpeg

/// The picture a sound file carries (an album's cover, a podcast's image: a stream FFmpeg marks as an attached
/// picture), decoded once when the file opens, so the window shows it while the sound plays instead of black, as mpv,
/// VLC and Celluloid do. 8-bit RGBA, rows of `width * 4` bytes, shrunk to fit `maxSide` (a cover may be a 3000-pixel
/// scan; the window is rarely larger than 1600).
/// Thread-safety: a value.
public struct CoverArt: Sendable {
  public let width: Int
  public let height: Int
  public let rgba: [UInt8]

  /// The longest side kept.
  public static let maxSide = 1600

  /// The first attached picture among `context`'s streams that decodes; nil when there is none.
  /// Call while the source opens, before the demuxer's thread reads the context.
  static func first(
    in context: UnsafeMutablePointer<AVFormatContext>, parameters: [Int: StreamParameters], limit: PictureLimit
  ) -> CoverArt? {
    for i in 0..<Int(context.pointee.nb_streams) {
      let st = context.pointee.streams[i]!
      guard (st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0, st.pointee.attached_pic.size > 0,
        let stream = parameters[i]
      else { continue }
      // A cover is shown small: one over 32 megapixels (a poster scan) is not worth the memory it would take while
      // the file opens, and is left out.
      let bounded = PictureLimit(maxSide: limit.maxSide, maxPixels: min(limit.maxPixels, 1 << 25))
      if let art = decode(&st.pointee.attached_pic, stream: stream, limit: bounded) { return art }
    }
    return nil
  }

  /// `packet` (a JPEG, PNG, …) decoded and converted; nil when it does not decode.
  private static func decode(
    _ packet: UnsafeMutablePointer<AVPacket>, stream: StreamParameters, limit: PictureLimit
  ) -> CoverArt? {
    guard let decoder = try? Decoder(stream, threads: 1, limit: limit) else { return nil }
    let ctx = decoder.context
    guard avcodec_send_packet(ctx, packet) >= 0 else { return nil }
    avcodec_send_packet(ctx, nil)  // the end: a codec with a delay lets its one picture out
    var owned = av_frame_alloc()
    defer { av_frame_free(&owned) }
    guard let frame = owned, avcodec_receive_frame(ctx, frame) >= 0 else { return nil }
    return convert(frame.pointee)
  }

  /// `frame` in RGBA at its shape, no side longer than `maxSide`.
  private static func convert(_ frame: AVFrame) -> CoverArt? {
    let (w, h) = (Int(frame.width), Int(frame.height))
    guard w > 0, h > 0 else { return nil }
    let shrink = min(1, Double(maxSide) / Double(max(w, h)))
    let (ow, oh) = (max(1, Int((Double(w) * shrink).rounded())), max(1, Int((Double(h) * shrink).rounded())))
    guard
      let sws = sws_getContext(
        frame.width, frame.height, AVPixelFormat(frame.format), Int32(ow), Int32(oh), AV_PIX_FMT_RGBA, SWS_BICUBIC,
        nil, nil, nil)
    else { return nil }
    defer { sws_freeContext(sws) }
    // swscale's SIMD code writes whole blocks of pixels: past a row's end where the width is not a multiple of them
    // (a 300x300 JPEG cover overran a tight buffer and corrupted the heap). It writes into rows aligned as
    // FFmpeg's own buffers are, with room to spare after the last, and the picture is copied out tight.
    let stride = (ow * 4 + 63) & ~63
    var padded = [UInt8](repeating: 0, count: stride * oh + 256)
    var source = frame
    let rows = padded.withUnsafeMutableBufferPointer { out -> Int32 in
      var dst: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress, nil, nil, nil]
      var dstStride: [Int32] = [Int32(stride), 0, 0, 0]
      return withUnsafePointer(to: &source.data) { src in
        withUnsafePointer(to: &source.linesize) { srcStride in
          sws_scale(
            sws, UnsafeRawPointer(src).assumingMemoryBound(to: UnsafePointer<UInt8>?.self),
            UnsafeRawPointer(srcStride).assumingMemoryBound(to: Int32.self), 0, frame.height, &dst, &dstStride)
        }
      }
    }
    guard rows > 0 else { return nil }
    var rgba = [UInt8]()
    rgba.reserveCapacity(ow * oh * 4)
    for row in 0..<oh { rgba += padded[row * stride..<row * stride + ow * 4] }
    return CoverArt(width: ow, height: oh, rgba: rgba)
  }
}
