import CVulkan
import Foundation

/// A Vulkan call that failed: which call and its result.
public struct VulkanError: Error, CustomStringConvertible, Sendable {
  public let call: String
  public let result: Int32
  public var description: String { "\(call) failed (\(Self.name(result)))" }

  /// The VkResult's name as the specification spells it, or its number.
  static func name(_ result: Int32) -> String {
    let names: [Int32: String] = [
      1: "VK_NOT_READY", 2: "VK_TIMEOUT", 5: "VK_INCOMPLETE", -1: "VK_ERROR_OUT_OF_HOST_MEMORY",
      -2: "VK_ERROR_OUT_OF_DEVICE_MEMORY", -3: "VK_ERROR_INITIALIZATION_FAILED", -4: "VK_ERROR_DEVICE_LOST",
      -5: "VK_ERROR_MEMORY_MAP_FAILED", -6: "VK_ERROR_LAYER_NOT_PRESENT", -7: "VK_ERROR_EXTENSION_NOT_PRESENT",
      -8: "VK_ERROR_FEATURE_NOT_PRESENT", -9: "VK_ERROR_INCOMPATIBLE_DRIVER", -10: "VK_ERROR_TOO_MANY_OBJECTS",
      -11: "VK_ERROR_FORMAT_NOT_SUPPORTED", -12: "VK_ERROR_FRAGMENTED_POOL", -13: "VK_ERROR_UNKNOWN",
      -1_000_069_000: "VK_ERROR_OUT_OF_POOL_MEMORY", -1_000_072_003: "VK_ERROR_INVALID_EXTERNAL_HANDLE",
    ]
    return names[result] ?? "VkResult \(result)"
  }

  public init(call: String, result: Int32) {
    self.call = call
    self.result = result
  }
}

/// Vulkan objects an owner made, each with how to destroy it: destroyed once, in reverse order of making, when the
/// last reference goes. An owner whose init throws half-way thereby frees what it had made, and nothing twice.
/// Thread-safety: Unsafe; filled by one thread, then only released.
final class VulkanObjects {
  private var destroyers: [() -> Void] = []
  func add(_ destroy: @escaping () -> Void) { destroyers.append(destroy) }
  deinit { for destroy in destroyers.reversed() { destroy() } }
}

/// The one funnel for `VkResult`s: success passes, anything else throws a `VulkanError` naming the call.
func vk(_ result: VkResult, _ call: @autoclosure () -> String) throws {
  if result != VK_SUCCESS { throw VulkanError(call: call(), result: result.rawValue) }
}

/// The Vulkan instance, the chosen device and its graphics queue.
/// Device choice: a discrete GPU first, then integrated, virtual, and a CPU device (lavapipe) last;
/// `ORB_VULKAN_DEVICE` (part of a device name) overrides.
/// Thread-safety: the properties are immutable; the queue is used by one thread (the renderer's) at a time.
public final class VulkanContext: @unchecked Sendable {
  public let instance: VkInstance
  public let physicalDevice: VkPhysicalDevice
  public let device: VkDevice
  public let queue: VkQueue
  public let queueFamily: UInt32
  /// The device's name as the driver gives it, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
  public let deviceName: String
  /// "discrete", "integrated", "virtual", "cpu" or "other".
  public let deviceType: String
  /// VkPhysicalDeviceIDProperties, to match a GL context on the same device before sharing memory.
  public let deviceUUID: [UInt8]
  public let driverUUID: [UInt8]
  /// VK_KHR_external_memory_fd is enabled: images can be exported to GL as opaque fds.
  public let canExportMemory: Bool
  /// The largest image side the device takes, in pixels.
  public let maxImageSize: Int
  let memoryProperties: VkPhysicalDeviceMemoryProperties

  public init() throws {
    var appInfo = VkApplicationInfo()
    appInfo.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO
    appInfo.apiVersion = orb_vk_make_api_version(1, 1, 0)
    var instance: VkInstance?
    let created: VkResult = "orb-player".withCString { name in
      appInfo.pApplicationName = name
      appInfo.pEngineName = name
      return withUnsafePointer(to: &appInfo) { app in
        var info = VkInstanceCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
        info.pApplicationInfo = app
        return vkCreateInstance(&info, nil, &instance)
      }
    }
    try vk(created, "vkCreateInstance")
    guard let instance else { throw VulkanError(call: "vkCreateInstance", result: -1) }
    self.instance = instance

    var count: UInt32 = 0
    try vk(vkEnumeratePhysicalDevices(instance, &count, nil), "vkEnumeratePhysicalDevices")
    var devices = [VkPhysicalDevice?](repeating: nil, count: Int(count))
    try vk(vkEnumeratePhysicalDevices(instance, &count, &devices), "vkEnumeratePhysicalDevices")
    let wanted = ProcessInfo.processInfo.environment["ORB_VULKAN_DEVICE"]
    var best: (device: VkPhysicalDevice, family: UInt32, score: Int, props: VkPhysicalDeviceProperties)?
    for case let candidate? in devices {
      var props = VkPhysicalDeviceProperties()
      vkGetPhysicalDeviceProperties(candidate, &props)
      guard let family = Self.graphicsFamily(candidate) else { continue }
      let name = Self.name(props)
      var score: Int
      switch props.deviceType {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: score = 4
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: score = 3
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: score = 2
      case VK_PHYSICAL_DEVICE_TYPE_CPU: score = 1
      default: score = 0
      }
      if let wanted, !wanted.isEmpty, name.localizedCaseInsensitiveContains(wanted) { score += 100 }
      if best == nil || score > best!.score { best = (candidate, family, score, props) }
    }
    guard let chosen = best else {
      vkDestroyInstance(instance, nil)
      throw VulkanError(call: "vkEnumeratePhysicalDevices (no device with a graphics queue)", result: -1)
    }
    physicalDevice = chosen.device
    maxImageSize = Int(chosen.props.limits.maxImageDimension2D)
    queueFamily = chosen.family
    deviceName = Self.name(chosen.props)
    switch chosen.props.deviceType {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: deviceType = "discrete"
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: deviceType = "integrated"
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: deviceType = "virtual"
    case VK_PHYSICAL_DEVICE_TYPE_CPU: deviceType = "cpu"
    default: deviceType = "other"
    }

    var idProps = VkPhysicalDeviceIDProperties()
    idProps.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES
    var props2 = VkPhysicalDeviceProperties2()
    props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
    withUnsafeMutablePointer(to: &idProps) { id in
      props2.pNext = UnsafeMutableRawPointer(id)
      vkGetPhysicalDeviceProperties2(chosen.device, &props2)
    }
    deviceUUID = withUnsafeBytes(of: idProps.deviceUUID) { Array($0) }
    driverUUID = withUnsafeBytes(of: idProps.driverUUID) { Array($0) }

    var extCount: UInt32 = 0
    try vk(
      vkEnumerateDeviceExtensionProperties(chosen.device, nil, &extCount, nil), "vkEnumerateDeviceExtensionProperties")
    var extProps = [VkExtensionProperties](repeating: VkExtensionProperties(), count: Int(extCount))
    try vk(
      vkEnumerateDeviceExtensionProperties(chosen.device, nil, &extCount, &extProps),
      "vkEnumerateDeviceExtensionProperties")
    let available = Set(
      extProps.map {
        withUnsafeBytes(of: $0.extensionName) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
      })
    let exportable = available.contains("VK_KHR_external_memory_fd")
    let extensions = exportable ? ["VK_KHR_external_memory_fd"] : []
    canExportMemory = exportable

    var priority: Float = 1
    var queueInfo = VkDeviceQueueCreateInfo()
    queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
    queueInfo.queueFamilyIndex = chosen.family
    queueInfo.queueCount = 1
    var device: VkDevice?
    let names = extensions.map { strdup($0) }
    defer { for name in names { free(name) } }
    let deviceResult: VkResult = withUnsafePointer(to: &priority) { p in
      queueInfo.pQueuePriorities = p
      return withUnsafePointer(to: &queueInfo) { q in
        names.map { UnsafePointer($0) }.withUnsafeBufferPointer { ext in
          var info = VkDeviceCreateInfo()
          info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
          info.queueCreateInfoCount = 1
          info.pQueueCreateInfos = q
          info.enabledExtensionCount = UInt32(ext.count)
          info.ppEnabledExtensionNames = ext.baseAddress
          return vkCreateDevice(chosen.device, &info, nil, &device)
        }
      }
    }
    guard deviceResult == VK_SUCCESS, let device else {
      vkDestroyInstance(instance, nil)
      throw VulkanError(call: "vkCreateDevice", result: deviceResult.rawValue)
    }
    self.device = device
    var q: VkQueue?
    vkGetDeviceQueue(device, chosen.family, 0, &q)
    queue = q!
    var memProps = VkPhysicalDeviceMemoryProperties()
    vkGetPhysicalDeviceMemoryProperties(chosen.device, &memProps)
    memoryProperties = memProps
  }

  deinit {
    vkDeviceWaitIdle(device)
    vkDestroyDevice(device, nil)
    vkDestroyInstance(instance, nil)
  }

  /// A memory type index allowed by `bits` with all of `required`, preferring one that also has `preferred`.
  func memoryType(bits: UInt32, required: VkMemoryPropertyFlags, preferred: VkMemoryPropertyFlags = 0) -> UInt32? {
    let types = withUnsafeBytes(of: memoryProperties.memoryTypes) { Array($0.bindMemory(to: VkMemoryType.self)) }
    let count = Int(memoryProperties.memoryTypeCount)
    var fallback: UInt32?
    for i in 0..<count where bits & (1 << UInt32(i)) != 0 {
      let flags = types[i].propertyFlags
      guard flags & required == required else { continue }
      if flags & preferred == preferred { return UInt32(i) }
      if fallback == nil { fallback = UInt32(i) }
    }
    return fallback
  }

  private static func graphicsFamily(_ device: VkPhysicalDevice) -> UInt32? {
    var count: UInt32 = 0
    vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nil)
    var families = [VkQueueFamilyProperties](repeating: VkQueueFamilyProperties(), count: Int(count))
    vkGetPhysicalDeviceQueueFamilyProperties(device, &count, &families)
    return families.firstIndex { $0.queueFlags & VK_QUEUE_GRAPHICS_BIT.rawValue != 0 }.map { UInt32($0) }
  }

  private static func name(_ props: VkPhysicalDeviceProperties) -> String {
    withUnsafeBytes(of: props.deviceName) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
  }
}
