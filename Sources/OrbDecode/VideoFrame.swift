import CFFmpeg
import Foundation
import Synchronization

/// A decoded picture ready for upload: 4:2:0 planes the renderer samples directly.
/// Owns its pixel memory (an AVFrame or a buffer of its own) and frees it once: when the last reference goes, or
/// earlier where the thread that draws frames lets it go (`releasePicture`) while the description stays.
/// Thread-safety: safe to share. Immutable after creation but for two things: `duration`, which the video decode
/// thread settles once (atomic), and the picture's memory, behind its own lock (`hasPicture`, `releasePicture`).
public final class VideoFrame: @unchecked Sendable {
  /// One plane as it lies in memory.
  public struct Plane: @unchecked Sendable {
    public let base: UnsafeRawPointer
    /// Bytes from one row to the next.
    public let stride: Int
    /// Size in texels (a texel of an interleaved chroma plane holds both Cb and Cr).
    public let width: Int
    public let height: Int
    /// 1 for Y/Cb/Cr planes, 2 for interleaved CbCr.
    public let components: Int
  }

  /// Plane arrangements the renderer uploads without conversion.
  public enum Layout: Sendable, Equatable {
    /// Three planes Y, Cb, Cr (yuv420p and its 10/12/16-bit forms).
    case planar420
    /// Y and interleaved CbCr (NV12, P010, P016).
    case semiPlanar420
  }

  public let width: Int
  public let height: Int
  public let layout: Layout
  /// 8 for 8-bit samples; 10, 12 or 16 for samples stored in 16-bit words.
  public let bitDepth: Int
  /// Bytes per component: 1 or 2.
  public let bytesPerComponent: Int
  /// Factor from a sample read as UNORM (value / 255 or / 65535) to the code value / (2^bitDepth - 1).
  public let sampleScale: Double
  public let planes: [Plane]
  public let color: ColorInfo
  public let hdr: HDRMetadata
  /// Pixel aspect ratio (width of a pixel over its height).
  public let sampleAspect: Double
  /// Degrees clockwise to turn the picture for display: 0, 90, 180 or 270.
  public let rotation: Int
  /// Presentation time in seconds of stream time.
  public let time: Double
  /// How long the frame is shown, in seconds: its container's or the nominal duration, until the decoder settles it
  /// from the next picture's start (`settle(duration:)`), which usually comes before this one is shown.
  public var duration: Double { Double(bitPattern: settledDuration.load(ordering: .relaxed)) }
  private let settledDuration: Atomic<UInt64>
  /// FFmpeg's pixel format name, for logs and the stats overlay.
  public let pixelFormatName: String
  /// The seek generation this frame belongs to (frames of an earlier generation are stale).
  public let generation: Int
  /// How the picture was scanned, and how it is shown.
  public let fields: Fields

  /// Progressive, or interlaced (two fields, the top or the bottom one taken first) and shown as stored (`woven`,
  /// combing where things move) or made whole from one of its fields (`Deinterlacer`; `marked`: the stream said
  /// the picture was interlaced, else `--deinterlace yes` split it).
  public enum Fields: Sendable, Equatable {
    case progressive
    case woven(topFirst: Bool)
    case field(topFirst: Bool, marked: Bool)
  }

  /// The memory `planes` lie in: FFmpeg's frame, or memory of this frame's own.
  private struct Picture: @unchecked Sendable {
    var avFrame: UnsafeMutablePointer<AVFrame>?
    var buffer: UnsafeMutableRawPointer?

    mutating func free() {
      av_frame_free(&avFrame)
      buffer?.deallocate()
      buffer = nil
    }
  }
  private let picture: Mutex<Picture>

  init(
    avFrame: UnsafeMutablePointer<AVFrame>, layout: Layout, bitDepth: Int, sampleScale: Double, color: ColorInfo,
    hdr: HDRMetadata, sampleAspect: Double, rotation: Int, time: Double, duration: Double, generation: Int,
    fields: Fields = .progressive
  ) {
    self.fields = fields
    let f = avFrame.pointee
    width = Int(f.width)
    height = Int(f.height)
    self.layout = layout
    self.bitDepth = bitDepth
    bytesPerComponent = bitDepth > 8 ? 2 : 1
    self.sampleScale = sampleScale
    let chromaW = (width + 1) / 2
    let chromaH = (height + 1) / 2
    let data = [f.data.0, f.data.1, f.data.2]
    let strides = [Int(f.linesize.0), Int(f.linesize.1), Int(f.linesize.2)]
    switch layout {
    case .planar420:
      let w = width
      let h = height
      planes = (0..<3).map { i in
        Plane(
          base: UnsafeRawPointer(data[i]!), stride: strides[i], width: i == 0 ? w : chromaW,
          height: i == 0 ? h : chromaH, components: 1)
      }
    case .semiPlanar420:
      planes = [
        Plane(base: UnsafeRawPointer(data[0]!), stride: strides[0], width: width, height: height, components: 1),
        Plane(base: UnsafeRawPointer(data[1]!), stride: strides[1], width: chromaW, height: chromaH, components: 2),
      ]
    }
    self.color = color
    self.hdr = hdr
    self.sampleAspect = sampleAspect
    self.rotation = rotation
    self.time = time
    settledDuration = Atomic(duration.bitPattern)
    pixelFormatName = av_get_pix_fmt_name(AVPixelFormat(f.format)).map { String(cString: $0) } ?? "unknown"
    self.generation = generation
    picture = Mutex(Picture(avFrame: avFrame, buffer: nil))
  }

  /// A planar 4:2:0 frame in memory of its own; `fill` writes the Y, Cb and Cr planes
  /// (tightly packed, `bitDepth` > 8 as 16-bit little-endian words, value in the low bits).
  public init(
    planar420Width width: Int, height: Int, bitDepth: Int = 8, color: ColorInfo, hdr: HDRMetadata = HDRMetadata(),
    time: Double, duration: Double, pixelFormatName: String,
    fill: (_ y: UnsafeMutableRawPointer, _ cb: UnsafeMutableRawPointer, _ cr: UnsafeMutableRawPointer) -> Void
  ) {
    self.width = width
    self.height = height
    layout = .planar420
    self.bitDepth = bitDepth
    bytesPerComponent = bitDepth > 8 ? 2 : 1
    sampleScale = bitDepth > 8 ? 65535.0 / Double((1 << bitDepth) - 1) : 1
    let cw = (width + 1) / 2
    let ch = (height + 1) / 2
    let bpc = bytesPerComponent
    let ySize = width * height * bpc
    let cSize = cw * ch * bpc
    let memory = UnsafeMutableRawPointer.allocate(byteCount: ySize + 2 * cSize, alignment: 64)
    fill(memory, memory + ySize, memory + ySize + cSize)
    planes = [
      Plane(base: UnsafeRawPointer(memory), stride: width * bpc, width: width, height: height, components: 1),
      Plane(base: UnsafeRawPointer(memory + ySize), stride: cw * bpc, width: cw, height: ch, components: 1),
      Plane(base: UnsafeRawPointer(memory + ySize + cSize), stride: cw * bpc, width: cw, height: ch, components: 1),
    ]
    self.color = color
    self.hdr = hdr
    sampleAspect = 1
    rotation = 0
    self.time = time
    settledDuration = Atomic(duration.bitPattern)
    self.pixelFormatName = pixelFormatName
    generation = 0
    fields = .progressive
    picture = Mutex(Picture(avFrame: nil, buffer: memory))
  }

  deinit { picture.withLock { $0.free() } }

  /// The decoder learned how long the frame lasts (the next picture started): from now on `duration` says so.
  func settle(duration: Double) { settledDuration.store(duration.bitPattern, ordering: .relaxed) }

  /// Whether `planes` can still be read: false once `releasePicture` let the picture go.
  public var hasPicture: Bool { picture.withLock { $0.avFrame != nil || $0.buffer != nil } }

  /// Bytes the picture's planes take.
  public var pictureBytes: Int { planes.reduce(0) { $0 + $1.stride * $1.height } }

  /// Lets the picture go while the frame's description (time, size, colour) stays: `planes` must not be read after.
  /// Only the thread that draws frames calls this, after drawing; the renderer checks `hasPicture` before it reads.
  public func releasePicture() { picture.withLock { $0.free() } }

  /// The picture's shape on screen, after sample aspect ratio and rotation, as width over height.
  public var displayAspect: Double {
    let a = Double(width) * sampleAspect / Double(max(height, 1))
    return rotation % 180 == 0 ? a : 1 / a
  }
}
