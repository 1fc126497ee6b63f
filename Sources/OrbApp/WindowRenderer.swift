import Foundation

/// Which of GTK's renderers draws the window. GTK's default draws with GL, which on a machine with no GPU is Mesa's
/// software GL (llvmpipe): there it holds the video's textures and compiled shaders (about 80 MB for a 1080p film)
/// and compiles and runs its compositing on the CPU. GTK's cairo renderer draws the same window from memory for much
/// less, and the frames reach it as memory textures anyway once swscale converts them on the CPU. It is chosen only
/// where nothing asked otherwise: GSK_RENDERER unset, `--video-output auto`, and no GPU render node in /dev/dri.
/// Thread-safety: call before GTK starts (it sets the process's environment), on the main thread.
enum WindowRenderer {
  /// Picks cairo where the rule above says so; whether GTK now draws with cairo.
  @discardableResult
  static func choose(for output: VideoOutput, environment: [String: String] = ProcessInfo.processInfo.environment)
    -> Bool
  {
    if let asked = environment["GSK_RENDERER"] { return asked == "cairo" }
    guard output == .auto, !hasRenderNode() else { return false }
    setenv("GSK_RENDERER", "cairo", 1)
    // Nothing else in the window needs GL then; GTK need not load Mesa's GL driver at all.
    if environment["GDK_DEBUG"] == nil { setenv("GDK_DEBUG", "gl-disable", 1) }
    return true
  }

  /// Whether GTK draws with cairo (so a GL texture would only be copied back to memory for it).
  static var isCairo: Bool { ProcessInfo.processInfo.environment["GSK_RENDERER"] == "cairo" }

  /// A GPU's render node (`/dev/dri/renderD128` …): where there is one, GL runs on the GPU.
  private static func hasRenderNode() -> Bool {
    let nodes = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
    return nodes.contains { $0.hasPrefix("renderD") }
  }
}
