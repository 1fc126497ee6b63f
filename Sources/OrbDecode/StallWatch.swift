import CFFmpeg
import Dispatch
import Foundation
import Synchronization

/// Breaks a read of the demuxer's that goes nowhere, however FFmpeg spends it:
/// - of a network file, one that has brought no new byte for `silence` seconds. FFmpeg's `rw_timeout` bounds one wait
///   on a socket, but after a failed read its http protocol reconnects by itself (at once, then a second later), each
///   new connection waiting as long again, and a demuxer reads again after a failure: a server that broke off and
///   then took each connection without answering kept the player "buffering" for 90 s, with nothing said, before
///   the player's own retry rule (which the host and the window hear of) could begin;
/// - of a file on this machine, one that has read `scan` bytes since its last packet, when nothing but a hole follows
///   to the end of the file (`lseek`'s `SEEK_DATA`). A download not finished (a torrent's file is made at its full
///   size, a hole where nothing has come) sent the Matroska demuxer looking for its next cluster through gigabytes
///   of zeros at 180 MB/s: minutes of "buffering" for a file on disk. A hole with data after it (a download's middle
///   part missing) is read through as before: the demuxer finds the data after it. Where the file system cannot
///   tell holes (or the zeros were written), it is read through too.
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
    /// This many bytes read since the last packet, and only a hole after them (a file on this machine, the path's
    /// bytes for the file system).
    case scan(Int64, path: [CChar])
  }
  /// Longer than one read of FFmpeg's may wait (`rw_timeout`, 15 s), so that its own reconnect takes a connection
  /// that hangs while the server is well, and breaks what goes on after.
  static let silence = 20.0
  /// A call broken by a seek after this many seconds without a byte waited on a connection that hangs.
  static let hung = 2.0
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
    /// The bytes read when the last packet came (or the last seek was made), and the byte reading stood at then.
    var first: Int64 = -1
    var from: Int64 = -1
    /// The file, opened to ask where its data is (`SEEK_DATA`); -1 until asked.
    var file: Int32 = -1
    /// The byte reading had reached when it was broken for a stall, until a seek.
    var stalledAt: Int64?
    /// Seconds the last watched call had waited without a byte when it returned.
    var quietAtEnd = 0.0
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
      s.armed = armed
      s.bytes = readSoFar
      s.since = DispatchTime.now().uptimeNanoseconds
      if afresh || s.first < 0 { markPacket(&s) }
      if afresh { s.stalledAt = nil }
    }
    defer {
      state.withLock { s in
        if s.armed { s.quietAtEnd = Double(DispatchTime.now().uptimeNanoseconds - s.since) / 1e9 }
        s.armed = false
      }
    }
    return body()
  }

  /// Whether the connection hangs: the last read was broken for a stall, or a seek broke it after `hung` seconds
  /// without a byte. FFmpeg would read on over it to a place not far ahead (a short seek), and wait as long again.
  var connectionHangs: Bool {
    guard case .silence = rule else { return false }
    return state.withLock { $0.stalledAt != nil || $0.quietAtEnd >= Self.hung }
  }

  /// A packet came: a scan counts from here (a demuxer that gives up a resync after a while and is asked again
  /// scans on across the calls, MPEG-TS's).
  func delivered() { state.withLock { markPacket(&$0) } }

  private func markPacket(_ s: inout State) {
    s.first = readSoFar
    s.from = context.pointee.pb.map { avio_tell($0) } ?? -1
  }

  deinit {
    let file = state.withLock { $0.file }
    if file >= 0 { close(file) }
  }

  /// The byte reading had reached when a watched call since the last seek was broken for a stall (for a scan, the
  /// byte it began at); nil if none was.
  /// Every read after it fails (the I/O context keeps its error until a seek), even when the one it broke still
  /// gave a packet of the bytes it had.
  var stalledAt: Int64? { state.withLock { $0.stalledAt } }

  /// Whether nothing but a hole follows where reading stands, to the end of the file.
  private func onlyHoleAfter(_ s: inout State, path: [CChar]) -> Bool {
    if s.file < 0 { s.file = path.withUnsafeBufferPointer { open($0.baseAddress!, O_RDONLY | O_CLOEXEC) } }
    var info = stat()
    guard s.file >= 0, let pb = context.pointee.pb, fstat(s.file, &info) == 0 else { return false }
    // At the end (or past it) there is nothing to say: FFmpeg's next read says it.
    let at = off_t(pb.pointee.pos)
    return at < info.st_size && lseek(s.file, at, Self.seekData) < 0 && errno == ENXIO
  }
  /// Linux's `SEEK_DATA` (the next place at or after the offset that holds data; ENXIO when none does), which the C
  /// library gives only to `_GNU_SOURCE`.
  static let seekData: Int32 = 3

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
      case .scan(let limit, let path):
        guard bytes - s.first >= limit else { return 0 }
        guard onlyHoleAfter(&s, path: path) else {
          s.first = bytes  // data follows: read on, and ask again after as much more
          return 0
        }
      }
      if s.stalledAt == nil {
        // Where the silence began (what had come), or where the fruitless scan did.
        if case .scan = rule { s.stalledAt = s.from } else { s.stalledAt = context.pointee.pb?.pointee.pos ?? -1 }
      }
      return 1
    }
  }
}
