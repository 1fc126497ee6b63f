import CFFmpeg
import Foundation
import OrbDecode

/// Scales and converts SDR pictures to RGBA (or BGRA) on the CPU with swscale (its SIMD code, in slices on several threads),
/// straight into a target's host-visible memory, letterbox included: on a Vulkan device that is itself the CPU
/// (lavapipe), the fragment shader's per-pixel sampling costs several times what swscale does for the same picture.
/// HDR and wide-gamut pictures, and rotated ones, stay on the shader path (tone mapping lives there).
/// Thread-safety: Unsafe; owned by the renderer's thread.
final class CPUConverter {
  private var sws: OpaquePointer?
  private var key: Key?
  /// Slice threads: the machine's cores, at most 4 (more buys nothing at 1080p and costs start-up).
  private let threads = Int32(max(1, min(4, ProcessInfo.processInfo.activeProcessorCount)))

  private struct Key: Equatable {
    var format: Int32
    var width: Int
    var height: Int
    var outWidth: Int
    var outHeight: Int
    var matrix: ColorInfo.Matrix
    var range: ColorInfo.Range
    var order: PixelOrder
  }

  deinit { sws_freeContext(sws) }

  /// Whether `frame` can take this path: SDR with BT.709-class primaries, upright, in a format swscale reads.
  static func accepts(_ frame: VideoFrame, variant: PipelineVariant) -> Bool {
    variant == .sdr && frame.rotation == 0 && av_get_pix_fmt(frame.pixelFormatName).rawValue >= 0
  }

  /// Draws `frame` into `target` (a readable one) fitted into `rect`, black around it, its bytes in `order`. False
  /// when swscale cannot (the caller draws on the GPU instead).
  func draw(
    _ frame: VideoFrame, into target: RenderTarget, rect: (x0: Int, y0: Int, x1: Int, y1: Int), order: PixelOrder
  ) -> Bool {
    guard let memory = target.mutablePixels else { return false }
    let width = target.width
    let height = target.height
    let x0 = max(0, min(width, rect.x0))
    let y0 = max(0, min(height, rect.y0))
    let x1 = max(x0, min(width, rect.x1))
    let y1 = max(y0, min(height, rect.y1))
    guard x1 > x0, y1 > y0 else { return false }
    let wanted = Key(
      format: av_get_pix_fmt(frame.pixelFormatName).rawValue, width: frame.width, height: frame.height,
      outWidth: x1 - x0, outHeight: y1 - y0, matrix: frame.color.matrix, range: frame.color.range, order: order)
    if key != wanted {
      sws_freeContext(sws)
      let space: Int32
      switch frame.color.matrix {
      case .bt601: space = SWS_CS_ITU601
      case .bt2020nc: space = SWS_CS_BT2020
      case .bt709, .rgb: space = SWS_CS_ITU709
      }
      sws = orb_sws_rgba_context(
        wanted.format, Int32(frame.width), Int32(frame.height), Int32(wanted.outWidth), Int32(wanted.outHeight),
        threads, space, frame.color.range == .full ? 1 : 0, order == .bgra ? 1 : 0)
      key = sws == nil ? nil : wanted
    }
    guard let sws else { return false }
    let rowBytes = width * 4
    // The letterbox: opaque black above, below, left and right of the picture.
    func black(_ offset: Int, _ count: Int) {
      guard count > 0 else { return }
      let words = memory.advanced(by: offset).bindMemory(to: UInt32.self, capacity: count / 4)
      words.update(repeating: UInt32(0xFF00_0000).littleEndian, count: count / 4)
    }
    black(0, y0 * rowBytes)
    black(y1 * rowBytes, (height - y1) * rowBytes)
    if x0 > 0 || x1 < width {
      for y in y0..<y1 {
        black(y * rowBytes, x0 * 4)
        black(y * rowBytes + x1 * 4, (width - x1) * 4)
      }
    }
    var planes: [UnsafePointer<UInt8>?] = [nil, nil, nil, nil]
    var strides: [Int32] = [0, 0, 0, 0]
    for (i, plane) in frame.planes.prefix(4).enumerated() {
      planes[i] = plane.base.assumingMemoryBound(to: UInt8.self)
      strides[i] = Int32(plane.stride)
    }
    let out = memory.advanced(by: y0 * rowBytes + x0 * 4).assumingMemoryBound(to: UInt8.self)
    let code = planes.withUnsafeBufferPointer { p in
      strides.withUnsafeBufferPointer { s in
        orb_sws_scale_planes(
          sws, wanted.format, Int32(frame.width), Int32(frame.height), p.baseAddress, s.baseAddress, out,
          Int32(rowBytes), Int32(wanted.outWidth), Int32(wanted.outHeight), order == .bgra ? 1 : 0)
      }
    }
    return code >= 0
  }
}
