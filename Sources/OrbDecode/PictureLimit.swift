import Foundation

/// The largest picture the player decodes: each side within what the GPU can hold as a texture, and the whole
/// within what memory can hold for the frames in flight. Bigger pictures are refused before FFmpeg allocates them.
/// Thread-safety: a value type.
public struct PictureLimit: Sendable, Equatable {
  /// Pixels per side (the Vulkan device's `maxImageDimension2D`).
  public var maxSide: Int
  /// Pixels in all.
  public var maxPixels: Int

  public init(maxSide: Int, maxPixels: Int) {
    self.maxSide = maxSide
    self.maxPixels = maxPixels
  }

  /// For a device whose images may be `maxSide` pixels wide: twice 8K UHD at most (about 67 megapixels, 200 MB a
  /// 16-bit frame), and less when the machine's memory could not hold some 32 such frames (decoder threads,
  /// the frame queue, the reference frames) in a quarter of it.
  public static func forDevice(maxSide: Int) -> PictureLimit {
    let memory = Int(clamping: ProcessInfo.processInfo.physicalMemory)
    let byMemory = memory / 4 / 32 / 3  // 16-bit 4:2:0 is 3 bytes a pixel
    return PictureLimit(maxSide: maxSide, maxPixels: max(1920 * 1080, min(8192 * 8192, byMemory)))
  }

  /// Before any device is known (probing): the limits of the largest common GPUs.
  public static let standard = PictureLimit.forDevice(maxSide: 16384)

  /// Why a `width`x`height` picture cannot be played, or nil when it can.
  public func refusal(width: Int, height: Int) -> String? {
    guard width > 0, height > 0 else { return nil }
    if width > maxSide || height > maxSide || width * height > maxPixels {
      let megapixels = Int((Double(maxPixels) / 1e6).rounded())
      return "its picture is \(width)x\(height) pixels, larger than this machine can show "
        + "(at most \(maxSide) on a side and \(megapixels) megapixels)"
    }
    return nil
  }
}
