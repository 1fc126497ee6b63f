import CFFmpeg

extension SubtitleBitmap {
  /// The picture of a SUBTITLE_BITMAP rect: `data[0]` holds one palette index a pixel (`linesize[0]` bytes a row),
  /// `data[1]` the palette, `nb_colors` 32-bit ARGB words in native byte order, straight alpha. Nil for a rect
  /// without a picture or with a broken palette.
  init?(rect: AVSubtitleRect, canvasWidth: Int, canvasHeight: Int) {
    let width = Int(rect.w)
    let height = Int(rect.h)
    let colors = Int(rect.nb_colors)
    let stride = Int(rect.linesize.0)
    guard width > 0, height > 0, stride >= width, (1...256).contains(colors), let indices = rect.data.0,
      let paletteBytes = rect.data.1
    else { return nil }
    var palette = [UInt8](repeating: 0, count: 256 * 4)  // indices past nb_colors are transparent
    paletteBytes.withMemoryRebound(to: UInt32.self, capacity: colors) { argb in
      for i in 0..<colors {
        let c = argb[i]
        palette[i * 4] = UInt8(truncatingIfNeeded: c >> 16)
        palette[i * 4 + 1] = UInt8(truncatingIfNeeded: c >> 8)
        palette[i * 4 + 2] = UInt8(truncatingIfNeeded: c)
        palette[i * 4 + 3] = UInt8(truncatingIfNeeded: c >> 24)
      }
    }
    var rgba = [UInt8](repeating: 0, count: width * height * 4)
    rgba.withUnsafeMutableBufferPointer { out in
      for row in 0..<height {
        let source = indices + row * stride
        for column in 0..<width {
          let p = Int(source[column]) * 4
          let o = (row * width + column) * 4
          out[o] = palette[p]
          out[o + 1] = palette[p + 1]
          out[o + 2] = palette[p + 2]
          out[o + 3] = palette[p + 3]
        }
      }
    }
    self.init(
      x: Int(rect.x), y: Int(rect.y), width: width, height: height, canvasWidth: canvasWidth,
      canvasHeight: canvasHeight, rgba: rgba)
  }
}
