import CFFmpeg
import Foundation

/// Makes FFmpeg's blocking calls (open, read, reconnect waits) on a source return at once: installed as the
/// format context's `AVIOInterruptCB`, which FFmpeg polls while it waits on the network or the disk.
/// `cancel` is for good (quit, close); `interrupt` breaks one blocked read so a seek can run, and the demux thread
/// calls `resume` once it has taken the seek.
/// Thread-safety: Safe; the flag is one atomic word, read by FFmpeg on whatever thread is blocked in it.
public final class Cancellation: @unchecked Sendable {
  /// 0: carry on; 1: a seek wants the blocked call to return; 2: stopped for good.
  fileprivate let flag: UnsafeMutablePointer<Int32>

  public init() {
    flag = .allocate(capacity: 1)
    flag.initialize(to: 0)
  }

  deinit { flag.deallocate() }

  /// Stops every current and future blocking call of the sources using this token.
  public func cancel() { orb_interrupt_store(flag, 2) }

  public var isCancelled: Bool { orb_interrupt_check(flag) == 2 }

  /// Breaks the call blocked now (a read waiting on a stalled server) without stopping the source.
  func interrupt() { orb_interrupt_exchange(flag, 0, 1) }

  /// Lets calls block again after `interrupt` (never after `cancel`).
  func resume() { orb_interrupt_exchange(flag, 1, 0) }

  func install(on context: UnsafeMutablePointer<AVFormatContext>) { orb_install_interrupt(context, flag) }

  /// The same interrupt for an AVIOContext of one's own.
  func fill(_ callback: inout AVIOInterruptCB) { orb_fill_interrupt(&callback, flag) }
}

/// The largest picture the player decodes: each side within what the GPU can hold as a texture, and the whole
/// within what memory can hold for the frames in flight. Bigger pictures are refused before FFmpeg allocates them.
/// Thread-safety: a value type.
public struct PictureLimit: Sendable, Equatable {
  /// Pixels per side (the Vulkan device's `maxImageDimension2D`).
  public var maxSide: Int
  /// Pixels in all.
  public var maxPixels: Int

  public init(maxSide: Int, maxPixels: Int) {
    self.maxSide = maxSide
    self.maxPixels = maxPixels
  }

  /// For a device whose images may be `maxSide` pixels wide: twice 8K UHD at most (about 67 megapixels, 200 MB a
  /// 16-bit frame), and less when the machine's memory could not hold some 32 such frames (decoder threads,
  /// the frame queue, the reference frames) in a quarter of it.
  public static func forDevice(maxSide: Int) -> PictureLimit {
    let memory = Int(clamping: ProcessInfo.processInfo.physicalMemory)
    let byMemory = memory / 4 / 32 / 3  // 16-bit 4:2:0 is 3 bytes a pixel
    return PictureLimit(maxSide: maxSide, maxPixels: max(1920 * 1080, min(8192 * 8192, byMemory)))
  }

  /// Before any device is known (probing): the limits of the largest common GPUs.
  public static let standard = PictureLimit.forDevice(maxSide: 16384)

  /// Why a `width`x`height` picture cannot be played, or nil when it can.
  public func refusal(width: Int, height: Int) -> String? {
    guard width > 0, height > 0 else { return nil }
    if width > maxSide || height > maxSide || width * height > maxPixels {
      let megapixels = Int((Double(maxPixels) / 1e6).rounded())
      return "its picture is \(width)x\(height) pixels, larger than this machine can show "
        + "(at most \(maxSide) on a side and \(megapixels) megapixels)"
    }
    return nil
  }
}
