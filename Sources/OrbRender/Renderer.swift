import CVulkan
import Foundation
import OrbDecode

/// Draws video frames into `RenderTarget`s: uploads the Y'CbCr planes, converts with the frame's matrix and
/// range, scales, rotates and letterboxes in the fragment shader (so a target is drawn at its own size, not the
/// video's). Each `render` call finishes on the GPU before it returns.
/// Thread-safety: Unsafe; owned by one thread (the render thread, or the caller of a headless mode).
public final class Renderer {
  public let context: VulkanContext
  private let device: VkDevice
  private let renderPass: VkRenderPass
  private let setLayout: VkDescriptorSetLayout
  private let pipelineLayout: VkPipelineLayout
  /// One pipeline per kind of stream (SDR, PQ, HLG, wide gamut; curve; plane layout), made on first use: the shader
  /// takes them as specialization constants, so each variant runs only its own code.
  private var pipelines: [PipelineVariant: VkPipeline] = [:]
  private let sampler: VkSampler
  private let descriptorPool: VkDescriptorPool
  private let descriptorSet: VkDescriptorSet
  private let commandPool: VkCommandPool
  private let commandBuffer: VkCommandBuffer
  private let fence: VkFence
  private var planes: PlaneSet?
  /// The HDR -> SDR table (shaders/hdrlut.glsl), made again when the stream's kind, curve or peaks change.
  private let table: GPUImage
  private let tableRenderPass: VkRenderPass
  private let tableFramebuffer: VkFramebuffer
  private var tablePipelines: [PipelineVariant: VkPipeline] = [:]
  /// Destroys what `init` made, once, in reverse order: when the renderer goes, or when `init` throws half-way.
  private let made: VulkanObjects
  private var tableKey: HDRTableKey?
  private var tableInitialized = false
  private var peaks = PeakTracking()
  /// The peak the last HDR picture was tone-mapped from, nits (nil for SDR): the metadata's, or the detected one.
  public private(set) var curvePeak: Double?
  /// Draw SDR pictures into readable targets with swscale on the CPU (`CPUConverter`) instead of the shader: what a
  /// CPU Vulkan device (lavapipe) wants; `prefersCPUConversion` says whether this one is.
  public var convertsOnCPU = false
  /// The byte order of pictures in readable targets' memory: swscale writes it directly, and a picture the GPU drew
  /// (always RGBA) is reordered in place after its readback. BGRA for a window that GTK draws with cairo.
  public var memoryPixelOrder = PixelOrder.rgba
  private lazy var cpu = CPUConverter()
  /// Whether the last `render` drew with swscale (else the shader).
  public private(set) var drewOnCPU = false

  /// Whether `frame` is drawn by swscale (given a readable target): `convertsOnCPU` is on and the picture is SDR and
  /// upright.
  public func convertsOnCPU(_ frame: VideoFrame, toneMapping: ToneMapping) -> Bool {
    convertsOnCPU && CPUConverter.accepts(frame, variant: PipelineVariant(frame: frame, toneMapping: toneMapping))
  }

  /// Whether the device is the CPU itself, where swscale converts SDR for a fraction of the shader's cost.
  public var prefersCPUConversion: Bool { context.deviceType == "cpu" }

  public init(context: VulkanContext? = nil) throws {
    let context = try context ?? VulkanContext()
    self.context = context
    device = context.device
    let device = context.device
    let made = VulkanObjects()

    // Render pass: one RGBA8 attachment, every pixel written by the shader, left in GENERAL so that
    // a copy to a buffer or an importer (GL) can read it without another transition.
    let renderPass = try PipelineBuilder.renderPass(
      device: device, format: VK_FORMAT_R8G8B8A8_UNORM, finalLayout: VK_IMAGE_LAYOUT_GENERAL)
    made.add { vkDestroyRenderPass(device, renderPass, nil) }
    self.renderPass = renderPass

    // Three combined image samplers: Y, CbCr, and the HDR table.
    var bindings = (0..<3).map { i -> VkDescriptorSetLayoutBinding in
      var b = VkDescriptorSetLayoutBinding()
      b.binding = UInt32(i)
      b.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER
      b.descriptorCount = 1
      b.stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT.rawValue
      return b
    }
    var setLayout: VkDescriptorSetLayout?
    try bindings.withUnsafeMutableBufferPointer { b in
      var info = VkDescriptorSetLayoutCreateInfo()
      info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
      info.bindingCount = 3
      info.pBindings = UnsafePointer(b.baseAddress)
      try vk(vkCreateDescriptorSetLayout(device, &info, nil, &setLayout), "vkCreateDescriptorSetLayout")
    }
    made.add { vkDestroyDescriptorSetLayout(device, setLayout, nil) }
    self.setLayout = setLayout!

    var pushRange = VkPushConstantRange(
      stageFlags: VK_SHADER_STAGE_FRAGMENT_BIT.rawValue, offset: 0,
      size: UInt32(MemoryLayout<Float>.stride * PushConstants.floatCount))
    var pipelineLayout: VkPipelineLayout?
    try withUnsafePointer(to: &pushRange) { range in
      try withUnsafePointer(to: &setLayout) { layouts in
        var info = VkPipelineLayoutCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
        info.setLayoutCount = 1
        info.pSetLayouts = layouts
        info.pushConstantRangeCount = 1
        info.pPushConstantRanges = range
        try vk(vkCreatePipelineLayout(device, &info, nil, &pipelineLayout), "vkCreatePipelineLayout")
      }
    }
    made.add { vkDestroyPipelineLayout(device, pipelineLayout, nil) }
    self.pipelineLayout = pipelineLayout!

    var samplerInfo = VkSamplerCreateInfo()
    samplerInfo.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO
    samplerInfo.magFilter = VK_FILTER_LINEAR
    samplerInfo.minFilter = VK_FILTER_LINEAR
    samplerInfo.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST
    samplerInfo.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
    samplerInfo.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
    samplerInfo.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
    var sampler: VkSampler?
    try vk(vkCreateSampler(device, &samplerInfo, nil, &sampler), "vkCreateSampler")
    made.add { vkDestroySampler(device, sampler, nil) }
    self.sampler = sampler!

    var poolSize = VkDescriptorPoolSize(type: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount: 3)
    var pool: VkDescriptorPool?
    try withUnsafePointer(to: &poolSize) { size in
      var info = VkDescriptorPoolCreateInfo()
      info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
      info.maxSets = 1
      info.poolSizeCount = 1
      info.pPoolSizes = size
      try vk(vkCreateDescriptorPool(device, &info, nil, &pool), "vkCreateDescriptorPool")
    }
    made.add { vkDestroyDescriptorPool(device, pool, nil) }
    descriptorPool = pool!
    var set: VkDescriptorSet?
    try withUnsafePointer(to: &setLayout) { layouts in
      var info = VkDescriptorSetAllocateInfo()
      info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO
      info.descriptorPool = pool
      info.descriptorSetCount = 1
      info.pSetLayouts = layouts
      try vk(vkAllocateDescriptorSets(device, &info, &set), "vkAllocateDescriptorSets")
    }
    descriptorSet = set!

    var cpInfo = VkCommandPoolCreateInfo()
    cpInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
    cpInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT.rawValue
    cpInfo.queueFamilyIndex = context.queueFamily
    var commandPool: VkCommandPool?
    try vk(vkCreateCommandPool(device, &cpInfo, nil, &commandPool), "vkCreateCommandPool")
    made.add { vkDestroyCommandPool(device, commandPool, nil) }
    self.commandPool = commandPool!
    var cbInfo = VkCommandBufferAllocateInfo()
    cbInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
    cbInfo.commandPool = commandPool
    cbInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY
    cbInfo.commandBufferCount = 1
    var commandBuffer: VkCommandBuffer?
    try vk(vkAllocateCommandBuffers(device, &cbInfo, &commandBuffer), "vkAllocateCommandBuffers")
    self.commandBuffer = commandBuffer!
    var fenceInfo = VkFenceCreateInfo()
    fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO
    var fence: VkFence?
    try vk(vkCreateFence(device, &fenceInfo, nil, &fence), "vkCreateFence")
    made.add { vkDestroyFence(device, fence, nil) }
    self.fence = fence!

    table = try GPUImage(
      context, width: HDRTableKey.atlasSize, height: HDRTableKey.atlasSize, format: VK_FORMAT_R16G16B16A16_UNORM,
      usage: VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT.rawValue | VK_IMAGE_USAGE_SAMPLED_BIT.rawValue)
    let tableRenderPass = try PipelineBuilder.renderPass(
      device: device, format: VK_FORMAT_R16G16B16A16_UNORM, finalLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
    made.add { vkDestroyRenderPass(device, tableRenderPass, nil) }
    self.tableRenderPass = tableRenderPass
    var tableView: VkImageView? = table.view
    var fbInfo = VkFramebufferCreateInfo()
    fbInfo.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO
    fbInfo.renderPass = tableRenderPass
    fbInfo.attachmentCount = 1
    fbInfo.width = UInt32(HDRTableKey.atlasSize)
    fbInfo.height = UInt32(HDRTableKey.atlasSize)
    fbInfo.layers = 1
    var tableFramebuffer: VkFramebuffer?
    try withUnsafePointer(to: &tableView) { v in
      fbInfo.pAttachments = v
      try vk(vkCreateFramebuffer(device, &fbInfo, nil, &tableFramebuffer), "vkCreateFramebuffer (HDR table)")
    }
    // The framebuffer goes before the table image it shows (the closure holds the image until then).
    let table = self.table
    made.add {
      vkDestroyFramebuffer(device, tableFramebuffer, nil)
      _ = table
    }
    self.tableFramebuffer = tableFramebuffer!
    var tableInfo = VkDescriptorImageInfo(
      sampler: sampler, imageView: table.view, imageLayout: VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
    withUnsafePointer(to: &tableInfo) { info in
      var write = VkWriteDescriptorSet()
      write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
      write.dstSet = set
      write.dstBinding = 2
      write.descriptorCount = 1
      write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER
      write.pImageInfo = info
      vkUpdateDescriptorSets(device, 1, &write, 0, nil)
    }
    self.made = made
  }

  deinit {
    vkDeviceWaitIdle(device)
    planes = nil
    for pipeline in pipelines.values { vkDestroyPipeline(device, pipeline, nil) }
    for pipeline in tablePipelines.values { vkDestroyPipeline(device, pipeline, nil) }
    // What init made goes with `made`, in reverse order of making.
  }

  /// A target of `width`x`height` pixels. `exportable`: its memory can be imported by GL (zero-copy);
  /// `readable`: each render also copies its pixels to host memory (`RenderTarget.pixels`).
  public func makeTarget(width: Int, height: Int, exportable: Bool = false, readable: Bool = false) throws
    -> RenderTarget
  {
    // A window (or --size) larger than the device allows is drawn at the largest size it takes.
    let limit = context.maxImageSize
    return try RenderTarget(
      context, renderPass: renderPass, width: min(limit, max(1, width)), height: min(limit, max(1, height)),
      exportable: exportable, readable: readable)
  }

  /// Draws `frame` fitted into `target` (black bars around it); nil draws a black picture. HDR and wide-gamut frames
  /// are tone-mapped and gamut-mapped to SDR BT.709 as `toneMapping` says.
  public func render(
    _ frame: VideoFrame?, into target: RenderTarget, toneMapping: ToneMapping = ToneMapping()
  ) throws {
    if let frame, target.mutablePixels != nil, convertsOnCPU(frame, toneMapping: toneMapping) {
      let geometry = VideoGeometry(
        displayAspect: frame.displayAspect, rotation: frame.rotation, width: target.width, height: target.height)
      if cpu.draw(frame, into: target, rect: geometry.rect, order: memoryPixelOrder) {
        curvePeak = nil
        drewOnCPU = true
        return
      }
    }
    drewOnCPU = false
    // Targets of plain memory come from `FrameDrawer`, which draws them with swscale or copies into them.
    guard let gpu = target.gpu else { preconditionFailure("the Vulkan renderer drew into a target of plain memory") }
    let planes = try planeSet(for: frame)
    let params: PushConstants
    var variant = PipelineVariant.sdr
    if let frame {
      planes.stage(frame)
      let geometry = VideoGeometry(
        displayAspect: frame.displayAspect, rotation: frame.rotation, width: target.width, height: target.height)
      variant = PipelineVariant(frame: frame, toneMapping: toneMapping)
      params = PushConstants(
        frame: frame, geometry: geometry, toneMap: toneMapParams(for: frame, toneMapping: toneMapping))
    } else {
      params = PushConstants.black
    }
    let pipeline = try self.pipeline(variant)

    try vk(vkResetFences(device, 1, [fence]), "vkResetFences")
    try vk(vkResetCommandBuffer(commandBuffer, 0), "vkResetCommandBuffer")
    var begin = VkCommandBufferBeginInfo()
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT.rawValue
    try vk(vkBeginCommandBuffer(commandBuffer, &begin), "vkBeginCommandBuffer")
    if frame != nil { planes.recordUpload(commandBuffer) }
    if variant.mode != 0 {
      try recordTable(HDRTableKey(variant: variant, hdr: Array(params.values[28...31])))
    } else if !tableInitialized {
      recordTableLayout()
    }

    var rpBegin = VkRenderPassBeginInfo()
    rpBegin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO
    rpBegin.renderPass = renderPass
    rpBegin.framebuffer = gpu.framebuffer
    rpBegin.renderArea = VkRect2D(
      offset: VkOffset2D(x: 0, y: 0), extent: VkExtent2D(width: UInt32(target.width), height: UInt32(target.height)))
    vkCmdBeginRenderPass(commandBuffer, &rpBegin, VK_SUBPASS_CONTENTS_INLINE)
    var viewport = VkViewport(
      x: 0, y: 0, width: Float(target.width), height: Float(target.height), minDepth: 0, maxDepth: 1)
    vkCmdSetViewport(commandBuffer, 0, 1, &viewport)
    var scissor = rpBegin.renderArea
    vkCmdSetScissor(commandBuffer, 0, 1, &scissor)
    vkCmdBindPipeline(commandBuffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
    var set: VkDescriptorSet? = descriptorSet
    vkCmdBindDescriptorSets(commandBuffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipelineLayout, 0, 1, &set, 0, nil)
    params.values.withUnsafeBytes { bytes in
      vkCmdPushConstants(
        commandBuffer, pipelineLayout, VK_SHADER_STAGE_FRAGMENT_BIT.rawValue, 0, UInt32(bytes.count),
        bytes.baseAddress)
    }
    vkCmdDraw(commandBuffer, 3, 1, 0, 0)
    vkCmdEndRenderPass(commandBuffer)

    if let readback = gpu.readback {
      var barrier = VkImageMemoryBarrier()
      barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
      barrier.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT.rawValue
      barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT.rawValue
      barrier.oldLayout = VK_IMAGE_LAYOUT_GENERAL
      barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL
      barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
      barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
      barrier.image = gpu.image.image
      barrier.subresourceRange = PlaneSet.colorRange
      vkCmdPipelineBarrier(
        commandBuffer, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue, VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue,
        0, 0, nil, 0, nil, 1, &barrier)
      var region = VkBufferImageCopy()
      region.imageSubresource = VkImageSubresourceLayers(
        aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, mipLevel: 0, baseArrayLayer: 0, layerCount: 1)
      region.imageExtent = VkExtent3D(width: UInt32(target.width), height: UInt32(target.height), depth: 1)
      vkCmdCopyImageToBuffer(
        commandBuffer, gpu.image.image, VK_IMAGE_LAYOUT_GENERAL, readback.buffer, 1, &region)
      var hostBarrier = VkMemoryBarrier()
      hostBarrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
      hostBarrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT.rawValue
      hostBarrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT.rawValue
      vkCmdPipelineBarrier(
        commandBuffer, VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue, VK_PIPELINE_STAGE_HOST_BIT.rawValue, 0, 1,
        &hostBarrier, 0, nil, 0, nil)
    }
    try vk(vkEndCommandBuffer(commandBuffer), "vkEndCommandBuffer")

    var cb: VkCommandBuffer? = commandBuffer
    var submit = VkSubmitInfo()
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO
    submit.commandBufferCount = 1
    try withUnsafePointer(to: &cb) { cbs in
      submit.pCommandBuffers = cbs
      try vk(vkQueueSubmit(context.queue, 1, &submit, fence), "vkQueueSubmit")
    }
    try vk(vkWaitForFences(device, 1, [fence], VkBool32(VK_TRUE), UInt64.max), "vkWaitForFences")
    if memoryPixelOrder == .bgra, let memory = target.mutablePixels {
      PixelOrder.swapRedAndBlue(memory, count: target.width * target.height)
    }
  }

  /// The plane images for `frame`'s layout and size, made anew (and bound) when they change.
  private func planeSet(for frame: VideoFrame?) throws -> PlaneSet {
    let key = frame.map(PlaneSet.Key.init) ?? PlaneSet.Key.placeholder
    if let planes, planes.key == key || frame == nil { return planes }
    let made = try PlaneSet(context, key: key)
    made.bind(descriptorSet, sampler: sampler)
    planes = made
    return made
  }

  private func pipeline(_ variant: PipelineVariant) throws -> VkPipeline {
    if let made = pipelines[variant] { return made }
    let made = try PipelineBuilder.pipeline(
      device: device, layout: pipelineLayout, renderPass: renderPass, fragment: ShaderCode.videoFrag, variant: variant)
    pipelines[variant] = made
    return made
  }

  /// The tone-mapping parameters for `frame` (nil for SDR), with the peak measured in it and the pictures before it
  /// when `peakDetect` is on.
  private func toneMapParams(for frame: VideoFrame, toneMapping: ToneMapping) -> ToneMapParams? {
    let params = peaks.params(for: frame, toneMapping: toneMapping)
    curvePeak = params?.sourcePeak
    return params
  }

  /// Records the drawing of the HDR table for `key`, unless the one it holds serves; leaves it ready to sample.
  private func recordTable(_ key: HDRTableKey) throws {
    if let tableKey, tableKey.serves(key) { return }
    let tableVariant = PipelineVariant(
      mode: key.variant.mode, curve: key.variant.curve, fromBT2020: key.variant.fromBT2020)
    let pipeline: VkPipeline
    if let made = tablePipelines[tableVariant] {
      pipeline = made
    } else {
      pipeline = try PipelineBuilder.pipeline(
        device: device, layout: pipelineLayout, renderPass: tableRenderPass, fragment: ShaderCode.hdrlutFrag,
        variant: tableVariant)
      tablePipelines[tableVariant] = pipeline
    }
    let size = UInt32(HDRTableKey.atlasSize)
    var begin = VkRenderPassBeginInfo()
    begin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO
    begin.renderPass = tableRenderPass
    begin.framebuffer = tableFramebuffer
    begin.renderArea = VkRect2D(offset: VkOffset2D(x: 0, y: 0), extent: VkExtent2D(width: size, height: size))
    vkCmdBeginRenderPass(commandBuffer, &begin, VK_SUBPASS_CONTENTS_INLINE)
    var viewport = VkViewport(x: 0, y: 0, width: Float(size), height: Float(size), minDepth: 0, maxDepth: 1)
    vkCmdSetViewport(commandBuffer, 0, 1, &viewport)
    var scissor = begin.renderArea
    vkCmdSetScissor(commandBuffer, 0, 1, &scissor)
    vkCmdBindPipeline(commandBuffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
    var values = [Float](repeating: 0, count: PushConstants.floatCount)
    values.replaceSubrange(28...31, with: key.hdr)
    values.withUnsafeBytes { bytes in
      vkCmdPushConstants(
        commandBuffer, pipelineLayout, VK_SHADER_STAGE_FRAGMENT_BIT.rawValue, 0, UInt32(bytes.count),
        bytes.baseAddress)
    }
    vkCmdDraw(commandBuffer, 3, 1, 0, 0)
    vkCmdEndRenderPass(commandBuffer)
    // The video pass samples what this pass wrote.
    var barrier = VkMemoryBarrier()
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
    barrier.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT.rawValue
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT.rawValue
    vkCmdPipelineBarrier(
      commandBuffer, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue,
      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT.rawValue, 0, 1, &barrier, 0, nil, 0, nil)
    tableKey = key
    tableInitialized = true
  }

  /// Puts the (unused) table in the layout the descriptor names, for SDR streams that never draw it.
  private func recordTableLayout() {
    var barrier = VkImageMemoryBarrier()
    barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
    barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED
    barrier.newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT.rawValue
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
    barrier.image = table.image
    barrier.subresourceRange = PlaneSet.colorRange
    vkCmdPipelineBarrier(
      commandBuffer, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT.rawValue, 0, 0,
      nil, 0, nil, 1, &barrier)
    tableInitialized = true
  }
}
