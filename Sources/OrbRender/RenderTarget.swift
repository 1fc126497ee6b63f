import CVulkan
import Foundation

/// An RGBA8 picture the renderer draws a whole frame into (letterbox included), with what is needed to hand it on:
/// an image on the Vulkan device (with an exportable fd for GL, zero-copy, or a host-visible copy of its pixels),
/// or plain memory alone, which swscale writes and a cairo window paints, with no Vulkan device at all.
/// Thread-safety: Unsafe; drawn by the render thread; `pixels` may be read by another thread only while the
/// render thread does not draw into this target (the player's slot ring guarantees it).
public final class RenderTarget: @unchecked Sendable {
  public let width: Int
  public let height: Int
  /// The Vulkan image and what draws into it and reads it back; nil for a target of plain memory.
  let gpu: GPUParts?
  /// The pixels of a target of plain memory (`width * height * 4` bytes, a mapping of their own); nil for a Vulkan
  /// one.
  private let memory: UnsafeMutableRawPointer?

  struct GPUParts {
    let image: GPUImage
    let framebuffer: VkFramebuffer
    let readback: GPUBuffer?
    let context: VulkanContext
  }

  init(_ context: VulkanContext, renderPass: VkRenderPass, width: Int, height: Int, exportable: Bool, readable: Bool)
    throws
  {
    self.width = width
    self.height = height
    memory = nil
    let usage =
      VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT.rawValue | VK_IMAGE_USAGE_TRANSFER_SRC_BIT.rawValue
      | VK_IMAGE_USAGE_SAMPLED_BIT.rawValue
    let image = try GPUImage(
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
    let readback: GPUBuffer?
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
    gpu = GPUParts(image: image, framebuffer: framebuffer!, readback: readback, context: context)
  }

  /// A target of plain memory: no Vulkan object at all. Every drawing writes each of its pixels (the picture and its
  /// black letterbox; `render(nil)` draws black), and none is shown before it is drawn, so its pages are left untouched
  /// until the first picture drawn into it: filled black ahead, the ring's three window-sized targets faulted 2,700
  /// pages in on the render thread before the first picture could be drawn. Its pixels are a mapping of their own, so
  /// they go back to the system the moment the target goes (a resize makes a new ring): malloc would keep such blocks
  /// in its heap once it has seen one freed (glibc raises its mmap threshold to the size freed), and the process would
  /// keep the largest ring it ever had.
  public init(memoryWidth width: Int, height: Int) {
    self.width = max(1, width)
    self.height = max(1, height)
    gpu = nil
    let bytes = self.width * self.height * 4
    guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
      mapped != MAP_FAILED
    else { fatalError("out of memory for a \(self.width)x\(self.height) picture (\(bytes) bytes)") }
    memory = mapped
  }

  /// Makes a target of plain memory all opaque black (either byte order).
  func fillBlack() {
    guard let memory else { return }
    let count = width * height
    memory.bindMemory(to: UInt32.self, capacity: count).initialize(
      repeating: UInt32(0xFF00_0000).littleEndian, count: count)
  }

  deinit {
    if let gpu { vkDestroyFramebuffer(gpu.context.device, gpu.framebuffer, nil) }
    if let memory { munmap(memory, width * height * 4) }
  }

  /// Whether the target is plain memory, with nothing on a Vulkan device.
  var isMemoryOnly: Bool { gpu == nil }

  /// Whether GL can import this target's memory.
  public var isExportable: Bool { gpu?.image.exportable ?? false }
  /// Bytes of the image's allocation, for the importer.
  public var allocationSize: UInt64 { gpu?.image.allocationSize ?? 0 }
  /// A new fd for the image's memory; the caller owns it (GL takes ownership on import).
  public func exportMemoryFd() -> Int32? { gpu?.image.exportFd() }

  /// The memory to write a picture into directly (readable and plain-memory targets): `CPUConverter` draws there.
  var mutablePixels: UnsafeMutableRawPointer? { memory ?? gpu?.readback?.mapped }

  /// The last drawn picture as tightly packed 8-bit rows in the renderer's `memoryPixelOrder`, top row first
  /// (readable and plain-memory targets).
  public var pixels: UnsafeRawBufferPointer? {
    guard let base = mutablePixels else { return nil }
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
