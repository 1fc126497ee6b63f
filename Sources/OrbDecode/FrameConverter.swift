import CFFmpeg

/// Turns a decoded AVFrame into a `VideoFrame`: formats the renderer samples directly pass through
/// untouched; any other format is converted by libswscale to 4:2:0 of the same bit depth class,
/// keeping its matrix and range.
/// Thread-safety: Unsafe; owned by the decode thread.
final class FrameConverter {
  private var sws: OpaquePointer?
  private var swsKey: (Int32, Int32, Int32) = (0, 0, -1)

  deinit { sws_freeContext(sws) }

  /// - Parameter frame: ownership passes to the returned frame (or it is freed).
  func makeFrame(
    _ frame: UnsafeMutablePointer<AVFrame>, stream: VideoStreamInfo, time: Double, duration: Double, generation: Int,
    fields: VideoFrame.Fields = .progressive
  ) -> VideoFrame? {
    var owned: UnsafeMutablePointer<AVFrame>? = frame
    let f = frame.pointee
    let format = AVPixelFormat(f.format)
    var color = ColorMapping.resolve(
      space: f.colorspace, range: f.color_range, primaries: f.color_primaries, transfer: f.color_trc,
      format: format, width: Int(f.width), height: Int(f.height))
    var hdr = HDRMetadata()
    hdr.mastering = orb_frame_mastering(frame).flatMap(ColorMapping.mastering)
    if let light = orb_frame_content_light(frame) {
      hdr.maxCLL = Int(light.pointee.MaxCLL)
      hdr.maxFALL = Int(light.pointee.MaxFALL)
    }
    let sar = f.sample_aspect_ratio
    let sampleAspect =
      sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : Self.aspect(stream.sampleAspectRatio)

    let direct: (VideoFrame.Layout, Int, Double)?
    switch format {
    case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: direct = (.planar420, 8, 1)
    case AV_PIX_FMT_NV12: direct = (.semiPlanar420, 8, 1)
    case AV_PIX_FMT_YUV420P10LE: direct = (.planar420, 10, 65535.0 / 1023)
    case AV_PIX_FMT_YUV420P12LE: direct = (.planar420, 12, 65535.0 / 4095)
    case AV_PIX_FMT_YUV420P16LE: direct = (.planar420, 16, 1)
    // P010/P016 keep their bits at the top of each word, so UNORM already reads them as code / 65535.
    case AV_PIX_FMT_P010LE: direct = (.semiPlanar420, 10, 65535.0 / 65472)
    case AV_PIX_FMT_P016LE: direct = (.semiPlanar420, 16, 1)
    default: direct = nil
    }
    if let (layout, depth, scale) = direct {
      return VideoFrame(
        avFrame: frame, layout: layout, bitDepth: depth, sampleScale: scale, color: color, hdr: hdr,
        sampleAspect: sampleAspect, rotation: stream.rotation, time: time, duration: duration, generation: generation,
        fields: fields)
    }

    let depth = av_pix_fmt_desc_get(format).map { Int($0.pointee.comp.0.depth) } ?? 8
    let target = depth > 8 ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P
    let isRGB = av_pix_fmt_desc_get(format).map { ($0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB)) != 0 } ?? false
    let key = (f.width, f.height, f.format)
    if sws == nil || swsKey != key {
      sws_freeContext(sws)
      sws = sws_getContext(f.width, f.height, format, f.width, f.height, target, SWS_BILINEAR, nil, nil, nil)
      swsKey = key
      guard let sws else {
        av_frame_free(&owned)
        return nil
      }
      // Same matrix and range on both sides: only the layout changes. RGB sources become BT.709 limited.
      let table = sws_getCoefficients((isRGB ? .bt709 : color.matrix).swsColorspace)
      let fullIn: Int32 = isRGB || color.range == .full ? 1 : 0
      let fullOut: Int32 = isRGB ? 0 : fullIn
      sws_setColorspaceDetails(sws, table, fullIn, table, fullOut, 0, 1 << 16, 1 << 16)
    }
    guard let out = av_frame_alloc() else {
      av_frame_free(&owned)
      return nil
    }
    out.pointee.width = f.width
    out.pointee.height = f.height
    out.pointee.format = target.rawValue
    var outOwned: UnsafeMutablePointer<AVFrame>? = out
    guard av_frame_get_buffer(out, 64) >= 0 else {
      av_frame_free(&owned)
      av_frame_free(&outOwned)
      return nil
    }
    let rows = withUnsafePointer(to: frame.pointee.data) { src in
      withUnsafePointer(to: frame.pointee.linesize) { srcStride in
        withUnsafePointer(to: out.pointee.data) { dst in
          withUnsafePointer(to: out.pointee.linesize) { dstStride in
            sws_scale(
              sws,
              UnsafeRawPointer(src).assumingMemoryBound(to: UnsafePointer<UInt8>?.self),
              UnsafeRawPointer(srcStride).assumingMemoryBound(to: Int32.self), 0, f.height,
              UnsafeRawPointer(dst).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self),
              UnsafeRawPointer(dstStride).assumingMemoryBound(to: Int32.self))
          }
        }
      }
    }
    guard rows > 0 else {
      // swscale could not convert it (a damaged frame): the picture is skipped.
      av_frame_free(&owned)
      av_frame_free(&outOwned)
      return nil
    }
    av_frame_copy_props(out, frame)
    av_frame_free(&owned)
    if isRGB {
      color.matrix = .bt709
      color.range = .limited
    }
    return VideoFrame(
      avFrame: out, layout: .planar420, bitDepth: depth > 8 ? 10 : 8, sampleScale: depth > 8 ? 65535.0 / 1023 : 1,
      color: color, hdr: hdr, sampleAspect: sampleAspect, rotation: stream.rotation, time: time,
      duration: duration, generation: generation, fields: fields)
  }

  static func aspect(_ ratio: String) -> Double {
    let parts = ratio.split(separator: ":").compactMap { Double($0) }
    guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { return 1 }
    return parts[0] / parts[1]
  }
}

extension ColorInfo.Matrix {
  /// swscale's name for this matrix (`sws_getCoefficients`); RGB sources are taken as BT.709.
  public var swsColorspace: Int32 {
    switch self {
    case .bt709, .rgb: return SWS_CS_ITU709
    case .bt601: return SWS_CS_ITU601
    case .bt2020nc: return SWS_CS_BT2020
    }
  }
}
