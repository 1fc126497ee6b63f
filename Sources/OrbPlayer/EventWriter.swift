import Foundation
import Synchronization

/// Writes the host-facing events as one JSON object per line to a file descriptor (`--events-fd N`).
/// A closed or broken descriptor is reported once on stderr and then ignored: playback never stops for it.
/// Thread-safety: Safe; lines are queued on a serial queue of its own (its writer thread), which writes them in
/// order; what the callers and that thread share (whether the descriptor broke, how many lines wait) is one `State`
/// behind a `Mutex`, held only to read or change it (never while writing or calling out). The rest is constant.
public final class EventWriter: Sendable {
  /// What the callers and the writer thread share.
  /// Thread-safety: a value type, only ever inside `shared`.
  private struct State {
    /// A write failed: the descriptor is given up on.
    var broken = false
    /// Lines queued and not yet written.
    var backlog = 0
  }

  private let fd: Int32
  private let queue = DispatchQueue(label: "orb-events")
  private let shared = Mutex(State())

  public init(fd: Int32) {
    self.fd = fd
    signal(SIGPIPE, SIG_IGN)
  }

  /// `{"event":"progress","position_ms":…,"duration_ms":…,"state":…,"speed":…,"at":…}`: `at` is the Unix time in
  /// milliseconds the position was read at, so a host can count on from it at `speed` between events.
  public func progress(
    positionMs: Int64, durationMs: Int64?, state: String, speed: Double = 1, at: Date = Date()
  ) {
    let fields: [String: Any] = [
      "event": "progress", "position_ms": positionMs, "duration_ms": durationMs ?? NSNull(), "state": state,
      "speed": speed, "at": Int64((at.timeIntervalSince1970 * 1000).rounded()),
    ]
    write(fields)
  }

  public func state(_ state: String, positionMs: Int64) {
    write(["event": "state", "state": state, "position_ms": positionMs])
  }

  /// `reason`: "eof", "user-quit" or "credits". `stats` (frames shown, dropped, repeated; milliseconds from launch
  /// to the first picture and the median from a seek's request to its picture) rides along for hosts and benchmarks
  /// that want to know how smoothly and quickly it went.
  public func ended(positionMs: Int64, reason: String, stats: PlaybackStats? = nil) {
    var fields: [String: Any] = ["event": "ended", "position_ms": positionMs, "reason": reason]
    if let stats {
      var values: [String: Any] = [
        "presented": stats.presented, "dropped": stats.dropped, "repeated": stats.repeated,
        "corrupt_packets": stats.corruptPackets, "audio_underruns": stats.audioUnderruns,
      ]
      if let first = stats.firstFrameMs { values["first_frame_ms"] = first }
      if let seek = stats.seekMsMedian {
        values["seek_ms_median"] = seek
        values["seeks"] = stats.seeks
      }
      fields["stats"] = values
    }
    write(fields)
  }

  /// `kind`: "network", "sign-in", "missing" or "unplayable".
  /// `positionMs`: where playback was when it failed (nil when nothing played yet), so the host can resume there.
  public func error(kind: String, message: String, positionMs: Int64? = nil) {
    var fields: [String: Any] = ["event": "error", "kind": kind, "message": message]
    if let positionMs { fields["position_ms"] = positionMs }
    write(fields)
  }

  /// Queues one event line; a writer thread of its own sends it, so a host that stops reading can never stall the
  /// caller (the GTK main thread). Past `backlogLimit` lines waiting, `progress` lines are dropped, never the others.
  public func write(_ fields: [String: Any]) {
    guard var line = Self.json(fields) else { return }
    line.append(0x0A)
    let droppable = fields["event"] as? String == "progress"
    let accepted = shared.withLock { s -> Bool in
      if s.broken || (droppable && s.backlog >= Self.backlogLimit) { return false }
      s.backlog += 1
      return true
    }
    guard accepted else { return }
    let ready = line
    queue.async { [self] in
      send(ready)
      shared.withLock { $0.backlog -= 1 }
    }
  }

  /// Waits (up to `timeout` seconds) until every queued line has been written: call before the process exits.
  public func flush(timeout: Double = 2) {
    let done = DispatchSemaphore(value: 0)
    queue.async { done.signal() }
    _ = done.wait(timeout: .now() + timeout)
  }

  static let backlogLimit = 256

  /// `fields` as one JSON object, keys in order: what the events hold (strings, integers, doubles, booleans, `NSNull`
  /// and objects of these); nil for anything else. Written here rather than by `JSONSerialization`, whose sorted keys
  /// made the first event load ICU's locale data and bridge every value to an object, on the main thread before the
  /// window's first picture (about 2 ms in `perf` of a launch).
  static func json(_ fields: [String: Any]) -> Data? {
    var out: [UInt8] = []
    out.reserveCapacity(128)
    let hex = Array("0123456789abcdef".utf8)
    func string(_ text: String) {
      out.append(0x22)
      for byte in text.utf8 {
        switch byte {
        case 0x22, 0x5C: out += [0x5C, byte]
        case 0x0A: out += [0x5C, 0x6E]
        case 0x0D: out += [0x5C, 0x72]
        case 0x09: out += [0x5C, 0x74]
        case 0..<0x20: out += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
        default: out.append(byte)
        }
      }
      out.append(0x22)
    }
    func value(_ v: Any) -> Bool {
      switch v {
      case let b as Bool: out += Array((b ? "true" : "false").utf8)
      case let i as Int: out += Array(String(i).utf8)
      case let i as Int64: out += Array(String(i).utf8)
      case let i as Int32: out += Array(String(i).utf8)
      case let d as Double:
        guard d.isFinite else { return false }
        // Whole numbers as integers (as JSONSerialization wrote them), others in Swift's shortest round-trip form.
        out += Array((d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)).utf8)
      case let text as String: string(text)
      case is NSNull: out += Array("null".utf8)
      case let object as [String: Any]: return dictionary(object)
      default: return false
      }
      return true
    }
    func dictionary(_ object: [String: Any]) -> Bool {
      out.append(0x7B)
      for (n, key) in object.keys.sorted().enumerated() {
        if n > 0 { out.append(0x2C) }
        string(key)
        out.append(0x3A)
        guard value(object[key]!) else { return false }
      }
      out.append(0x7D)
      return true
    }
    return dictionary(fields) ? Data(out) : nil
  }

  /// On the writer thread.
  private func send(_ line: Data) {
    guard !shared.withLock({ $0.broken }) else { return }
    let ok = line.withUnsafeBytes { bytes -> Bool in
      var offset = 0
      while offset < bytes.count {
        let n = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 {
          if errno == EINTR { continue }
          return false
        }
        offset += n
      }
      return true
    }
    if !ok {
      let why = String(cString: strerror(errno))
      shared.withLock { $0.broken = true }
      FileHandle.standardError.write(Data("orb-player: cannot write events to fd \(fd): \(why)\n".utf8))
    }
  }

}
