import Foundation

/// Writes the host-facing events as one JSON object per line to a file descriptor (`--events-fd N`).
/// A closed or broken descriptor is reported once on stderr and then ignored: playback never stops for it.
/// Thread-safety: Safe; writes are serialised by a lock.
public final class EventWriter: @unchecked Sendable {
  private let fd: Int32
  private let lock = NSLock()
  private var broken = false

  public init(fd: Int32) {
    self.fd = fd
    signal(SIGPIPE, SIG_IGN)
  }

  /// `{"event":"progress","position_ms":…,"duration_ms":…,"state":…}`
  public func progress(positionMs: Int64, durationMs: Int64?, state: String) {
    var fields: [String: Any] = ["event": "progress", "position_ms": positionMs, "state": state]
    fields["duration_ms"] = durationMs ?? NSNull()
    write(fields)
  }

  public func state(_ state: String, positionMs: Int64) {
    write(["event": "state", "state": state, "position_ms": positionMs])
  }

  /// `reason`: "eof", "user-quit" or "credits". `stats` (frames shown, dropped, repeated) rides along for hosts
  /// and benchmarks that want to know how smoothly it went.
  public func ended(positionMs: Int64, reason: String, stats: PlaybackStats? = nil) {
    var fields: [String: Any] = ["event": "ended", "position_ms": positionMs, "reason": reason]
    if let stats {
      fields["stats"] = [
        "presented": stats.presented, "dropped": stats.dropped, "repeated": stats.repeated,
        "corrupt_packets": stats.corruptPackets, "audio_underruns": stats.audioUnderruns,
      ]
    }
    write(fields)
  }

  /// `kind`: "network", "sign-in", "missing" or "unplayable".
  public func error(kind: String, message: String) {
    write(["event": "error", "kind": kind, "message": message])
  }

  public func write(_ fields: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
    var line = data
    line.append(0x0A)
    lock.lock()
    defer { lock.unlock() }
    guard !broken else { return }
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
      broken = true
      FileHandle.standardError.write(
        Data("orb-player: cannot write events to fd \(fd): \(String(cString: strerror(errno)))\n".utf8))
    }
  }
}
