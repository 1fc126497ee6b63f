import CFFmpeg

/// The opening's first picture, decoded ahead of the decoder's reordering delay.
///
/// A decoder of a stream with B-pictures holds each picture back until it has decoded the ones that may come before
/// it (two more with x264's and x265's defaults), so an opening's first picture came out only once three had been
/// decoded: 27-29 ms of one core for the 1080p H.264 bench clip, 38 ms for HEVC Main10 at 1080p, on this project's
/// 2-core test machine, and more beside GTK's start. A decoder of its own decodes the first key picture alone and
/// is drained at once, so that picture is out after one; the stream's decoder decodes it again in its turn, and
/// that copy is dropped (`admits`).
///
/// Only where the stream's decoder delays pictures and runs on one thread (a stream one core decodes in real time,
/// `Decoder.frameThreads`): there the second picture is still decoded long before it is due. (With frame threads, as
/// at 4K, the picture was painted 48-92 ms sooner, but those after it came late: 4 of 120 dropped in the bench.) Never
/// after a seek, whose target is seldom its key picture; never for interlaced video; never a picture the decoder
/// says is damaged.
/// Thread-safety: Unsafe; owned by the video decode thread.
struct QuickFirstPicture {
  /// The next packet is the opening's first, and the stream's decoder would hold its picture back.
  private var pending: Bool
  private let parameters: StreamParameters?
  private let limit: PictureLimit
  /// The timestamp of the picture decoded ahead, until the decoder's own copy of it has been dropped.
  private var ahead: Int64?

  init(decoder: Decoder, parameters: StreamParameters?, limit: PictureLimit, codedAsFields: Bool = false) {
    let context = decoder.context.pointee
    // Interlaced video may code a picture's two fields in packets of their own: one packet drained alone would be
    // half a picture. (HEVC coded in fields is one such, whatever its field order says: `HEVCFields`.)
    let order = parameters?.parameters.pointee.field_order ?? AV_FIELD_UNKNOWN
    let progressive = (order == AV_FIELD_PROGRESSIVE || order == AV_FIELD_UNKNOWN) && !codedAsFields
    pending = parameters != nil && progressive && context.thread_count == 1 && context.has_b_frames > 0
    self.parameters = parameters
    self.limit = limit
  }

  /// A seek: nothing goes ahead any more, and no picture is dropped.
  mutating func cancel() {
    pending = false
    ahead = nil
  }

  /// Called with every packet before the stream's decoder gets it; for the opening's first, when it holds a key
  /// picture with a timestamp that is the first to be shown (`showsFirst`: the opening starts there), returns that
  /// picture, decoded alone (the caller frees the frame with `av_frame_free`).
  mutating func decode(_ packet: UnsafePointer<AVPacket>, showsFirst: Bool) -> UnsafeMutablePointer<AVFrame>? {
    guard pending else { return nil }
    pending = false
    guard showsFirst, (packet.pointee.flags & AV_PKT_FLAG_KEY) != 0, packet.pointee.pts != orb_nopts_value(),
      let parameters, let alone = try? Decoder(parameters, threads: 1, limit: limit)
    else { return nil }
    var frame = av_frame_alloc()
    guard let picture = frame, avcodec_send_packet(alone.context, packet) >= 0,
      avcodec_send_packet(alone.context, nil) >= 0, avcodec_receive_frame(alone.context, picture) >= 0,
      picture.pointee.pts != orb_nopts_value(), (picture.pointee.flags & AV_FRAME_FLAG_CORRUPT) == 0,
      picture.pointee.decode_error_flags == 0
    else {
      av_frame_free(&frame)
      return nil
    }
    ahead = picture.pointee.pts
    return picture
  }

  /// Whether a picture from the stream's decoder goes on: not its copy of the picture decoded ahead, nor one
  /// before it (which the decoder would have had to hold back anyway). Once past it, every picture goes on.
  mutating func admits(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
    guard let ahead else { return true }
    let pts = frame.pointee.pts
    if pts != orb_nopts_value() && pts <= ahead {
      if pts == ahead { self.ahead = nil }
      return false
    }
    self.ahead = nil
    return true
  }
}
