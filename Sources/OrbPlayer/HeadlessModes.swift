import Foundation
import OrbDecode
import OrbRender

/// `--frame-at`: the frame that covers a time, drawn by the renderer exactly as playback would, as a PNG.
public enum FrameGrab {
  /// - Parameters:
  ///   - seconds: media time; the frame whose display interval covers it is drawn.
  ///   - size: target size in pixels; nil draws at the picture's natural display size.
  ///   - subtitles, subtitleFiles: the subtitle track whose picture cues (and ASS/SSA scripts) are drawn in, chosen
  ///     as playback would.
  /// - Returns: the size written.
  @discardableResult
  public static func write(
    source: String, at seconds: Double, size: (Int, Int)?, output: String, credentials: Credentials = .none,
    toneMapping: ToneMapping = ToneMapping(), subtitles: SubtitleRequest = .automatic, subtitleFiles: [String] = [],
    variant: VariantChoice = .highest, deinterlace: DeinterlaceMode = .auto
  ) throws -> (Int, Int) {
    let renderer = try Renderer()
    let media = try MediaOpener.open(
      source, credentials: credentials, start: seconds, reconnect: false,
      limit: PictureLimit.forDevice(maxSide: renderer.context.maxImageSize), variant: variant,
      deinterlace: deinterlace)
    defer { media.close() }
    guard let frame = media.nextFrame() else { throw media.noPictureError(source: source, at: seconds) }
    // Past the end, the last picture is written, as mpv does; said, since a script asked for another moment.
    if frame.time + frame.duration + 0.5 < seconds {
      let (asked, shown) = StatsText.clocks(seconds, frame.time)
      FileHandle.standardError.write(
        Data(
          ("orb-player: \(MediaSource.withoutSecrets(source)): \(asked) is past the end; the last picture, at \(shown), "
            + "is written\n").utf8))
    }
    let (w, h) =
      size
      ?? VideoGeometry.naturalSize(
        width: frame.width, height: frame.height, sampleAspect: frame.sampleAspect, rotation: frame.rotation)
    let target = try renderer.makeTarget(width: w, height: h, readable: true)
    try renderer.render(frame, into: target, toneMapping: toneMapping)
    guard let drawn = target.pixels else { throw VulkanError(call: "readback", result: -1) }
    var pixels = [UInt8](drawn)
    let cues = subtitleCues(
      media.info, credentials: credentials, at: seconds, request: subtitles, files: subtitleFiles)
    let geometry = VideoGeometry(displayAspect: frame.displayAspect, rotation: frame.rotation, width: w, height: h)
    SubtitleBurnIn.draw(
      cues, into: &pixels, width: target.width, height: target.height, area: geometry.rect, at: seconds,
      fonts: media.info.attachedFonts,
      storage: VideoGeometry.naturalSize(
        width: frame.width, height: frame.height, sampleAspect: frame.sampleAspect, rotation: frame.rotation))
    try pixels.withUnsafeBytes { bytes in
      try PNGWriter.write(rgba: bytes, width: target.width, height: target.height, to: output)
    }
    return (target.width, target.height)
  }

  /// The cues of the subtitle track playback would start with, shown at `seconds`. A track that cannot be read is
  /// a warning on standard error; the picture is written without it.
  private static func subtitleCues(
    _ info: MediaInfo, credentials: Credentials, at seconds: Double, request: SubtitleRequest, files: [String]
  ) -> [SubtitleCue] {
    let tracks = SubtitleChoice.list(info: info, files: files)
    guard let chosen = SubtitleChoice.initial(tracks, request: request, files: files) else { return [] }
    do {
      switch tracks[chosen - 1].origin {
      case .embedded(let index):
        return try SubtitleReader.cues(at: seconds, source: info.source, credentials: credentials, index: index)
      case .file(let path):
        let video = info.video.first
        return try SubtitleFile.read(path, videoWidth: video?.width ?? 0, videoHeight: video?.height ?? 0)
          .cues(at: seconds)
      }
    } catch {
      FileHandle.standardError.write(Data("orb-player: subtitles: \(error)\n".utf8))
      return []
    }
  }
}

/// `--benchmark`: decode and render every frame as fast as possible, headless.
public enum Benchmark {
  public struct Result: Encodable, Sendable {
    public var source: String
    public var width: Int
    public var height: Int
    public var frames: Int
    public var seconds: Double
    public var fps: Double
    public var cpuSeconds: Double
    public var peakRssMb: Double
    public var device: String
    public var corruptPackets: Int
  }

  public static func run(
    source: String, size: (Int, Int), credentials: Credentials = .none, maxSeconds: Double? = nil,
    toneMapping: ToneMapping = ToneMapping(), deinterlace: DeinterlaceMode = .auto
  ) throws -> Result {
    // As a window draws: on a GPU, with it; where the Vulkan device is the CPU (lavapipe), as a cairo window does,
    // with no device: SDR through swscale and PQ and HLG through the CPU tone mapper, into memory.
    let context = try VulkanContext()
    let cpuDevice = context.deviceType == "cpu"
    // No HDR table is kept or taken (`keepsTables`): every run costs the same.
    let drawer = try FrameDrawer(
      device: cpuDevice ? .whenNeeded : .now(context), cpuConversion: cpuDevice, memoryPixelOrder: .rgba)
    let target = try drawer.makeTarget(width: size.0, height: size.1, exportable: false, readable: cpuDevice)
    let started = HostTime.now()
    let cpuStart = ProcessStats.cpuSeconds()
    let media = try MediaOpener.open(
      source, credentials: credentials, limit: PictureLimit.forDevice(maxSide: context.maxImageSize),
      deinterlace: deinterlace)
    defer { media.close() }
    var frames = 0
    while let frame = media.nextFrame() {
      try drawer.render(frame, into: target, toneMapping: toneMapping)
      frames += 1
      if let maxSeconds, HostTime.seconds(since: started) >= maxSeconds { break }
    }
    let seconds = HostTime.seconds(since: started)
    // Nothing drawn is not a measurement: say why, as playback would.
    if frames == 0 { throw media.noPictureError(source: source) }
    return Result(
      source: source, width: size.0, height: size.1, frames: frames, seconds: seconds,
      fps: seconds > 0 ? Double(frames) / seconds : 0, cpuSeconds: ProcessStats.cpuSeconds() - cpuStart,
      peakRssMb: ProcessStats.peakRSSMegabytes(),
      device: cpuDevice ? "CPU (swscale, no Vulkan device)" : drawer.deviceName,
      corruptPackets: media.health.corruptPackets)
  }
}

/// CPU time and memory of this process.
public enum ProcessStats {
  public static func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return s(usage.ru_utime) + s(usage.ru_stime)
  }

  public static func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024  // ru_maxrss is in KiB on Linux
  }
}
