import CVulkan
import Foundation

/// An RGBA8 image the renderer draws a whole picture into (letterbox included), with what is needed to
/// hand it on: an exportable fd for GL (zero-copy), or a host-visible copy of its pixels.
/// Thread-safety: Unsafe; drawn by the render thread; `pixels` may be read by another thread only while the
/// render thread does not draw into this target (the player's slot ring guarantees it).
public final class RenderTarget: @unchecked Sendable {
  public let width: Int
  public let height: Int
  let image: GPUImage
  let framebuffer: VkFramebuffer
  let readback: GPUBuffer?
  private let context: VulkanContext

  init(_ context: VulkanContext, renderPass: VkRenderPass, width: Int, height: Int, exportable: Bool, readable: Bool)
    throws
  {
    self.context = context
    self.width = width
    self.height = height
    let usage =
      VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT.rawValue | VK_IMAGE_USAGE_TRANSFER_SRC_BIT.rawValue
      | VK_IMAGE_USAGE_SAMPLED_BIT.rawValue
    image = try GPUImage(
      context, width: width, height: height, format: VK_FORMAT_R8G8B8A8_UNORM, usage: usage,
      exportable: exportable && context.canExportMemory)
    var view: VkImageView? = image.view
    var info = VkFramebufferCreateInfo()
    info.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO
    info.renderPass = renderPass
    info.attachmentCount = 1
    info.width = UInt32(width)
    info.height = UInt32(height)
    info.layers = 1
    var framebuffer: VkFramebuffer?
    let result = withUnsafePointer(to: &view) { v -> VkResult in
      info.pAttachments = v
      return vkCreateFramebuffer(context.device, &info, nil, &framebuffer)
    }
    try vk(result, "vkCreateFramebuffer")
    do {
      readback =
        readable
        ? try GPUBuffer(
          context, size: width * height * 4, usage: VK_BUFFER_USAGE_TRANSFER_DST_BIT.rawValue,
          hostVisible: true)
        : nil
    } catch {
      vkDestroyFramebuffer(context.device, framebuffer, nil)
      throw error
    }
    self.framebuffer = framebuffer!
  }

  deinit { vkDestroyFramebuffer(context.device, framebuffer, nil) }

  /// Whether GL can import this target's memory.
  public var isExportable: Bool { image.exportable }
  /// Bytes of the image's allocation, for the importer.
  public var allocationSize: UInt64 { image.allocationSize }
  /// A new fd for the image's memory; the caller owns it (GL takes ownership on import).
  public func exportMemoryFd() -> Int32? { image.exportFd() }

  /// The readback memory to write a picture into directly (readable targets only): `CPUConverter` draws there.
  var mutablePixels: UnsafeMutableRawPointer? { readback?.mapped }

  /// The last drawn picture as tightly packed 8-bit rows in the renderer's `memoryPixelOrder`, top row first
  /// (readable targets only).
  public var pixels: UnsafeRawBufferPointer? {
    guard let readback, let base = readback.mapped else { return nil }
    return UnsafeRawBufferPointer(start: base, count: width * height * 4)
  }
}

/// The order of the four bytes of a pixel in memory. BGRA is what cairo draws from directly (its ARGB32 on a
/// little-endian machine), with no conversion.
public enum PixelOrder: Sendable, Equatable {
  case rgba
  case bgra

  /// Swaps the first and third byte of each of the `count` 4-byte pixels at `pixels`: RGBA ⇄ BGRA, in place.
  public static func swapRedAndBlue(_ pixels: UnsafeMutableRawPointer, count: Int) {
    let words = pixels.bindMemory(to: UInt32.self, capacity: count)
    for i in 0..<count {
      let v = UInt32(littleEndian: words[i])
      words[i] = ((v & 0xFF00_FF00) | ((v & 0xFF) << 16) | ((v >> 16) & 0xFF)).littleEndian
    }
  }
}
