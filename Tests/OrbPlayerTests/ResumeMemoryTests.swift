import Foundation
import OrbPlayer
import XCTest

/// What is remembered of where a person left off, and when it is forgotten.
final class ResumeMemoryTests: XCTestCase {
  /// A new folder (removed when the test ends) holding a 1000-byte file for each of `names`: the folder and their
  /// paths.
  private func films(_ names: String...) throws -> (dir: String, paths: [String]) {
    let dir = NSTemporaryDirectory() + "orb-resume-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
    let paths = names.map { "\(dir)/\($0)" }
    for path in paths { try Data(repeating: 1, count: 1000).write(to: URL(fileURLWithPath: path)) }
    return (dir, paths)
  }

  func testALongPlayLeftMidwayIsRememberedAndAnEndForgetsIt() throws {
    let dir = NSTemporaryDirectory() + "orb-resume-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let film = "\(dir)/film.mkv"
    try Data(repeating: 1, count: 1000).write(to: URL(fileURLWithPath: film))
    let store = "\(dir)/state/resume.json"
    var memory = ResumeMemory(file: store)
    memory.left(film, at: .init(position: 754, audioTrack: 2, subtitleTrack: 0), duration: 5400)
    XCTAssertEqual(
      ResumeMemory(file: store).entry(for: film), .init(position: 754, audioTrack: 2, subtitleTrack: 0),
      "read back from the file")
    XCTAssertEqual(ResumeMemory(file: store).entry(for: "file://" + film)?.position, 754, "as a file:// URL too")
    memory.left(film, at: .init(position: 30), duration: 5400)
    XCTAssertEqual(ResumeMemory(file: store).entry(for: film)?.position, 754, "opened and closed again: kept")
    var fresh = ResumeMemory(file: "\(dir)/state/other.json")
    fresh.left(film, at: .init(position: 30), duration: 5400)
    XCTAssertNil(fresh.entry(for: film), "under a minute: nothing to remember")
    memory.left(film, at: .init(position: 900), duration: 5400)
    memory.left(film, at: .init(position: 5300), duration: 5400)
    XCTAssertNil(ResumeMemory(file: store).entry(for: film), "near the end: watched")
    memory.left(film, at: .init(position: 900), duration: 5400)
    try Data(repeating: 1, count: 2000).write(to: URL(fileURLWithPath: film))
    XCTAssertNil(ResumeMemory(file: store).entry(for: film), "another file at the same path")
    memory.left("https://example.com/film.mkv", at: .init(position: 900), duration: 5400)
    XCTAssertNil(ResumeMemory(file: store).entry(for: "https://example.com/film.mkv"), "streams are the host's")
    // A named pipe plays once (its size, 0, made it a file to come back to).
    let fifo = "\(dir)/pipe.mkv"
    XCTAssertEqual(mkfifo(fifo, 0o644), 0)
    memory.left(fifo, at: .init(position: 900), duration: 5400)
    XCTAssertNil(ResumeMemory.key(for: fifo))
    XCTAssertNil(ResumeMemory(file: store).entry(for: fifo))
  }

  /// Two windows open at once, each on its own film: the one closed last kept only its own place, erasing the other's.
  func testTwoWindowsOpenAtOnceEachKeepTheirPlace() throws {
    let (dir, paths) = try films("one.mkv", "two.mkv")
    let (first, second) = (paths[0], paths[1])
    let store = "\(dir)/state/resume.json"
    var one = ResumeMemory(file: store)
    var two = ResumeMemory(file: store)
    one.left(first, at: .init(position: 700), duration: 5400)
    two.left(second, at: .init(position: 1000), duration: 5400)
    one.left(first, at: .init(position: 800), duration: 5400)
    let read = ResumeMemory(file: store)
    XCTAssertEqual(read.entry(for: first)?.position, 800)
    XCTAssertEqual(read.entry(for: second)?.position, 1000, "the other window's place")
  }

  /// A place no file can have (1e300, negative: a damaged or hand-edited file) is not remembered: the player died on
  /// opening that file, every time, saying it.
  func testAPlaceNoFileCanHaveIsForgotten() throws {
    let (dir, paths) = try films("film.mkv", "other.mkv")
    let (film, other) = (paths[0], paths[1])
    let (a, b) = try (XCTUnwrap(ResumeMemory.key(for: film)), XCTUnwrap(ResumeMemory.key(for: other)))
    let store = "\(dir)/resume.json"
    try #"{"entries":{"\#(a)":{"position":1e300},"\#(b)":{"position":-5}},"order":["\#(a)","\#(b)"]}"#
      .write(toFile: store, atomically: true, encoding: .utf8)
    XCTAssertNil(ResumeMemory(file: store).entry(for: film))
    XCTAssertNil(ResumeMemory(file: store).entry(for: other))
  }

  /// A place that cannot be written says why (its folder is a file here).
  func testAPlaceThatCannotBeWrittenSaysWhy() throws {
    let (dir, paths) = try films("film.mkv")
    let film = paths[0]
    try Data("a file".utf8).write(to: URL(fileURLWithPath: "\(dir)/state"))
    var memory = ResumeMemory(file: "\(dir)/state/resume.json")
    let problem = memory.left(film, at: .init(position: 754), duration: 5400)
    XCTAssertEqual(problem, "\(dir)/state/resume.json: Not a directory")
    XCTAssertNil(memory.left(film, at: .init(position: 20), duration: 5400), "nothing to write: nothing to say")
  }
}
