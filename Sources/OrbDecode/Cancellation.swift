import CFFmpeg
import Synchronization

/// Makes FFmpeg's blocking calls (open, read, reconnect waits) on a source return at once: installed as the
/// format context's `AVIOInterruptCB`, which FFmpeg polls while it waits on the network or the disk.
/// `cancel` is for good (quit, close); `interrupt` breaks one blocked read so a seek can run, and the demux thread
/// calls `resume` once it has taken the seek.
/// Thread-safety: `Sendable`, checked by the compiler: its one state is an `Atomic`, read by FFmpeg on whatever
/// thread is blocked in it. FFmpeg holds it unretained (the callback's opaque pointer): whoever installs it keeps it
/// alive as long as the context or I/O that polls it (`FormatContext` does; a closed TLS connection still polls).
public final class Cancellation: Sendable {
  /// 0: carry on; 1: a seek wants the blocked call to return; 2: stopped for good.
  private let flag = Atomic<Int32>(0)

  public init() {}

  /// Stops every current and future blocking call of the sources using this token.
  public func cancel() { flag.store(2, ordering: .releasing) }

  public var isCancelled: Bool { flag.load(ordering: .acquiring) == 2 }

  /// A blocked call should return now: interrupted (a seek) or cancelled. What FFmpeg's interrupt callback answers.
  var interrupts: Bool { flag.load(ordering: .acquiring) != 0 }

  /// Breaks the call blocked now (a read waiting on a stalled server) without stopping the source. Never undoes a
  /// `cancel`.
  func interrupt() { _ = flag.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing) }

  /// Lets calls block again after `interrupt` (never after `cancel`).
  func resume() { _ = flag.compareExchange(expected: 1, desired: 0, ordering: .acquiringAndReleasing) }

  func install(on context: UnsafeMutablePointer<AVFormatContext>) { fill(&context.pointee.interrupt_callback) }

  /// The same interrupt for an AVIOContext of one's own. Non-zero makes FFmpeg's call return AVERROR_EXIT.
  func fill(_ callback: inout AVIOInterruptCB) {
    callback.callback = { opaque in
      Unmanaged<Cancellation>.fromOpaque(opaque!).takeUnretainedValue().flag.load(ordering: .acquiring)
    }
    callback.opaque = Unmanaged.passUnretained(self).toOpaque()
  }
}
