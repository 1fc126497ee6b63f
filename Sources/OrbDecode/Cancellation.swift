import CFFmpeg

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
