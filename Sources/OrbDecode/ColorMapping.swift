import CFFmpeg

/// From FFmpeg's colour enums to `ColorInfo`, filling in what a stream leaves unspecified the way
/// players agree on: HD sizes are BT.709, SD sizes BT.601, YUVJ formats full range, the rest limited.
enum ColorMapping {
  static func resolve(
    space: AVColorSpace, range: AVColorRange, primaries: AVColorPrimaries, transfer: AVColorTransferCharacteristic,
    format: AVPixelFormat, width: Int, height: Int
  ) -> ColorInfo {
    let isHD = width >= 1280 || height > 576
    let matrix: ColorInfo.Matrix
    switch space {
    case AVCOL_SPC_BT709: matrix = .bt709
    case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_SMPTE240M, AVCOL_SPC_FCC: matrix = .bt601
    case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: matrix = .bt2020nc
    case AVCOL_SPC_RGB: matrix = .rgb
    default:
      switch primaries {
      case AVCOL_PRI_BT2020: matrix = .bt2020nc
      case AVCOL_PRI_BT470BG, AVCOL_PRI_SMPTE170M: matrix = .bt601
      case AVCOL_PRI_BT709: matrix = .bt709
      default: matrix = isHD ? .bt709 : .bt601
      }
    }
    let isJPEGFormat =
      format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P || format == AV_PIX_FMT_YUVJ444P
    let resolvedRange: ColorInfo.Range =
      range == AVCOL_RANGE_JPEG || (range == AVCOL_RANGE_UNSPECIFIED && isJPEGFormat) ? .full : .limited
    let resolvedPrimaries: ColorInfo.Primaries
    switch primaries {
    case AVCOL_PRI_BT709: resolvedPrimaries = .bt709
    case AVCOL_PRI_BT470BG: resolvedPrimaries = .bt601_625
    case AVCOL_PRI_SMPTE170M, AVCOL_PRI_SMPTE240M: resolvedPrimaries = .bt601_525
    case AVCOL_PRI_BT2020: resolvedPrimaries = .bt2020
    case AVCOL_PRI_SMPTE432, AVCOL_PRI_SMPTE431: resolvedPrimaries = .dciP3
    default:
      switch matrix {
      case .bt2020nc: resolvedPrimaries = .bt2020
      case .bt601: resolvedPrimaries = height == 576 ? .bt601_625 : .bt601_525
      default: resolvedPrimaries = .bt709
      }
    }
    let resolvedTransfer: ColorInfo.Transfer
    switch transfer {
    case AVCOL_TRC_SMPTE2084: resolvedTransfer = .pq
    case AVCOL_TRC_ARIB_STD_B67: resolvedTransfer = .hlg
    case AVCOL_TRC_IEC61966_2_1: resolvedTransfer = .srgb
    case AVCOL_TRC_LINEAR: resolvedTransfer = .linear
    default: resolvedTransfer = .bt1886
    }
    return ColorInfo(matrix: matrix, range: resolvedRange, primaries: resolvedPrimaries, transfer: resolvedTransfer)
  }

  static func mastering(_ p: UnsafePointer<AVMasteringDisplayMetadata>) -> HDRMetadata.Mastering? {
    let m = p.pointee
    guard m.has_primaries != 0 || m.has_luminance != 0 else { return nil }
    func q(_ r: AVRational) -> Double { r.den == 0 ? 0 : Double(r.num) / Double(r.den) }
    let d = m.display_primaries
    return HDRMetadata.Mastering(
      red: .init(x: q(d.0.0), y: q(d.0.1)), green: .init(x: q(d.1.0), y: q(d.1.1)),
      blue: .init(x: q(d.2.0), y: q(d.2.1)), whitePoint: .init(x: q(m.white_point.0), y: q(m.white_point.1)),
      minLuminance: q(m.min_luminance), maxLuminance: q(m.max_luminance))
  }
}
