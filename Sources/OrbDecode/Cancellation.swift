import CFFmpeg
import Synchronization

/// Makes FFmpeg's blocking calls (open, read, reconnect waits) on a source return at once: installed as the
/// format context's `AVIOInterruptCB`, which FFmpeg polls while it waits on the network or the disk.
/// `cancel` is for good (quit, close); `interrupt` breaks one blocked read so a seek can run, and the demux thread
/// calls `resume` once it has taken the seek.
/// Thread-safety: `Sendable`, checked by the compiler: its state is an `Atomic`, read by FFmpeg on whatever thread
/// is blocked in it, and the wakers of waits of our own behind a `Mutex` (run outside it). FFmpeg holds it
/// unretained (the callback's opaque pointer): whoever installs it keeps it alive as long as the context or I/O that
/// polls it (`FormatContext` does; a closed TLS connection still polls).
public final class Cancellation: Sendable {
  /// 0: carry on; 1: a seek wants the blocked call to return; 2: stopped for good.
  private let flag = Atomic<Int32>(0)
  /// What a wait of our own (not FFmpeg's polling) runs to be woken at `interrupt` and `cancel`, by number.
  private let wakers = Mutex<(next: Int, all: [Int: @Sendable () -> Void])>((0, [:]))

  public init() {}

  /// Stops every current and future blocking call of the sources using this token.
  public func cancel() {
    flag.store(2, ordering: .releasing)
    wake()
  }

  public var isCancelled: Bool { flag.load(ordering: .acquiring) == 2 }

  /// A blocked call should return now: interrupted (a seek) or cancelled. What FFmpeg's interrupt callback answers.
  var interrupts: Bool { interruptFlag != 0 }
  /// 0: carry on; 1: interrupted; 2: cancelled (non-zero makes FFmpeg's call return AVERROR_EXIT).
  var interruptFlag: Int32 { flag.load(ordering: .acquiring) }

  /// Breaks the call blocked now (a read waiting on a stalled server) without stopping the source. Never undoes a
  /// `cancel`.
  func interrupt() {
    _ = flag.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing)
    wake()
  }

  /// Runs `waker` at every `interrupt` and `cancel` until `stopWaking` is given what this returns. A waiter checks
  /// `interrupts` after this, under the lock its waker takes, so a call that came just before is not missed.
  func wakeOnInterrupt(_ waker: @escaping @Sendable () -> Void) -> Int {
    wakers.withLock { w in
      defer { w.next += 1 }
      w.all[w.next] = waker
      return w.next
    }
  }

  func stopWaking(_ number: Int) { _ = wakers.withLock { $0.all.removeValue(forKey: number) } }

  /// How many waits are ready to be woken now (for tests).
  var wakerCount: Int { wakers.withLock { $0.all.count } }

  private func wake() {
    for waker in wakers.withLock({ Array($0.all.values) }) { waker() }
  }

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
