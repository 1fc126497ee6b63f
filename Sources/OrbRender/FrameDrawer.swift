import Foundation
import OrbDecode

/// What playback draws frames with. On a machine with a GPU, or when told which Vulkan device to use, that is the
/// Vulkan `Renderer`, made at once. Where there is no GPU and the pictures go to memory anyway (a window that GTK
/// draws with cairo), Vulkan would only be lavapipe: a software rasteriser whose LLVM alone is some 45 MB of
/// resident code. There the drawer starts with no Vulkan device at all, and draws, into targets of plain memory:
/// - every SDR picture with swscale;
/// - every PQ and HLG picture with swscale and `CPUToneMapper` (the shader's table and dither, on the CPU);
/// - any other (wide-gamut SDR, a rotated picture) by making the renderer on the first such picture. The renderer
///   draws into a scratch target of its own, whose pixels are then copied into the memory target.
/// Thread-safety: Unsafe; owned by one thread at a time, like the renderer it may hold: the render thread, and before
/// it, where the first picture is drawn ahead, the opening thread, which hands it over through `EarlyOpen`'s lock.
public final class FrameDrawer {
  /// Where the Vulkan device comes from.
  public enum Device: Sendable {
    /// This one (nil: the renderer chooses), made now.
    case now(VulkanContext?)
    /// None until a picture needs it (no GPU, pictures to memory).
    case whenNeeded
  }

  private var renderer: Renderer?
  private let onDemand: Bool
  private let cpu: CPUConverter
  private var peaks = PeakTracking()
  /// What the renderer draws into for a target of plain memory, at that target's size.
  private var scratch: RenderTarget?
  /// The byte order of pictures in memory targets.
  public let memoryPixelOrder: PixelOrder
  /// The peak the last HDR picture was tone-mapped from, nits (nil for SDR).
  public private(set) var curvePeak: Double?
  /// A stream's first picture, drawn before the ring that shows it was made (`drawAhead`); kept until the next
  /// `render`.
  private var ahead: Ahead?
  private struct Ahead {
    let frame: VideoFrame
    let target: RenderTarget
    let toneMapping: ToneMapping
    let curvePeak: Double?
    /// `makeTarget` has given the target out, to be a slot of the ring.
    var lent = false
  }

  /// - Parameters:
  ///   - cpuConversion: with a device made now, draw SDR with swscale where the device is the CPU
  ///     (`Renderer.convertsOnCPU`); with none, SDR is always drawn with swscale.
  ///   - memoryPixelOrder: the byte order of pictures in memory (`Renderer.memoryPixelOrder`).
  ///   - keepsTables: full HDR tables made for tone mapping on the CPU are kept in the user's cache folder, and
  ///     taken from there (`HDRTableStore.standard`).
  /// - Throws: `VulkanError` when a device made now cannot be.
  public convenience init(
    device: Device, cpuConversion: Bool, memoryPixelOrder: PixelOrder, keepsTables: Bool = false
  ) throws {
    try self.init(
      device: device, cpuConversion: cpuConversion, memoryPixelOrder: memoryPixelOrder,
      tables: keepsTables ? .standard : nil)
  }

  /// The same, keeping full HDR tables in `tables`.
  init(device: Device, cpuConversion: Bool, memoryPixelOrder: PixelOrder, tables: HDRTableStore?) throws {
    self.memoryPixelOrder = memoryPixelOrder
    cpu = CPUConverter(tables: tables)
    switch device {
    case .now(let context):
      let renderer = try Renderer(context: context)
      renderer.convertsOnCPU = cpuConversion && renderer.prefersCPUConversion
      renderer.memoryPixelOrder = memoryPixelOrder
      self.renderer = renderer
      onDemand = false
    case .whenNeeded:
      onDemand = true
    }
  }

  /// The Vulkan device's name, or what draws while there is none.
  public var deviceName: String { renderer?.context.deviceName ?? "none yet (swscale on the CPU)" }

  /// The largest side of a picture the device takes; without a device, memory is the only limit.
  public var maxImageSize: Int { renderer?.context.maxImageSize ?? 16384 }

  /// Whether `frame` is drawn with swscale into memory (and, without a device, PQ and HLG tone-mapped on the CPU).
  public func convertsOnCPU(_ frame: VideoFrame, toneMapping: ToneMapping) -> Bool {
    guard onDemand else { return renderer?.convertsOnCPU(frame, toneMapping: toneMapping) ?? false }
    return CPUConverter.accepts(
      frame, variant: PipelineVariant(frame: frame, toneMapping: toneMapping), hdr: true)
  }

  /// A target of `width`x`height` pixels (see `Renderer.makeTarget`); always plain memory while devices are made on
  /// demand.
  public func makeTarget(width: Int, height: Int, exportable: Bool, readable: Bool) throws -> RenderTarget {
    if let renderer, !onDemand {
      return try renderer.makeTarget(width: width, height: height, exportable: exportable, readable: readable)
    }
    // The picture drawn ahead is the first target of its size: the first picture is then in place already.
    if let a = ahead, !a.lent, a.target.width == width, a.target.height == height {
      ahead?.lent = true
      return a.target
    }
    return RenderTarget(memoryWidth: min(maxImageSize, width), height: min(maxImageSize, height))
  }

  /// Draws `frame` fitted into `target`, black around it; nil draws black (see `Renderer.render`).
  /// - Throws: `VulkanError` when the renderer cannot be made or fails to draw.
  public func render(_ frame: VideoFrame?, into target: RenderTarget, toneMapping: ToneMapping) throws {
    precondition(frame?.hasPicture ?? true, "a frame drawn after its picture was let go")
    if let a = ahead {
      ahead = nil  // only ever the first picture drawn
      if a.frame === frame, a.toneMapping == toneMapping, a.target.width == target.width,
        a.target.height == target.height, let memory = target.mutablePixels, let drawn = a.target.pixels?.baseAddress
      {
        if a.target !== target { memory.copyMemory(from: drawn, byteCount: target.width * target.height * 4) }
        curvePeak = a.curvePeak
        return
      }
      // Another picture first (a seek, another source): the light measured of that one is not this stream's.
      if a.frame !== frame { peaks = PeakTracking() }
    }
    guard target.isMemoryOnly, let memory = target.mutablePixels else {
      guard let renderer else { preconditionFailure("a Vulkan target without a renderer") }
      try renderer.render(frame, into: target, toneMapping: toneMapping)
      curvePeak = renderer.curvePeak
      return
    }
    guard let frame else { return target.fillBlack() }
    if convertsOnCPU(frame, toneMapping: toneMapping) {
      let geometry = VideoGeometry(
        displayAspect: frame.displayAspect, rotation: frame.rotation, width: target.width, height: target.height)
      let variant = PipelineVariant(frame: frame, toneMapping: toneMapping)
      let params = variant == .sdr ? nil : peaks.params(for: frame, toneMapping: toneMapping)
      if cpu.draw(
        frame, into: target, rect: geometry.rect, order: memoryPixelOrder, toneMap: params.map { ($0, variant) })
      {
        curvePeak = params?.sourcePeak
        return
      }
    }
    let renderer = try self.renderer ?? makeRenderer()
    if scratch?.width != target.width || scratch?.height != target.height {
      scratch = nil  // the old one goes before the new one is made
      scratch = try renderer.makeTarget(width: target.width, height: target.height, readable: true)
    }
    guard let scratch else { return }
    try renderer.render(frame, into: scratch, toneMapping: toneMapping)
    curvePeak = renderer.curvePeak
    if let drawn = scratch.pixels?.baseAddress, scratch.width == target.width, scratch.height == target.height {
      memory.copyMemory(from: drawn, byteCount: target.width * target.height * 4)
    }
  }

  /// Draws `frame`, a stream's first picture, before there is a ring to show it in, on the calling thread: for a
  /// local file opened while the window starts (`EarlyOpen`), whose first picture is decoded before the window is
  /// shown in most launches. With `size` (in pixels: the size the window will first show the video at), into a target
  /// of plain memory of that size, which `makeTarget` gives out as the first target of that size, and which the
  /// first `render` of this same picture at that size then finds drawn (or copies from, into another target); a
  /// `render` of anything else lets it go. Without one (or where the prediction was wrong) it is still worth having
  /// made the PQ or HLG table the picture is tone-mapped with (7-11 ms for HDR10 1080p here). Only for pictures drawn
  /// on the CPU by a drawer made `.whenNeeded`; does nothing for others.
  public func drawAhead(_ frame: VideoFrame, size: (width: Int, height: Int)?, toneMapping: ToneMapping) {
    guard onDemand, frame.hasPicture, convertsOnCPU(frame, toneMapping: toneMapping) else { return }
    guard let size, size.width > 0, size.height > 0, size.width <= maxImageSize, size.height <= maxImageSize else {
      let variant = PipelineVariant(frame: frame, toneMapping: toneMapping)
      var first = PeakTracking()  // measured as the drawer's own will measure it, at its first `render`
      if variant != .sdr, let params = first.params(for: frame, toneMapping: toneMapping) {
        cpu.prepareTable(params: params, variant: variant)
      }
      return
    }
    let target = RenderTarget(memoryWidth: size.width, height: size.height)
    guard (try? render(frame, into: target, toneMapping: toneMapping)) != nil else { return }
    ahead = Ahead(frame: frame, target: target, toneMapping: toneMapping, curvePeak: curvePeak)
  }

  /// Whether a picture drawn ahead waits for its `render` (for tests).
  var hasPictureAhead: Bool { ahead != nil }

  /// Makes the Vulkan device now when the video will need it (wide-gamut SDR or a rotated picture), while its first
  /// pictures decode, rather than at the first one.
  public func prepare(for videos: [VideoStreamInfo]) {
    guard onDemand, renderer == nil else { return }
    // PQ and HLG are tone-mapped on the CPU; wide-gamut SDR and rotation are the shader's.
    let needs = videos.contains { v in
      (!v.effectiveColor.isHDR && v.effectiveColor.primaries == "bt2020") || v.rotation != 0
    }
    if needs { _ = try? makeRenderer() }  // a failure is the first picture's to report
  }

  /// Waits up to `timeout` seconds for the full HDR table being made behind the quick one a stream's first pictures
  /// are tone-mapped with on the CPU (`CPUToneMapper`), so the next picture is drawn exactly as the shader would.
  public func finishTable(timeout: Double = 5) { cpu.finishTable(timeout: timeout) }

  /// Whether HDR pictures are tone-mapped on the CPU with the full table, none being made (for tests).
  var hasFullTable: Bool { cpu.hasFullTable }

  /// The renderer, made for the first picture swscale cannot draw. It never converts on the CPU itself: what comes
  /// to it is what swscale did not take.
  private func makeRenderer() throws -> Renderer {
    let made = try Renderer()
    made.memoryPixelOrder = memoryPixelOrder
    renderer = made
    return made
  }
}
