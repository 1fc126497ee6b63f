import CFFmpeg
import Dispatch
import Synchronization

/// Breaks a read of the demuxer's that goes nowhere, however FFmpeg spends it:
/// - of a network file, one that has brought no new byte for `silence` seconds. FFmpeg's `rw_timeout` bounds one wait
///   on a socket, but after a failed read its http protocol reconnects by itself (at once, then a second later), each
///   new connection waiting as long again, and a demuxer reads again after a failure: a server that broke off and
///   then took each connection without answering kept the player "buffering" for 90 s, with nothing said, before
///   the player's own retry rule (which the host and the window hear of) could begin;
/// - of a file on this machine, one that has read `scan` bytes without a packet to give. A download not finished
///   (a torrent's file is made at its full size, zeros where nothing has come) sent the Matroska demuxer looking for
///   its next cluster through gigabytes of zeros at 180 MB/s: minutes of "buffering" for a file on disk.
///
/// It is the format context's interrupt callback, in place of the bare `Cancellation`, which it answers first. The
/// demuxer arms it around each read and seek (`watching`); while armed it follows the bytes the context has read
/// (its AVIOContext's `bytes_read`, which FFmpeg counts as each read of the file or connection returns) and answers
/// "stop" once the rule says so. The demuxer then takes the stall (`stalledAt`) as the read's end.
/// Not for playlists (HLS, DASH), whose parts are read through other I/O contexts, nor pipes.
///
/// Thread-safety: `Sendable`; its state is behind a `Mutex`. FFmpeg calls the callback on the thread that reads the
/// context, and also while it closes a connection (TLS), perhaps after the context is freed: the context's fields
/// are read only while armed, that is during the demux thread's own call into FFmpeg, when the context and its I/O
/// are alive. Whoever installs it keeps it alive as long as the context (`FormatContext`).
final class StallWatch: @unchecked Sendable {
  /// What breaks a read.
  enum Rule {
    /// No new byte for this many seconds (a network file).
    case silence(Double)
    /// This many bytes read in one call (a file on this machine).
    case scan(Int64)
  }
  /// As long as one read of FFmpeg's may wait (`rw_timeout`), and the open waits for an answer.
  static let silence = 15.0
  /// Seconds of the fastest video there is (a 4K remux at 100 Mb/s is 12.5 MB a second), and then some: no
  /// demuxer reads that far for one packet of a file that is whole.
  static let scan: Int64 = 256 << 20

  let cancellation: Cancellation
  let rule: Rule
  /// Read only while armed (see the type's thread-safety).
  private let context: UnsafeMutablePointer<AVFormatContext>

  private struct State {
    var armed = false
    /// The bytes read when they last grew, and when (monotonic nanoseconds).
    var bytes: Int64 = -1
    var since: UInt64 = 0
    /// The bytes read when the watched call began, and the byte it began at.
    var first: Int64 = -1
    var from: Int64 = -1
    /// The byte reading had reached when it was broken for a stall, until a seek.
    var stalledAt: Int64?
  }
  private let state = Mutex(State())

  init(_ cancellation: Cancellation, context: UnsafeMutablePointer<AVFormatContext>, rule: Rule) {
    self.cancellation = cancellation
    self.context = context
    self.rule = rule
  }

  func install() {
    context.pointee.interrupt_callback.callback = { opaque in
      Unmanaged<StallWatch>.fromOpaque(opaque!).takeUnretainedValue().answer()
    }
    context.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(self).toOpaque()
  }

  /// Runs `body` (a read or a seek of the demux thread's) with the watch armed (unless not `armed`); a stall breaks
  /// it. `afresh` (a seek) forgets a stall before: the connection starts clean.
  func watching<T>(afresh: Bool, armed: Bool = true, _ body: () -> T) -> T {
    state.withLock { s in
      if afresh { s.stalledAt = nil }
      s.armed = armed
      s.bytes = readSoFar
      s.first = s.bytes
      s.from = context.pointee.pb.map { avio_tell($0) } ?? -1
      s.since = DispatchTime.now().uptimeNanoseconds
    }
    defer { state.withLock { $0.armed = false } }
    return body()
  }

  /// The byte reading had reached when a watched call since the last seek was broken for a stall (for a scan, the
  /// byte it began at); nil if none was.
  /// Every read after it fails (the I/O context keeps its error until a seek), even when the one it broke still
  /// gave a packet of the bytes it had.
  var stalledAt: Int64? { state.withLock { $0.stalledAt } }

  /// The bytes the context has read; called only while armed.
  private var readSoFar: Int64 { context.pointee.pb?.pointee.bytes_read ?? -1 }

  /// FFmpeg's question, "should the call return now?": non-zero for yes.
  private func answer() -> Int32 {
    let flag = cancellation.interruptFlag
    if flag != 0 { return flag }
    return state.withLock { s -> Int32 in
      guard s.armed else { return 0 }
      let bytes = readSoFar
      switch rule {
      case .silence(let seconds):
        let now = DispatchTime.now().uptimeNanoseconds
        if bytes != s.bytes {
          s.bytes = bytes
          s.since = now
          return 0
        }
        guard now - s.since >= UInt64(seconds * 1e9) else { return 0 }
      case .scan(let limit):
        guard bytes - s.first >= limit else { return 0 }
      }
      if s.stalledAt == nil {
        // Where the silence began (what had come), or where the fruitless scan did.
        if case .scan = rule { s.stalledAt = s.from } else { s.stalledAt = context.pointee.pb?.pointee.pos ?? -1 }
      }
      return 1
    }
  }
}
