import CVulkan
import Foundation
import OrbDecode

/// The sampled images for one frame layout and size, and the staging buffer their bytes pass through.
/// 8-bit planes are R8/RG8, deeper ones R16/RG16 (UNORM): no precision is dropped before the shader.
/// Thread-safety: Unsafe; owned by a `Renderer`.
final class PlaneSet {
  struct Key: Equatable {
    var layout: VideoFrame.Layout
    var width: Int
    var height: Int
    var bytesPerComponent: Int

    init(_ frame: VideoFrame) {
      layout = frame.layout
      width = frame.width
      height = frame.height
      bytesPerComponent = frame.bytesPerComponent
    }

    init(layout: VideoFrame.Layout, width: Int, height: Int, bytesPerComponent: Int) {
      self.layout = layout
      self.width = width
      self.height = height
      self.bytesPerComponent = bytesPerComponent
    }

    /// Bound before any frame has arrived, so the descriptor set is always valid.
    static let placeholder = Key(layout: .planar420, width: 2, height: 2, bytesPerComponent: 1)
  }

  static let colorRange = VkImageSubresourceRange(
    aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0, layerCount: 1)

  let key: Key
  private let context: VulkanContext
  private let images: [GPUImage]
  private var staging: GPUBuffer?
  /// Where each plane starts in `staging`, and its row length in texels, from the last `stage`.
  private var regions: [(offset: Int, rowTexels: Int)] = []

  init(_ context: VulkanContext, key: Key) throws {
    self.context = context
    self.key = key
    let cw = (key.width + 1) / 2
    let ch = (key.height + 1) / 2
    let deep = key.bytesPerComponent == 2
    let one = deep ? VK_FORMAT_R16_UNORM : VK_FORMAT_R8_UNORM
    let two = deep ? VK_FORMAT_R16G16_UNORM : VK_FORMAT_R8G8_UNORM
    let usage = VK_IMAGE_USAGE_SAMPLED_BIT.rawValue | VK_IMAGE_USAGE_TRANSFER_DST_BIT.rawValue
    // Luma, and chroma as one interleaved CbCr image whatever the source layout: one sample gives both, which on a
    // software GPU costs a seventh less per pixel than sampling Cb and Cr apart.
    images = [
      try GPUImage(context, width: key.width, height: key.height, format: one, usage: usage),
      try GPUImage(context, width: cw, height: ch, format: two, usage: usage),
    ]
  }

  /// Points the renderer's descriptor set (bindings 0 and 1) at the Y and CbCr images.
  func bind(_ set: VkDescriptorSet, sampler: VkSampler) {
    var infos = images.map { image in
      VkDescriptorImageInfo(
        sampler: sampler, imageView: image.view, imageLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
    }
    infos.withUnsafeMutableBufferPointer { info in
      var writes = (0..<2).map { i -> VkWriteDescriptorSet in
        var w = VkWriteDescriptorSet()
        w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
        w.dstSet = set
        w.dstBinding = UInt32(i)
        w.descriptorCount = 1
        w.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER
        w.pImageInfo = UnsafePointer(info.baseAddress! + i)
        return w
      }
      vkUpdateDescriptorSets(context.device, 2, &writes, 0, nil)
    }
  }

  /// Copies the frame's planes into the staging buffer: luma (and interleaved chroma) as they are, their rows keeping
  /// their stride (the copy tells Vulkan it); separate Cb and Cr planes interleaved into CbCr rows.
  func stage(_ frame: VideoFrame) {
    let luma = frame.planes[0]
    let bpc = frame.bytesPerComponent
    let lumaBytes = (luma.stride * luma.height + 255) & ~255
    let chromaStride: Int
    let chromaHeight = frame.planes[1].height
    if frame.planes.count == 2 {
      chromaStride = frame.planes[1].stride
    } else {
      chromaStride = frame.planes[1].width * 2 * bpc
    }
    let size = lumaBytes + chromaStride * chromaHeight
    if staging == nil || staging!.size < size {
      staging = try? GPUBuffer(context, size: size, usage: VK_BUFFER_USAGE_TRANSFER_SRC_BIT.rawValue, hostVisible: true)
    }
    guard let base = staging?.mapped else {
      regions = []
      return
    }
    base.copyMemory(from: luma.base, byteCount: luma.stride * luma.height)
    let chroma = base + lumaBytes
    if frame.planes.count == 2 {
      chroma.copyMemory(from: frame.planes[1].base, byteCount: chromaStride * chromaHeight)
    } else if bpc == 1 {
      Self.interleave(frame.planes[1], frame.planes[2], into: chroma, stride: chromaStride, as: UInt8.self)
    } else {
      Self.interleave(frame.planes[1], frame.planes[2], into: chroma, stride: chromaStride, as: UInt16.self)
    }
    regions = [(0, luma.stride / bpc), (lumaBytes, chromaStride / (2 * bpc))]
  }

  /// Cb and Cr rows → CbCr rows.
  private static func interleave<T: FixedWidthInteger>(
    _ cb: VideoFrame.Plane, _ cr: VideoFrame.Plane, into out: UnsafeMutableRawPointer, stride: Int, as: T.Type
  ) {
    let width = cb.width
    for row in 0..<cb.height {
      let u = (cb.base + row * cb.stride).assumingMemoryBound(to: T.self)
      let v = (cr.base + row * cr.stride).assumingMemoryBound(to: T.self)
      let o = (out + row * stride).assumingMemoryBound(to: T.self)
      for x in 0..<width {
        o[2 * x] = u[x]
        o[2 * x + 1] = v[x]
      }
    }
  }

  /// Records the staging → image copies and the transitions around them.
  func recordUpload(_ cb: VkCommandBuffer) {
    guard let staging, regions.count == images.count else { return }
    var toTransfer = images.map {
      barrier(
        $0, from: VK_IMAGE_LAYOUT_UNDEFINED, to: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
        src: 0, dst: VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
    }
    vkCmdPipelineBarrier(
      cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue, VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue, 0, 0, nil, 0, nil,
      UInt32(toTransfer.count), &toTransfer)
    for (image, region) in zip(images, regions) {
      var copy = VkBufferImageCopy()
      copy.bufferOffset = VkDeviceSize(region.offset)
      copy.bufferRowLength = UInt32(region.rowTexels)
      copy.bufferImageHeight = 0
      copy.imageSubresource = VkImageSubresourceLayers(
        aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, mipLevel: 0, baseArrayLayer: 0, layerCount: 1)
      copy.imageExtent = VkExtent3D(width: UInt32(image.width), height: UInt32(image.height), depth: 1)
      vkCmdCopyBufferToImage(cb, staging.buffer, image.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy)
    }
    var toShader = images.map {
      barrier(
        $0, from: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
        to: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, src: VK_ACCESS_TRANSFER_WRITE_BIT.rawValue,
        dst: VK_ACCESS_SHADER_READ_BIT.rawValue)
    }
    vkCmdPipelineBarrier(
      cb, VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT.rawValue, 0, 0, nil, 0, nil,
      UInt32(toShader.count), &toShader)
  }

  private func barrier(
    _ image: GPUImage, from: VkImageLayout, to: VkImageLayout, src: VkAccessFlags,
    dst: VkAccessFlags
  ) -> VkImageMemoryBarrier {
    var b = VkImageMemoryBarrier()
    b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
    b.oldLayout = from
    b.newLayout = to
    b.srcAccessMask = src
    b.dstAccessMask = dst
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
    b.image = image.image
    b.subresourceRange = Self.colorRange
    return b
  }
}
