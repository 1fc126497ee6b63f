import CVulkan
import Foundation
import OrbDecode

/// Draws video frames into `RenderTarget`s: uploads the Y'CbCr planes, converts with the frame's matrix and
/// range, scales, rotates and letterboxes in the fragment shader (so a target is drawn at its own size, not the
/// video's). Each `render` call finishes on the GPU before it returns.
/// Thread-safety: Unsafe; owned by one thread (the render thread, or the caller of a headless mode).
public final class Renderer: @unchecked Sendable {
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

  public init(context: VulkanContext? = nil) throws {
    let context = try context ?? VulkanContext()
    self.context = context
    device = context.device
    let device = context.device
    let made = VulkanObjects()

    // Render pass: one RGBA8 attachment, every pixel written by the shader, left in GENERAL so that
    // a copy to a buffer or an importer (GL) can read it without another transition.
    let renderPass = try Self.makeRenderPass(
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
    let tableRenderPass = try Self.makeRenderPass(
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
    let planes = try planeSet(for: frame)
    let params: PushConstants
    var variant = PipelineVariant.sdr
    if let frame {
      planes.stage(frame)
      let geometry = VideoGeometry(
        displayAspect: frame.displayAspect, rotation: frame.rotation, width: target.width, height: target.height)
      variant = PipelineVariant(frame: frame, toneMapping: toneMapping)
      params = PushConstants(
        frame: frame, geometry: geometry, sourcePeak: toneMapping.sourcePeak(for: frame),
        targetPeak: toneMapping.targetPeak)
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
      try recordTable(HDRTableKey(variant: variant, sourcePeak: params.values[28], targetPeak: params.values[29]))
    } else if !tableInitialized {
      recordTableLayout()
    }

    var rpBegin = VkRenderPassBeginInfo()
    rpBegin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO
    rpBegin.renderPass = renderPass
    rpBegin.framebuffer = target.framebuffer
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

    if let readback = target.readback {
      var barrier = VkImageMemoryBarrier()
      barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
      barrier.srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT.rawValue
      barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT.rawValue
      barrier.oldLayout = VK_IMAGE_LAYOUT_GENERAL
      barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL
      barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
      barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
      barrier.image = target.image.image
      barrier.subresourceRange = PlaneSet.colorRange
      vkCmdPipelineBarrier(
        commandBuffer, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue, VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue,
        0, 0, nil, 0, nil, 1, &barrier)
      var region = VkBufferImageCopy()
      region.imageSubresource = VkImageSubresourceLayers(
        aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, mipLevel: 0, baseArrayLayer: 0, layerCount: 1)
      region.imageExtent = VkExtent3D(width: UInt32(target.width), height: UInt32(target.height), depth: 1)
      vkCmdCopyImageToBuffer(
        commandBuffer, target.image.image, VK_IMAGE_LAYOUT_GENERAL, readback.buffer, 1, &region)
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
    let made = try Self.makePipeline(
      device: device, layout: pipelineLayout, renderPass: renderPass, fragment: ShaderCode.videoFrag, variant: variant)
    pipelines[variant] = made
    return made
  }

  /// Records the drawing of the HDR table for `key`, unless it already holds that; leaves it ready to sample.
  private func recordTable(_ key: HDRTableKey) throws {
    if tableKey == key { return }
    let tableVariant = PipelineVariant(
      mode: key.variant.mode, curve: key.variant.curve, fromBT2020: key.variant.fromBT2020)
    let pipeline: VkPipeline
    if let made = tablePipelines[tableVariant] {
      pipeline = made
    } else {
      pipeline = try Self.makePipeline(
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
    values[28] = key.sourcePeak
    values[29] = key.targetPeak
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

  /// A render pass with one colour attachment of `format`, every pixel written by the shader, ending in `finalLayout`.
  private static func makeRenderPass(device: VkDevice, format: VkFormat, finalLayout: VkImageLayout) throws
    -> VkRenderPass
  {
    var attachment = VkAttachmentDescription()
    attachment.format = format
    attachment.samples = VK_SAMPLE_COUNT_1_BIT
    attachment.loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE
    attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE
    attachment.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE
    attachment.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE
    attachment.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
    attachment.finalLayout = finalLayout
    var colorRef = VkAttachmentReference(attachment: 0, layout: VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL)
    var renderPass: VkRenderPass?
    let result = withUnsafePointer(to: &colorRef) { ref -> VkResult in
      var subpass = VkSubpassDescription()
      subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS
      subpass.colorAttachmentCount = 1
      subpass.pColorAttachments = ref
      return withUnsafePointer(to: &subpass) { sp in
        withUnsafePointer(to: &attachment) { att in
          var info = VkRenderPassCreateInfo()
          info.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO
          info.attachmentCount = 1
          info.pAttachments = att
          info.subpassCount = 1
          info.pSubpasses = sp
          return vkCreateRenderPass(device, &info, nil, &renderPass)
        }
      }
    }
    try vk(result, "vkCreateRenderPass")
    return renderPass!
  }

  private static func makePipeline(
    device: VkDevice, layout: VkPipelineLayout, renderPass: VkRenderPass, fragment: [UInt32],
    variant: PipelineVariant
  ) throws -> VkPipeline {
    func module(_ code: [UInt32]) throws -> VkShaderModule {
      var info = VkShaderModuleCreateInfo()
      info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
      info.codeSize = code.count * 4
      var module: VkShaderModule?
      try code.withUnsafeBufferPointer { words in
        info.pCode = words.baseAddress
        try vk(vkCreateShaderModule(device, &info, nil, &module), "vkCreateShaderModule")
      }
      return module!
    }
    let vert = try module(ShaderCode.videoVert)
    let frag = try module(fragment)
    defer {
      vkDestroyShaderModule(device, vert, nil)
      vkDestroyShaderModule(device, frag, nil)
    }
    let entry = strdup("main")!
    defer { free(entry) }
    var stages = [VkPipelineShaderStageCreateInfo](repeating: VkPipelineShaderStageCreateInfo(), count: 2)
    for (i, (stage, module)) in [(VK_SHADER_STAGE_VERTEX_BIT, vert), (VK_SHADER_STAGE_FRAGMENT_BIT, frag)].enumerated()
    {
      stages[i].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
      stages[i].stage = stage
      stages[i].module = module
      stages[i].pName = UnsafePointer(entry)
    }
    // The fragment shader's specialization constants 0...2 (MODE, CURVE, FROM_BT2020), 4 bytes each.
    var constants: [Int32] = [variant.mode, variant.curve, variant.fromBT2020 ? 1 : 0]
    var entries = (0..<3).map { i in
      VkSpecializationMapEntry(constantID: UInt32(i), offset: UInt32(i * 4), size: 4)
    }
    let specialization = UnsafeMutablePointer<VkSpecializationInfo>.allocate(capacity: 1)
    defer { specialization.deallocate() }
    let entryStorage = UnsafeMutablePointer<VkSpecializationMapEntry>.allocate(capacity: 3)
    defer { entryStorage.deallocate() }
    entryStorage.initialize(from: &entries, count: 3)
    let data = UnsafeMutablePointer<Int32>.allocate(capacity: 3)
    defer { data.deallocate() }
    data.initialize(from: &constants, count: 3)
    specialization.initialize(
      to: VkSpecializationInfo(mapEntryCount: 3, pMapEntries: entryStorage, dataSize: 12, pData: data))
    stages[1].pSpecializationInfo = UnsafePointer(specialization)
    var vertexInput = VkPipelineVertexInputStateCreateInfo()
    vertexInput.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO
    var assembly = VkPipelineInputAssemblyStateCreateInfo()
    assembly.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO
    assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
    var viewportState = VkPipelineViewportStateCreateInfo()
    viewportState.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO
    viewportState.viewportCount = 1
    viewportState.scissorCount = 1
    var raster = VkPipelineRasterizationStateCreateInfo()
    raster.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO
    raster.polygonMode = VK_POLYGON_MODE_FILL
    raster.cullMode = VK_CULL_MODE_NONE.rawValue
    raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE
    raster.lineWidth = 1
    var multisample = VkPipelineMultisampleStateCreateInfo()
    multisample.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT
    var blendAttachment = VkPipelineColorBlendAttachmentState()
    blendAttachment.colorWriteMask =
      VK_COLOR_COMPONENT_R_BIT.rawValue | VK_COLOR_COMPONENT_G_BIT.rawValue | VK_COLOR_COMPONENT_B_BIT.rawValue
      | VK_COLOR_COMPONENT_A_BIT.rawValue
    var dynamicStates = [VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR]
    var pipeline: VkPipeline?
    try withUnsafePointer(to: &blendAttachment) { blendAtt in
      var blend = VkPipelineColorBlendStateCreateInfo()
      blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO
      blend.attachmentCount = 1
      blend.pAttachments = blendAtt
      try dynamicStates.withUnsafeMutableBufferPointer { dyn in
        var dynamic = VkPipelineDynamicStateCreateInfo()
        dynamic.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO
        dynamic.dynamicStateCount = UInt32(dyn.count)
        dynamic.pDynamicStates = UnsafePointer(dyn.baseAddress)
        try stages.withUnsafeMutableBufferPointer { st in
          var info = VkGraphicsPipelineCreateInfo()
          info.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO
          info.stageCount = 2
          info.pStages = UnsafePointer(st.baseAddress)
          info.layout = layout
          info.renderPass = renderPass
          info.subpass = 0
          try withUnsafePointer(to: &vertexInput) { vi in
            info.pVertexInputState = vi
            try withUnsafePointer(to: &assembly) { ia in
              info.pInputAssemblyState = ia
              try withUnsafePointer(to: &viewportState) { vp in
                info.pViewportState = vp
                try withUnsafePointer(to: &raster) { rs in
                  info.pRasterizationState = rs
                  try withUnsafePointer(to: &multisample) { ms in
                    info.pMultisampleState = ms
                    try withUnsafePointer(to: &blend) { cb in
                      info.pColorBlendState = cb
                      try withUnsafePointer(to: &dynamic) { ds in
                        info.pDynamicState = ds
                        try vk(
                          vkCreateGraphicsPipelines(device, nil, 1, &info, nil, &pipeline), "vkCreateGraphicsPipelines")
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    return pipeline!
  }
}

/// How HDR is brought to SDR: the curve and the display's peak. The source peak comes from each frame's metadata.
/// Thread-safety: a value type.
public struct ToneMapping: Sendable, Equatable {
  public var curve: ToneMapCurve
  /// The display's peak in nits; SDR reference white is 203.
  public var targetPeak: Double

  public init(curve: ToneMapCurve = .default, targetPeak: Double = ToneMapParams.referenceWhiteNits) {
    self.curve = curve
    self.targetPeak = targetPeak
  }

  /// MaxCLL, else the mastering peak, else 1000 nits; HLG's nominal display peak is 1000 nits.
  public func sourcePeak(for frame: VideoFrame) -> Double {
    switch frame.color.transfer {
    case .pq:
      return ToneMapParams.sourcePeak(
        maxCLL: Double(frame.hdr.maxCLL), masteringMax: frame.hdr.mastering?.maxLuminance)
    case .hlg: return ToneMapParams.defaultSourcePeakNits
    default: return targetPeak
    }
  }
}

/// What the HDR table holds: the stream kind and curve, and the peaks it was made for.
struct HDRTableKey: Equatable {
  /// The atlas side in texels (shaders/hdrlut.glsl: 64 slices of 64x64, 8 per row).
  static let atlasSize = 512
  var variant: PipelineVariant
  var sourcePeak: Float
  var targetPeak: Float
}

/// Which fragment-shader variant a frame needs (its specialization constants).
struct PipelineVariant: Hashable {
  /// 0 SDR as it is, 1 PQ, 2 HLG, 3 SDR with BT.2020 primaries.
  var mode: Int32
  var curve: Int32
  var fromBT2020: Bool

  static let sdr = PipelineVariant(mode: 0, curve: 0, fromBT2020: false)

  init(mode: Int32, curve: Int32, fromBT2020: Bool) {
    self.mode = mode
    self.curve = curve
    self.fromBT2020 = fromBT2020
  }

  init(frame: VideoFrame, toneMapping: ToneMapping) {
    let wide = frame.color.primaries == .bt2020
    switch frame.color.transfer {
    case .pq: mode = 1
    case .hlg: mode = 2
    default: mode = wide ? 3 : 0
    }
    curve = mode == 0 ? 0 : toneMapping.curve.shaderID
    fromBT2020 = mode != 0 && wide
  }
}

/// The shader's push constants (shaders/video.frag `Params`), as 32 floats (128 bytes, the guaranteed minimum).
struct PushConstants {
  static let floatCount = 32
  var values: [Float]

  static let black = PushConstants(values: [Float](repeating: 0, count: floatCount))

  init(values: [Float]) { self.values = values }

  init(frame: VideoFrame, geometry g: VideoGeometry, sourcePeak: Double, targetPeak: Double) {
    let m = YUVMatrix(matrix: frame.color.matrix, range: frame.color.range, bitDepth: frame.bitDepth)
    // Chroma of 4:2:0 MPEG-2/H.264 video is sited with the left luma column: sample half a luma pixel right.
    let chromaOffset = 0.5 / Double(frame.width)
    var v: [Double] = [
      Double(g.rect.x0), Double(g.rect.y0), Double(g.rect.x1), Double(g.rect.y1),
      g.axisX.x, g.axisX.y, g.axisY.x, g.axisY.y,
      g.origin.x, g.origin.y, chromaOffset, 0,
      0, frame.sampleScale, 0, 0,
    ]
    for row in m.rows { v += [row.x, row.y, row.z, row.w] }
    v += [sourcePeak, targetPeak, 0, 0]
    values = v.map { Float($0) }
  }
}
