import CFFmpeg
import Foundation

/// What a decoder needs of one stream, copied when the source opens: decode threads read this copy, never the
/// AVStream, which the demux thread's `av_read_frame` may change (formats without a header add streams as they go).
/// Thread-safety: immutable after creation; safe to share (FFmpeg only reads the parameters it copies from).
final class StreamParameters: @unchecked Sendable {
  let index: Int
  let timeBase: AVRational
  let parameters: UnsafeMutablePointer<AVCodecParameters>

  init?(_ stream: UnsafeMutablePointer<AVStream>) {
    guard let copy = avcodec_parameters_alloc() else { return nil }
    parameters = copy
    index = Int(stream.pointee.index)
    timeBase = stream.pointee.time_base
    // From here on deinit frees the copy, whichever way this returns.
    guard avcodec_parameters_copy(copy, stream.pointee.codecpar) >= 0 else { return nil }
  }

  deinit {
    var p: UnsafeMutablePointer<AVCodecParameters>? = parameters
    avcodec_parameters_free(&p)
  }

  /// A context of FFmpeg's decoder for the stream, filled from the copied parameters and the stream's time base,
  /// not yet opened: the caller owns it from here (and frees it with `avcodec_free_context`).
  /// - Throws: `FFmpegError` when FFmpeg has no decoder for the codec, or the context cannot be made.
  func makeCodecContext() throws -> (UnsafeMutablePointer<AVCodecContext>, UnsafePointer<AVCodec>) {
    guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
      throw FFmpegError(call: "avcodec_find_decoder", code: orb_averror_decoder_not_found())
    }
    guard let ctx = avcodec_alloc_context3(codec) else {
      throw FFmpegError(call: "avcodec_alloc_context3", code: orb_averror(ENOMEM))
    }
    let filled = avcodec_parameters_to_context(ctx, parameters)
    guard filled >= 0 else {
      var c: UnsafeMutablePointer<AVCodecContext>? = ctx
      avcodec_free_context(&c)
      throw FFmpegError(call: "avcodec_parameters_to_context", code: filled)
    }
    ctx.pointee.pkt_timebase = timeBase
    return (ctx, codec)
  }

  /// The codec's name, or for a codec FFmpeg does not know, the four-character tag the file gives it.
  var codecDescription: String { Self.codecDescription(parameters.pointee) }

  /// What `codecDescription` says, for parameters not copied (the probe's).
  static func codecDescription(_ par: AVCodecParameters) -> String {
    if par.codec_id != AV_CODEC_ID_NONE { return String(cString: avcodec_get_name(par.codec_id)) }
    return fourCC(par.codec_tag).map { "unknown codec '\($0)'" } ?? "unknown codec"
  }

  /// `tag` as its four printable characters, or nil when it is not one.
  static func fourCC(_ tag: UInt32) -> String? {
    guard tag != 0 else { return nil }
    let bytes = (0..<4).map { UInt8((tag >> (8 * UInt32($0))) & 0xff) }
    guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return String(format: "0x%08x", tag) }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// An opened AVCodecContext for one stream; frees it exactly once, on every path.
/// Thread-safety: not `Sendable`; made where a source is opened and handed whole to its decode thread
/// (`startThread`), which alone uses it from then on.
final class Decoder {
  let context: UnsafeMutablePointer<AVCodecContext>

  /// - Parameters:
  ///   - threads: 0 lets FFmpeg pick one per core; frame and slice threading are both allowed.
  ///   - limit: pictures larger than this fail to decode before FFmpeg allocates them.
  init(_ stream: StreamParameters, threads: Int32 = 0, limit: PictureLimit = .standard) throws {
    let (ctx, codec) = try stream.makeCodecContext()
    // Every stored property is set: from here a throw frees the context through deinit, and only there.
    context = ctx
    ctx.pointee.thread_count = threads
    ctx.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
    ctx.pointee.max_pixels = Int64(limit.maxPixels)
    try av(avcodec_open2(ctx, codec, nil), "avcodec_open2")
  }

  deinit {
    var c: UnsafeMutablePointer<AVCodecContext>? = context
    avcodec_free_context(&c)
  }

  /// Frame threads for a video stream's decoder. Each one holds a picture more (3 MB at 1080p, 6 MB at 1080p HDR,
  /// 24 MB at 4K HDR) and delays the first by one, so a stream one core decodes with room to spare gets one: up to
  /// 1080p60 H.264 or 1080p30 HEVC, and up to 20 Mb/s; 1080p30 H.264 at 20 Mb/s takes about a fifth of a core on this
  /// project's 2-core test machine, so these take at most about two fifths. HEVC, VP9 and AV1 cost about twice as
  /// much a pixel. Heavier streams get one thread a core (at most 16), as FFmpeg's own choice would, and frame threads
  /// even where HEVC is coded in wavefront rows (x265's default), which FFmpeg can also share out a picture at a
  /// time: at 4K HDR10 on two cores, rows cost a fifth more CPU than whole pictures (FFmpeg alone: 6.5 against 5.4 s
  /// for 5 s of video), and the player fell behind (17-29 of 120 pictures dropped, none with frame threads), for
  /// the 25 MB picture a thread more holds.
  ///
  /// `ORB_VIDEO_THREADS=N` (1 to 64) in the environment sets the count for every stream instead: to measure what a
  /// count costs and gains on a machine (bench/gpu/run.sh does on many cores), or to hold a player to fewer cores.
  static func frameThreads(
    for video: VideoStreamInfo, bitRate: Int64?, cores: Int = ProcessInfo.processInfo.activeProcessorCount,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> Int32 {
    if let asked = environment["ORB_VIDEO_THREADS"].flatMap({ Int32($0) }), (1...64).contains(asked) { return asked }
    let rate = min(max(video.frameRate ?? 30, 1), 240)
    let perPixel = ["hevc", "vp9", "av1"].contains(video.codec) ? 2.0 : 1.0
    let load = max(
      Double(video.width * video.height) * rate * perPixel / (1920 * 1080 * 30), Double(bitRate ?? 0) / 10e6)
    return load <= 2 ? 1 : Int32(max(2, min(16, cores)))
  }
}
