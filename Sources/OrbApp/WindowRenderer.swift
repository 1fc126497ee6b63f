import Foundation

/// What a machine with no GPU gets in place of GPU paths that would run on its CPU anyway. A machine has a GPU when
/// it has a DRM render node (`/dev/dri/renderD*`, every Mesa driver) or NVIDIA's device (`/dev/nvidiactl`, which
/// its own GL and Vulkan use without DRM). Without one:
/// - Vulkan loads lavapipe's driver alone (`VK_LOADER_DRIVERS_SELECT`): the loader would otherwise load every
///   installed GPU driver just to hear it has no device, about 5 MB and 15 ms at start.
/// - GTK draws the window with its cairo renderer instead of GL, which would be Mesa's software GL (llvmpipe) there,
///   holding about 95 MB more for the video's textures and compiled shaders; the frames reach it as memory it paints
///   directly (`VideoView`). Only with `--video-output auto`.
/// Each is left alone when its variable is already set. Thread-safety: call before GTK and Vulkan start (it sets
/// the process's environment), on the main thread.
enum WindowRenderer {
  /// Chooses for the headless modes and the window alike: the Vulkan driver.
  static func chooseVulkanDriver(environment: [String: String] = ProcessInfo.processInfo.environment) {
    guard !hasGPU, environment["VK_LOADER_DRIVERS_SELECT"] == nil, environment["VK_ICD_FILENAMES"] == nil,
      environment["VK_DRIVER_FILES"] == nil
    else { return }
    setenv("VK_LOADER_DRIVERS_SELECT", "*lvp*", 1)
  }

  /// Picks cairo where the rule above says so (`isCairo` then says GTK draws with it).
  static func choose(for output: VideoOutput, environment: [String: String] = ProcessInfo.processInfo.environment) {
    guard environment["GSK_RENDERER"] == nil, output == .auto, !hasGPU else { return }
    setenv("GSK_RENDERER", "cairo", 1)
    // Nothing else in the window needs GL then; GTK need not load Mesa's GL driver at all.
    if environment["GDK_DEBUG"] == nil { setenv("GDK_DEBUG", "gl-disable", 1) }
  }

  /// Whether GTK draws with cairo (so a GL texture would only be copied back to memory for it).
  static var isCairo: Bool { ProcessInfo.processInfo.environment["GSK_RENDERER"] == "cairo" }

  /// A GPU's device node: a DRM render node, or NVIDIA's control device (looked for once).
  static let hasGPU: Bool = {
    let nodes = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
    return nodes.contains { $0.hasPrefix("renderD") } || FileManager.default.fileExists(atPath: "/dev/nvidiactl")
  }()
}
