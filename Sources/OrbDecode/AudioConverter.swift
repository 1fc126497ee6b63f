import CFFmpeg

/// libswresample from whatever the decoder gives to interleaved Float32 at one output rate. Mono, stereo, 5.1 and
/// 7.1 keep their channels (the DSP chain down-mixes with the standard coefficients); other layouts are mixed to
/// stereo here, each side's coefficients scaled to add up to at most 1 as the chain's do (swresample leaves a float
/// mix unscaled: 5.0 came out 4.7 dB louder than 5.1, and loud scenes clipped). A layout the file does not name is
/// taken as the usual one for its number of channels (a mono PCM track in Matroska: it was mixed to both sides at
/// -3 dB, where a mono track that says so plays at full level). Thread-safety: Unsafe; owned by the audio decode
/// thread.
final class AudioConverter {
  let outputRate: Int
  private var swr: OpaquePointer?
  private var key: (Int32, Int32, UInt64, Int32) = (-1, 0, 0, 0)
  private(set) var outputChannels = 2

  init(outputRate: Int) { self.outputRate = outputRate }

  deinit { swr_free(&swr) }

  /// Converts `frame`; nil when it cannot (the frame is skipped).
  func convert(_ frame: UnsafeMutablePointer<AVFrame>) -> [Float]? {
    let f = frame.pointee
    var inLayout = f.ch_layout
    if inLayout.order == AV_CHANNEL_ORDER_UNSPEC { av_channel_layout_default(&inLayout, inLayout.nb_channels) }
    let frameKey = (f.format, f.sample_rate, inLayout.u.mask, inLayout.nb_channels)
    if swr == nil || key != frameKey {
      swr_free(&swr)
      var outLayout = AVChannelLayout()
      let channels = Int(inLayout.nb_channels)
      if [1, 2, 6, 8].contains(channels) && inLayout.order == AV_CHANNEL_ORDER_NATIVE {
        av_channel_layout_copy(&outLayout, &inLayout)
      } else {
        av_channel_layout_default(&outLayout, 2)
      }
      outputChannels = Int(outLayout.nb_channels)
      var ctx: OpaquePointer?
      let made = swr_alloc_set_opts2(
        &ctx, &outLayout, AV_SAMPLE_FMT_FLT, Int32(outputRate), &inLayout, AVSampleFormat(f.format), f.sample_rate,
        0, nil)
      av_channel_layout_uninit(&outLayout)
      if let ctx { av_opt_set_double(UnsafeMutableRawPointer(ctx), "rematrix_maxval", 1, 0) }
      guard made >= 0, let ctx, swr_init(ctx) >= 0 else {
        var c = ctx
        swr_free(&c)
        return nil
      }
      swr = ctx
      key = frameKey
    }
    let capacity = Int(swr_get_out_samples(swr, f.nb_samples)) + 32
    var out = [Float](repeating: 0, count: capacity * outputChannels)
    let input = UnsafeMutableRawPointer(f.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
    let produced = out.withUnsafeMutableBytes { buffer -> Int32 in
      var dst: UnsafeMutablePointer<UInt8>? = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
      return swr_convert(swr, &dst, Int32(capacity), input, f.nb_samples)
    }
    guard produced >= 0 else { return nil }
    out.removeLast(out.count - Int(produced) * outputChannels)
    return out
  }

  /// Forgets buffered samples (a seek).
  func reset() {
    swr_free(&swr)
    key = (-1, 0, 0, 0)
  }
}
