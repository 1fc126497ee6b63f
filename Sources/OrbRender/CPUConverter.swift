import CFFmpeg
import Foundation
import OrbDecode

/// Scales and converts pictures on the CPU with swscale (its SIMD code, in slices on several threads), straight into a
/// target's memory, letterbox included: on a Vulkan device that is itself the CPU (lavapipe), or with no device at
/// all, the fragment shader's per-pixel sampling costs several times what swscale does for the same picture.
/// SDR pictures become RGBA (or BGRA) at once. PQ and HLG pictures are only scaled, to 16-bit Y'CbCr 4:4:4, which
/// `CPUToneMapper` converts with the shader's own matrix and takes through the HDR table (swscale's fixed-point
/// conversion moved saturated colours, where the tone mapping is steep, by up to 7 codes). Wide-gamut SDR and rotated
/// pictures stay on the shader path.
/// Thread-safety: Unsafe; owned by the renderer's thread.
final class CPUConverter {
  private var sws: OpaquePointer?
  private var key: Key?
  /// For PQ and HLG: a context for each band thread of `CPUToneMapper` (no slice threads of their own), for `bandKey`.
  private var bandContexts: [OpaquePointer] = []
  private var bandKey: Key?
  /// Slice threads: the machine's cores, at most 4 (more buys nothing at 1080p and costs start-up).
  private let threads = Int32(max(1, min(4, ProcessInfo.processInfo.activeProcessorCount)))
  private let toneMapper: CPUToneMapper

  /// - Parameter tables: where full HDR tables are kept between runs (`HDRTableStore`); nil: made every time.
  init(tables: HDRTableStore? = nil) { toneMapper = CPUToneMapper(tables: tables) }

  private struct Key: Equatable {
    var format: Int32
    var width: Int
    var height: Int
    var outWidth: Int
    var outHeight: Int
    var outFormat: Int32
    var matrix: ColorInfo.Matrix
    var range: ColorInfo.Range
  }

  deinit {
    sws_freeContext(sws)
    for context in bandContexts { sws_freeContext(context) }
  }

  /// Waits (up to `timeout` seconds) for the full HDR table a worker is making (`CPUToneMapper.finishTable`).
  func finishTable(timeout: Double) { toneMapper.finishTable(timeout: timeout) }

  /// Whether HDR pictures are drawn with the full table, none being made (for tests).
  var hasFullTable: Bool { toneMapper.hasFullTable }

  /// Makes now the HDR table a picture tone-mapped with `params` is drawn with (`CPUToneMapper.prepareTable`).
  func prepareTable(params: ToneMapParams, variant: PipelineVariant) {
    toneMapper.prepareTable(params: params, variant: variant)
  }

  /// Whether `frame` can take this path: upright, in a format swscale reads, and SDR with BT.709-class primaries, or
  /// (with `hdr`) PQ or HLG.
  static func accepts(_ frame: VideoFrame, variant: PipelineVariant, hdr: Bool = false) -> Bool {
    frame.rotation == 0 && av_get_pix_fmt(frame.pixelFormatName).rawValue >= 0
      && (variant == .sdr || (hdr && CPUToneMapper.accepts(variant)))
  }

  /// Draws `frame` into `target` (a readable one) fitted into `rect`, black around it, its bytes in `order`; an HDR
  /// frame through the table `params` describes. False when swscale cannot (the caller draws on the GPU instead).
  func draw(
    _ frame: VideoFrame, into target: RenderTarget, rect: (x0: Int, y0: Int, x1: Int, y1: Int), order: PixelOrder,
    toneMap: (params: ToneMapParams, variant: PipelineVariant)? = nil
  ) -> Bool {
    guard let memory = target.mutablePixels else { return false }
    let width = target.width
    let height = target.height
    let x0 = max(0, min(width, rect.x0))
    let y0 = max(0, min(height, rect.y0))
    let x1 = max(x0, min(width, rect.x1))
    let y1 = max(y0, min(height, rect.y1))
    guard x1 > x0, y1 > y0 else { return false }
    let rowBytes = width * 4
    let out = memory.advanced(by: y0 * rowBytes + x0 * 4)
    if let toneMap {
      let format = orb_pix_fmt_yuv444p16()
      let wanted = key(for: frame, width: x1 - x0, height: y1 - y0, format: format)
      if bandKey != wanted {
        for context in bandContexts { sws_freeContext(context) }
        bandContexts = (0..<threads).compactMap { _ in context(for: wanted, color: frame.color, threads: 1) }
        bandKey = bandContexts.count == Int(threads) ? wanted : nil
      }
      guard bandKey != nil else { return false }
      // Each band thread uses its own context; the frame's planes are only read.
      nonisolated(unsafe) let contexts = bandContexts
      let drawn = toneMapper.draw(
        width: x1 - x0, height: y1 - y0, into: out, rowBytes: rowBytes, origin: (x0, y0), order: order,
        matrix: YUVMatrix(matrix: frame.color.matrix, range: frame.color.range, bitDepth: frame.bitDepth),
        bitDepth: frame.bitDepth, params: toneMap.params, variant: toneMap.variant, parts: contexts.count
      ) { part, first, rows, planes, strides in
        Self.convert(
          frame, with: contexts[part], key: wanted, into: planes, strides: strides, rows: first..<first + rows)
      }
      guard drawn else { return false }
    } else {
      var planes: [UnsafeMutablePointer<UInt8>?] = [out.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
      let strides: [Int32] = [Int32(rowBytes), 0, 0, 0]
      guard
        scale(
          frame, width: x1 - x0, height: y1 - y0, format: orb_pix_fmt_rgba(order == .bgra ? 1 : 0), planes: &planes,
          strides: strides)
      else { return false }
    }
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
    return true
  }

  private func key(for frame: VideoFrame, width: Int, height: Int, format: Int32) -> Key {
    Key(
      format: av_get_pix_fmt(frame.pixelFormatName).rawValue, width: frame.width, height: frame.height,
      outWidth: width, outHeight: height, outFormat: format, matrix: frame.color.matrix, range: frame.color.range)
  }

  /// A swscale context for `key`, with `threads` slice threads; nil when swscale cannot make one.
  private func context(for key: Key, color: ColorInfo, threads: Int32) -> OpaquePointer? {
    // RGB comes out full range; Y'CbCr keeps the source's range (it is only scaled).
    let full: Int32 = color.range == .full ? 1 : 0
    return orb_sws_context(
      key.format, Int32(key.width), Int32(key.height), Int32(key.outWidth), Int32(key.outHeight), key.outFormat,
      threads, color.matrix.swsColorspace, full, key.outFormat == orb_pix_fmt_yuv444p16() ? full : 1)
  }

  /// Scales and converts `frame` to `width`x`height` pixels of `format` into `planes`, `strides` bytes a row.
  private func scale(
    _ frame: VideoFrame, width: Int, height: Int, format: Int32, planes out: inout [UnsafeMutablePointer<UInt8>?],
    strides outStrides: [Int32]
  ) -> Bool {
    let wanted = key(for: frame, width: width, height: height, format: format)
    if key != wanted {
      sws_freeContext(sws)
      sws = context(for: wanted, color: frame.color, threads: threads)
      key = sws == nil ? nil : wanted
    }
    guard let sws else { return false }
    return Self.convert(frame, with: sws, key: wanted, into: out, strides: outStrides, rows: nil)
  }

  /// Runs `sws` (made for `key`) on `frame`: the whole picture into `out`, or only `rows` of it, written from the
  /// first of `out`'s rows on.
  private static func convert(
    _ frame: VideoFrame, with sws: OpaquePointer, key: Key, into out: [UnsafeMutablePointer<UInt8>?],
    strides outStrides: [Int32], rows: Range<Int>?
  ) -> Bool {
    var planes: [UnsafePointer<UInt8>?] = [nil, nil, nil, nil]
    var strides: [Int32] = [0, 0, 0, 0]
    for (i, plane) in frame.planes.prefix(4).enumerated() {
      planes[i] = plane.base.assumingMemoryBound(to: UInt8.self)
      strides[i] = Int32(plane.stride)
    }
    let (w, h) = (Int32(key.outWidth), Int32(key.outHeight))
    let code = planes.withUnsafeBufferPointer { p in
      strides.withUnsafeBufferPointer { s in
        out.withUnsafeBufferPointer { o in
          outStrides.withUnsafeBufferPointer { os in
            orb_sws_scale_planes(
              sws, key.format, Int32(key.width), Int32(key.height), p.baseAddress, s.baseAddress, key.outFormat,
              o.baseAddress, os.baseAddress, w, h, Int32(rows?.lowerBound ?? 0), Int32(rows?.count ?? 0))
          }
        }
      }
    }
    return code >= 0
  }
}
