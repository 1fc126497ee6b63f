import CVulkan
import Foundation
import OrbDecode

/// Makes the Vulkan objects whose create-info structures nest pointers to one another (render passes, graphics
/// pipelines with their shader stages, specialization constants and fixed-function state), so `Renderer` deals in
/// what it draws, not in how Vulkan is told.
/// Thread-safety: stateless; call from the thread that owns the device's objects being made.
enum PipelineBuilder {
  /// A render pass with one colour attachment of `format`, every pixel written by the shader, ending in `finalLayout`.
  static func renderPass(device: VkDevice, format: VkFormat, finalLayout: VkImageLayout) throws
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

  static func pipeline(
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
