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
      w.progress(
        positionMs: 1000, durationMs: 5000, state: "playing", speed: 1.5,
        at: Date(timeIntervalSince1970: 1_700_000_000.25))
      w.progress(positionMs: 2000, durationMs: nil, state: "paused")
      w.error(kind: "network", message: "cannot open 'http://x/a.mkv': connection reset", positionMs: 3000)
      w.ended(positionMs: 4990, reason: "eof", stats: stats)
    }
    XCTAssertEqual(events.map { $0["event"] as? String }, ["state", "progress", "progress", "error", "ended"])
    XCTAssertEqual(events[1]["position_ms"] as? Int, 1000)
    XCTAssertEqual(events[1]["duration_ms"] as? Int, 5000)
    XCTAssertEqual(events[1]["speed"] as? Double, 1.5, "a host counts on at this speed")
    XCTAssertEqual(events[1]["at"] as? Int64, 1_700_000_000_250, "from this Unix time in ms")
    XCTAssertTrue(events[2]["duration_ms"] is NSNull, "unknown duration is null, not missing")
    XCTAssertEqual(events[3]["kind"] as? String, "network")
    XCTAssertEqual(events[3]["position_ms"] as? Int, 3000, "the host learns where a failed stream was")
    XCTAssertEqual(events[4]["reason"] as? String, "eof")
    XCTAssertEqual((events[4]["stats"] as? [String: Any])?["dropped"] as? Int, 2)
  }

  /// Every kind of value an event holds comes out as JSON a host's parser reads back the same, keys in order.
  func testEventValuesAreWrittenAsJSONAndReadBackTheSame() throws {
    let text = "quote \" backslash \\ newline \n tab \t bell \u{07} é 字 🎬 /slash"
    let fields: [String: Any] = [
      "event": "cue", "text": text, "whole": 3.0, "half": 0.5, "tiny": 1e-7, "big": Int64(1_700_000_000_250),
      "negative": -42, "on": true, "off": false, "none": NSNull(),
      "nested": ["b": 2, "a": ["deep": "yes"] as [String: Any]] as [String: Any],
    ]
    let data = try XCTUnwrap(EventWriter.json(fields))
    let line = String(decoding: data, as: UTF8.self)
    XCTAssertFalse(line.contains("\n"), "one line")
    let back = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    XCTAssertEqual(back["text"] as? String, text)
    XCTAssertEqual(back["whole"] as? Int, 3, "a whole number reads as an integer")
    XCTAssertEqual(back["half"] as? Double, 0.5)
    XCTAssertEqual(back["tiny"] as? Double, 1e-7)
    XCTAssertEqual(back["big"] as? Int64, 1_700_000_000_250)
    XCTAssertEqual(back["negative"] as? Int, -42)
    XCTAssertEqual(back["on"] as? Bool, true)
    XCTAssertEqual(back["off"] as? Bool, false)
    XCTAssertTrue(back["none"] is NSNull)
    let nested = try XCTUnwrap(back["nested"] as? [String: Any])
    XCTAssertEqual((nested["a"] as? [String: Any])?["deep"] as? String, "yes")
    XCTAssertTrue(
      line.hasPrefix(
        #"{"big":1700000000250,"event":"cue","half":0.5,"negative":-42,"nested":{"a":{"deep":"yes"},"b":2}"#),
      line)
    XCTAssertNil(EventWriter.json(["event": "x", "bad": Double.nan]), "not JSON: the line is not written")
  }

  /// A host that stops reading, then goes away: lines queued while the writer is blocked all fail, and later ones
  /// are not even tried. One report on stderr, and the process lives on (EPIPE must not kill it).
  func testAClosedDescriptorIsReportedOnceAndIgnored() throws {
    var fds: [Int32] = [0, 0]
    XCTAssertEqual(pipe(&fds), 0)
    fillPipe(fds[1])  // the writer's first line blocks, so every line below is queued before any write fails
    let report = "orb-player: cannot write events to fd \(fds[1]):"
    let written = capturingStandardError {
      let writer = EventWriter(fd: fds[1])
      for i in 0..<20 { writer.state("playing", positionMs: Int64(i)) }  // a kind that is never dropped
      close(fds[0])  // nobody will ever read: the blocked write fails with EPIPE, and so would the rest
      writer.flush()
      for i in 0..<5 { writer.error(kind: "network", message: "again", positionMs: Int64(i)) }
      writer.ended(positionMs: 5, reason: "eof")
      writer.flush()
    }
    close(fds[1])
    let reports = written.split(separator: "\n").filter { $0.hasPrefix(report) }
    XCTAssertEqual(reports.count, 1, "reported \(reports.count) times: \(written)")
  }

  /// Writes into `fd` (a pipe's write end) until it holds no more, leaving it blocking.
  private func fillPipe(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    XCTAssertEqual(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0)
    let chunk = [UInt8](repeating: 0x20, count: 4096)
    for size in [chunk.count, 1] {
      while Foundation.write(fd, chunk, size) == size {}
    }
    XCTAssertEqual(errno, EAGAIN)
    XCTAssertEqual(fcntl(fd, F_SETFL, flags), 0)
  }

  /// Runs `body` with fd 2 pointed at a pipe, and returns what was written to it.
  private func capturingStandardError(_ body: () -> Void) -> String {
    var fds: [Int32] = [0, 0]
    XCTAssertEqual(pipe(&fds), 0)
    let saved = dup(STDERR_FILENO)
    XCTAssertGreaterThanOrEqual(saved, 0)
    XCTAssertEqual(dup2(fds[1], STDERR_FILENO), STDERR_FILENO)
    close(fds[1])
    body()
    XCTAssertEqual(dup2(saved, STDERR_FILENO), STDERR_FILENO)  // the pipe's last write end closes here
    close(saved)
    let data = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
    return String(decoding: data, as: UTF8.self)
  }
}
