import Foundation
import OrbDecode
import OrbRender

/// A local file opened, and its first pictures decoded, while the window is still being made: the process starts
/// this before GTK, and the player takes the source when it starts, if it would have opened it the same way. The
/// window's start-up (GTK, realizing the window; about 50 ms) and the open and first decode (about 55 ms for 1080p
/// H.264) then run side by side instead of one after the other, and the window sizes itself from the same open
/// instead of a probe of its own.
/// Only local files: a network source's open is retried on the player's schedule, with its events.
/// Thread-safety: Sendable; what the opening thread leaves is one value behind `Locked`, which `take`, `info` and
/// `discard` wait on or change from any thread.
public final class EarlyOpen: Sendable {
  /// How the source is opened; the player takes it only when it would open it with the same.
  public struct Request: Sendable, Equatable {
    public var source: String
    public var start: Double
    public var audio: MediaPipeline.AudioRequest?
    /// Matters only for a master playlist (a local .m3u8).
    public var variant: VariantChoice
    public var deinterlace: DeinterlaceMode
    public init(
      source: String, start: Double, audio: MediaPipeline.AudioRequest?, variant: VariantChoice,
      deinterlace: DeinterlaceMode = .auto
    ) {
      self.source = source
      self.start = start
      self.audio = audio
      self.variant = variant
      self.deinterlace = deinterlace
    }
  }

  private enum Outcome: Sendable {
    case opening
    case opened(FrameSource)
    /// The player has it: its cancellation is the player's to use now.
    case taken
    /// It failed (the player opens it again, to say why as it always does), did not fit, or was let go.
    case none
  }

  private struct State: Sendable {
    var outcome = Outcome.opening
    var discarded = false
    /// The PipeWire stream, connected beside the open (about 15 ms that would otherwise come after the first
    /// picture was decoded, whatever source the player ends up with); nil while connecting and once taken or let go.
    var output: Result<AudioOutput, any Error>?
    var outputPending = false
    /// Nobody will take the stream (let go, taken, or the source has no sound): one still connecting is closed.
    var outputUnwanted = false
    /// The first picture is being drawn from the opened source (`DrawAhead`): the source is not handed over until
    /// that is done, since the picture is read meanwhile.
    var drawingAhead = false
    /// What drew it, for the player's render thread (`takeDrawer`).
    var drawer: Unshared<FrameDrawer>?
    var isOpening: Bool {
      if case .opening = outcome { return true }
      return false
    }
    /// The open, and the drawing after it, are done (or everything was let go): what they leave can be taken.
    var settled: Bool { discarded || (!isOpening && !drawingAhead) }
  }

  /// Where pictures are drawn on the CPU (no GPU, a window cairo draws), how the first picture is drawn while the
  /// window starts, for the render thread to take with its drawer (`FrameDrawer.drawAhead`).
  public struct DrawAhead: Sendable {
    public var toneMapping: ToneMapping
    public var pixelOrder: PixelOrder
    /// The size in pixels the window will first show the video at, from its first video stream; nil when it cannot
    /// be told (a window that opens fullscreen).
    public var size: @Sendable (VideoStreamInfo) -> (width: Int, height: Int)?
    public init(
      toneMapping: ToneMapping, pixelOrder: PixelOrder,
      size: @escaping @Sendable (VideoStreamInfo) -> (width: Int, height: Int)?
    ) {
      self.toneMapping = toneMapping
      self.pixelOrder = pixelOrder
      self.size = size
    }
  }

  public let request: Request
  /// The limit it was opened with: no device is known yet.
  static let limit = PictureLimit.standard
  private let state = Locked(State())
  private let cancellation = Cancellation()

  /// Whether `source` is one to open early: a local file (a path or a file: URL), not a pattern or a network source.
  public static func applies(to source: String) -> Bool {
    !source.isEmpty && !TestPatternSource.isTestURL(source) && MediaSource.isLocal(source)
  }

  /// Starts opening on a thread of its own, and connecting to PipeWire on another when sound is asked for. With
  /// `drawAhead`, the opening thread then waits for the first picture and draws it (`FrameDrawer.drawAhead`) while
  /// GTK is still starting on the main thread, where the render thread, started once the window is, drew it after.
  /// `first_frame_ms`, alternated launches in a 1280x720 window, medians: HDR10 1080p (table and tone mapping, 15-27
  /// ms of drawing) 147.5 -> 137 (20 launches each) and 134.5 -> 124.5 (14 each); 1080p H.264 (swscale alone, 10-14
  /// ms, against GTK's start for the second core) 123 -> 119.5 at 30 fps, 129 -> 123.5 and 121 -> 120 at 60 fps.
  public init(_ request: Request, credentials: Credentials = .none, drawAhead: DrawAhead? = nil) {
    self.request = request
    let (state, cancellation) = (state, cancellation)
    if request.audio != nil {
      state.withLock { $0.outputPending = true }
      startThread(named: "orb-early-audio") {
        let output = Result { () throws -> AudioOutput in
          let output = try AudioOutput(mediaName: request.source)
          output.setActive(false)  // until the first picture starts the clock
          return output
        }
        state.change { s in
          s.outputPending = false
          if !s.outputUnwanted { s.output = output }
        }
      }
    }
    startThread(named: "orb-early-open") {
      let opened = try? MediaOpener.open(
        request.source, credentials: credentials, start: request.start, audio: request.audio, reconnect: false,
        cancellation: cancellation, limit: Self.limit, variant: request.variant, deinterlace: request.deinterlace)
      let pipeline = drawAhead == nil ? nil : opened as? MediaPipeline
      let video = pipeline?.videoStream == nil ? nil : opened?.info.video.first
      let unwanted = state.change { s -> FrameSource? in
        if s.discarded { return opened }
        s.outcome = opened.map(Outcome.opened) ?? .none
        s.drawingAhead = video != nil
        return nil
      }
      unwanted?.close()
      guard let drawAhead, let pipeline, let video else { return }
      if let first = pipeline.nextPicture(timeout: Self.firstPictureWait),
        let drawer = try? FrameDrawer(
          device: .whenNeeded, cpuConversion: true, memoryPixelOrder: drawAhead.pixelOrder, keepsTables: true)
      {
        drawer.drawAhead(first, size: drawAhead.size(video), toneMapping: drawAhead.toneMapping)
        state.change { $0.drawer = Unshared(drawer) }
      }
      state.change { $0.drawingAhead = false }
    }
  }

  /// Seconds the opening thread waits for the first picture to draw.
  static let firstPictureWait = 0.5

  /// Whether the player took the source (for tests).
  var isTaken: Bool {
    state.withLock { s in
      if case .taken = s.outcome { return true }
      return false
    }
  }

  /// What the source holds, once its open has finished (waiting for it); nil when it failed or was let go.
  public func info() -> MediaInfo? {
    state.wait(
      until: { $0.discarded || !$0.isOpening },
      then: { s, _ in
        if case .opened(let source) = s.outcome { return source.info }
        return nil
      })
  }

  /// The source, once its open has finished (waiting for it), when it was opened as `wanted` would open it and
  /// `limit` would let its picture through too; nil otherwise, and then it is closed. Taken once.
  public func take(as wanted: Request, limit: PictureLimit) -> FrameSource? {
    let source = state.wait(
      until: { $0.settled },
      then: { s, _ -> FrameSource? in
        guard case .opened(let source) = s.outcome else { return nil }
        s.outcome = .taken
        return source
      })
    guard let source else { return nil }
    let sameVariant = wanted.variant == request.variant || !source.info.video.contains { $0.variantBitrate != nil }
    let fits = source.videoStream.map { limit.refusal(width: $0.width, height: $0.height) == nil } ?? true
    let same = wanted.source == request.source && wanted.start == request.start && wanted.audio == request.audio
    if same && sameVariant && (limit == Self.limit || fits) {
      if wanted.deinterlace != request.deinterlace { source.setDeinterlace(wanted.deinterlace) }
      return source
    }
    source.close()
    return nil
  }

  /// The drawer that drew the first picture ahead (`DrawAhead`), once it has (waiting for it), for the render thread
  /// to draw the rest with: its picture, its swscale contexts and its HDR table are then ready. Nil without one, or
  /// once let go. Taken once.
  public func takeDrawer() -> FrameDrawer? {
    state.wait(
      until: { $0.settled },
      then: { s, _ -> FrameDrawer? in
        defer { s.drawer = nil }
        return s.drawer?.value
      })
  }

  /// Whether a drawer that drew the first picture ahead waits to be taken, once the open and the drawing are done
  /// (for tests).
  var hasDrawnAhead: Bool {
    state.wait(until: { $0.settled }, then: { s, _ in s.drawer != nil })
  }

  /// The PipeWire stream connected beside the open (waiting for it), for the player's sound whatever source it
  /// plays: nil when sound was not asked for or it was let go. Taken once.
  public func takeOutput() -> Result<AudioOutput, any Error>? {
    state.wait(
      until: { !$0.outputPending },
      then: { s, _ in
        defer { s.output = nil }
        s.outputUnwanted = true
        return s.output
      })
  }

  /// Closes the PipeWire stream, now or once connected: the source has no sound to play.
  public func dropOutput() {
    state.withLock { s in
      s.outputUnwanted = true
      s.output = nil
    }
  }

  /// Lets the source go (closing it, or cancelling its open) unless the player has taken it, and the PipeWire stream
  /// unless the player has taken it.
  public func discard() {
    let (source, cancel) = state.change { s -> (FrameSource?, Bool) in
      s.outputUnwanted = true
      s.output = nil
      if case .taken = s.outcome { return (nil, false) }
      s.discarded = true
      defer { s.outcome = .none }
      if case .opened(let source) = s.outcome { return (source, true) }
      return (nil, true)
    }
    if cancel { cancellation.cancel() }
    source?.close()
  }
}
