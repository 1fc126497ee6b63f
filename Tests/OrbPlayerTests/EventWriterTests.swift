import Foundation
import XCTest

@testable import OrbPlayer

/// The lines a host reads on `--events-fd`.
final class EventWriterTests: XCTestCase {
  private func lines(_ body: (EventWriter) -> Void) throws -> [[String: Any]] {
    var fds: [Int32] = [0, 0]
    XCTAssertEqual(pipe(&fds), 0)
    let writer = EventWriter(fd: fds[1])
    body(writer)
    writer.flush()
    close(fds[1])
    let data = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
    return try String(decoding: data, as: UTF8.self).split(separator: "\n").map {
      try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
  }

  func testEventsArriveAsJSONLinesInOrder() throws {
    var stats = PlaybackStats()
    stats.presented = 240
    stats.dropped = 2
    let events = try lines { w in
      w.state("playing", positionMs: 0)
      w.progress(positionMs: 1000, durationMs: 5000, state: "playing")
      w.progress(positionMs: 2000, durationMs: nil, state: "paused")
      w.error(kind: "network", message: "cannot open 'http://x/a.mkv': connection reset", positionMs: 3000)
      w.ended(positionMs: 4990, reason: "eof", stats: stats)
    }
    XCTAssertEqual(events.map { $0["event"] as? String }, ["state", "progress", "progress", "error", "ended"])
    XCTAssertEqual(events[1]["position_ms"] as? Int, 1000)
    XCTAssertEqual(events[1]["duration_ms"] as? Int, 5000)
    XCTAssertTrue(events[2]["duration_ms"] is NSNull, "unknown duration is null, not missing")
    XCTAssertEqual(events[3]["kind"] as? String, "network")
    XCTAssertEqual(events[3]["position_ms"] as? Int, 3000, "the host learns where a failed stream was")
    XCTAssertEqual(events[4]["reason"] as? String, "eof")
    XCTAssertEqual((events[4]["stats"] as? [String: Any])?["dropped"] as? Int, 2)
  }

  func testAClosedDescriptorIsReportedOnceAndIgnored() throws {
    var fds: [Int32] = [0, 0]
    XCTAssertEqual(pipe(&fds), 0)
    close(fds[0])  // nobody will ever read: writes fail with EPIPE, which must not kill the process
    let writer = EventWriter(fd: fds[1])
    for i in 0..<5 { writer.progress(positionMs: Int64(i), durationMs: nil, state: "playing") }
    writer.flush()
    close(fds[1])
  }
}
