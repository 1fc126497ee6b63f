import CFFmpeg

/// An opened AVCodecContext for one stream; frees it once.
/// Thread-safety: Unsafe; one decode thread uses it.
final class Decoder: @unchecked Sendable {
  let context: UnsafeMutablePointer<AVCodecContext>

  /// - Parameter threads: 0 lets FFmpeg pick one per core; frame and slice threading are both allowed.
  init(stream: UnsafeMutablePointer<AVStream>, threads: Int32 = 0) throws {
    let par = stream.pointee.codecpar
    guard let codec = avcodec_find_decoder(par!.pointee.codec_id) else {
      throw FFmpegError(call: "avcodec_find_decoder", code: orb_averror_decoder_not_found())
    }
    guard let ctx = avcodec_alloc_context3(codec) else {
      throw FFmpegError(call: "avcodec_alloc_context3", code: orb_averror(ENOMEM))
    }
    context = ctx
    do {
      try av(avcodec_parameters_to_context(ctx, par), "avcodec_parameters_to_context")
      ctx.pointee.pkt_timebase = stream.pointee.time_base
      ctx.pointee.thread_count = threads
      ctx.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
      try av(avcodec_open2(ctx, codec, nil), "avcodec_open2")
    } catch {
      var c: UnsafeMutablePointer<AVCodecContext>? = ctx
      avcodec_free_context(&c)
      throw error
    }
  }

  deinit {
    var c: UnsafeMutablePointer<AVCodecContext>? = context
    avcodec_free_context(&c)
  }
}
