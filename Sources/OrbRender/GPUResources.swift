import CVulkan
import Foundation

/// A VkBuffer with its own memory; host-visible buffers stay mapped. Frees both once.
/// Thread-safety: Unsafe; used by the render thread.
final class GPUBuffer {
  let context: VulkanContext
  let buffer: VkBuffer
  let memory: VkDeviceMemory
  let size: Int
  /// The mapping of a host-visible buffer.
  let mapped: UnsafeMutableRawPointer?

  init(_ context: VulkanContext, size: Int, usage: VkBufferUsageFlags, hostVisible: Bool) throws {
    self.context = context
    self.size = size
    let device = context.device
    var info = VkBufferCreateInfo()
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
    info.size = VkDeviceSize(size)
    info.usage = usage
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
    var buffer: VkBuffer?
    try vk(vkCreateBuffer(device, &info, nil, &buffer), "vkCreateBuffer")
    var requirements = VkMemoryRequirements()
    vkGetBufferMemoryRequirements(device, buffer, &requirements)
    let required: VkMemoryPropertyFlags =
      hostVisible
      ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT.rawValue | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT.rawValue
      : 0
    let preferred: VkMemoryPropertyFlags =
      hostVisible ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT.rawValue : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT.rawValue
    guard let type = context.memoryType(bits: requirements.memoryTypeBits, required: required, preferred: preferred)
    else {
      vkDestroyBuffer(device, buffer, nil)
      throw VulkanError(call: "memory type for a buffer", result: VK_ERROR_FEATURE_NOT_PRESENT.rawValue)
    }
    var alloc = VkMemoryAllocateInfo()
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
    alloc.allocationSize = requirements.size
    alloc.memoryTypeIndex = type
    var memory: VkDeviceMemory?
    let result = vkAllocateMemory(device, &alloc, nil, &memory)
    guard result == VK_SUCCESS else {
      vkDestroyBuffer(device, buffer, nil)
      throw VulkanError(call: "vkAllocateMemory", result: result.rawValue)
    }
    try vk(vkBindBufferMemory(device, buffer, memory, 0), "vkBindBufferMemory")
    var pointer: UnsafeMutableRawPointer?
    if hostVisible {
      let mapped = vkMapMemory(device, memory, 0, VkDeviceSize(VK_WHOLE_SIZE), 0, &pointer)
      guard mapped == VK_SUCCESS else {
        vkDestroyBuffer(device, buffer, nil)
        vkFreeMemory(device, memory, nil)
        throw VulkanError(call: "vkMapMemory", result: mapped.rawValue)
      }
    }
    self.buffer = buffer!
    self.memory = memory!
    mapped = pointer
  }

  deinit {
    if mapped != nil { vkUnmapMemory(context.device, memory) }
    vkDestroyBuffer(context.device, buffer, nil)
    vkFreeMemory(context.device, memory, nil)
  }
}

/// A 2D VkImage with its memory and a view; optionally allocated so its memory can be exported as an fd.
/// Thread-safety: Unsafe; used by the render thread.
final class GPUImage {
  let context: VulkanContext
  let image: VkImage
  let memory: VkDeviceMemory
  let view: VkImageView
  let width: Int
  let height: Int
  let format: VkFormat
  /// Bytes of the allocation (what an importer must be told).
  let allocationSize: UInt64
  let exportable: Bool

  init(
    _ context: VulkanContext, width: Int, height: Int, format: VkFormat, usage: VkImageUsageFlags,
    exportable: Bool = false
  ) throws {
    self.context = context
    self.width = width
    self.height = height
    self.format = format
    self.exportable = exportable
    let device = context.device
    var external = VkExternalMemoryImageCreateInfo()
    external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT.rawValue
    var info = VkImageCreateInfo()
    info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO
    info.imageType = VK_IMAGE_TYPE_2D
    info.format = format
    info.extent = VkExtent3D(width: UInt32(width), height: UInt32(height), depth: 1)
    info.mipLevels = 1
    info.arrayLayers = 1
    info.samples = VK_SAMPLE_COUNT_1_BIT
    info.tiling = VK_IMAGE_TILING_OPTIMAL
    info.usage = usage
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
    var image: VkImage?
    let created = withUnsafeMutablePointer(to: &external) { ext -> VkResult in
      if exportable { info.pNext = UnsafeRawPointer(ext) }
      return vkCreateImage(device, &info, nil, &image)
    }
    try vk(created, "vkCreateImage")
    var requirements = VkMemoryRequirements()
    vkGetImageMemoryRequirements(device, image, &requirements)
    guard
      let type = context.memoryType(
        bits: requirements.memoryTypeBits, required: 0, preferred: VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT.rawValue)
    else {
      vkDestroyImage(device, image, nil)
      throw VulkanError(call: "memory type for an image", result: VK_ERROR_FEATURE_NOT_PRESENT.rawValue)
    }
    // Exported memory is a dedicated allocation, so an importer sees exactly this image.
    var dedicated = VkMemoryDedicatedAllocateInfo()
    dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO
    dedicated.image = image
    var export = VkExportMemoryAllocateInfo()
    export.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO
    export.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT.rawValue
    var alloc = VkMemoryAllocateInfo()
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
    alloc.allocationSize = requirements.size
    alloc.memoryTypeIndex = type
    var memory: VkDeviceMemory?
    let allocated = withUnsafeMutablePointer(to: &dedicated) { ded -> VkResult in
      withUnsafeMutablePointer(to: &export) { exp -> VkResult in
        if exportable {
          exp.pointee.pNext = UnsafeRawPointer(ded)
          alloc.pNext = UnsafeRawPointer(exp)
        }
        return vkAllocateMemory(device, &alloc, nil, &memory)
      }
    }
    guard allocated == VK_SUCCESS else {
      vkDestroyImage(device, image, nil)
      throw VulkanError(call: "vkAllocateMemory (image)", result: allocated.rawValue)
    }
    try vk(vkBindImageMemory(device, image, memory, 0), "vkBindImageMemory")
    allocationSize = UInt64(requirements.size)

    var viewInfo = VkImageViewCreateInfo()
    viewInfo.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO
    viewInfo.image = image
    viewInfo.viewType = VK_IMAGE_VIEW_TYPE_2D
    viewInfo.format = format
    viewInfo.subresourceRange = VkImageSubresourceRange(
      aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0,
      layerCount: 1)
    var view: VkImageView?
    let viewResult = vkCreateImageView(device, &viewInfo, nil, &view)
    guard viewResult == VK_SUCCESS else {
      vkDestroyImage(device, image, nil)
      vkFreeMemory(device, memory, nil)
      throw VulkanError(call: "vkCreateImageView", result: viewResult.rawValue)
    }
    self.image = image!
    self.memory = memory!
    self.view = view!
  }

  deinit {
    vkDestroyImageView(context.device, view, nil)
    vkDestroyImage(context.device, image, nil)
    vkFreeMemory(context.device, memory, nil)
  }

  /// A new fd for this image's memory (the caller owns it), or nil when it was not allocated exportable.
  func exportFd() -> Int32? {
    guard exportable else { return nil }
    var info = VkMemoryGetFdInfoKHR()
    info.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR
    info.memory = memory
    info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT
    var fd: Int32 = -1
    guard orb_vk_get_memory_fd(context.device, &info, &fd) == VK_SUCCESS, fd >= 0 else { return nil }
    return fd
  }
}
