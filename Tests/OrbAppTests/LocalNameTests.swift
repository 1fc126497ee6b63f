import Foundation
import OrbTestSupport
import XCTest

/// A file whose name is not UTF-8 (Latin-1 from an old archive: "caf\xE9.mkv") plays: it is opened by its bytes, and
/// named as a file:// URL carrying them, so the host can hand it back.
final class LocalNameTests: XCTestCase {
  /// Runs `orb-player ARGS… NAME` in a shell, the file's name made of `bytes` (printf escapes), in a folder of its own
  /// where a copy of `clip` has that name.
  private func run(_ args: [String], name bytes: String, clip: String) throws -> ToolResult {
    let dir = NSTemporaryDirectory() + "orb-latin1-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
    let quoted = ([OrbBinary.path] + args).map { "'\($0)'" }.joined(separator: " ")
    let script = "cd '\(dir)' && f=$(printf '\(bytes)') && cp '\(clip)' \"$f\" && exec \(quoted) \"$f\""
    return Tool.run("bash", ["-c", script], timeout: 60)
  }

  func testAFileNamedInLatin1IsOpenedAndNamed() throws {
    let clip = try Clips.moving(seconds: 2)
    let probe = try run(["--probe"], name: "caf\\xe9.mp4", clip: clip)
    XCTAssertEqual(probe.status, 0, probe.stderr)
    let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]
    let source = try XCTUnwrap(json?["source"] as? String, probe.stdout)
    XCTAssertTrue(source.hasPrefix("file:///") && source.hasSuffix("/caf%E9.mp4"), source)
    XCTAssertEqual((json?["video"] as? [[String: Any]])?.count, 1, probe.stdout)
    // Opened again by that URL (as a host would hand it back): the same file.
    let again = Orb.run(["--probe", source])
    XCTAssertEqual(again.status, 0, again.stderr)
    let png = NSTemporaryDirectory() + "orb-latin1-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let frame = try run(["--frame-at", "1", "--output", png], name: "caf\\xe9.mp4", clip: clip)
    XCTAssertEqual(frame.status, 0, frame.stderr)
    XCTAssertEqual(try RGBImage(png: png).width, 640)
  }

  func testAMissingLatin1NameIsNamedInTheMessage() throws {
    let dir = NSTemporaryDirectory()
    let r = Tool.run(
      "bash", ["-c", "cd '\(dir)' && exec '\(OrbBinary.path)' --probe \"$(printf 'nowhere-\\xe9.mkv')\""])
    XCTAssertEqual(r.status, 1, r.stderr)
    XCTAssertTrue(r.stderr.contains("nowhere-%E9.mkv': no such file"), r.stderr)
  }
}
