import Foundation
import OrbTestSupport
import Synchronization
import XCTest

/// The shared test helpers do what the other suites rely on.
final class TestSupportTests: XCTestCase {
  func testToolDrainsLargeOutputOnBothPipes() {
    // 3 MB on each pipe: far beyond a pipe buffer, so reading one after the other would deadlock.
    let result = Tool.run("sh", ["-c", "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2; exit 3"])
    XCTAssertEqual(result.status, 3)
    XCTAssertFalse(result.timedOut)
    XCTAssertEqual(result.stdoutData.count, 3_000_000)
    XCTAssertEqual(result.stderrData.count, 3_000_000)
  }

  func testToolKillsOnTimeout() {
    let start = Date()
    let result = Tool.run("sleep", ["30"], timeout: 0.5)
    XCTAssertTrue(result.timedOut)
    XCTAssertFalse(result.succeeded)
    XCTAssertLessThan(Date().timeIntervalSince(start), 5)
  }

  func testToolReportsAMissingExecutable() {
    let result = Tool.run("orb-no-such-tool", [])
    XCTAssertEqual(result.status, 127)
    XCTAssertTrue(result.stderr.contains("not found"), result.stderr)
  }

  func testToolPassesTheEnvironment() {
    let result = Tool.run("sh", ["-c", "echo $ORB_X"], environment: ["ORB_X": "hello", "PATH": "/usr/bin:/bin"])
    XCTAssertEqual(result.stdout, "hello\n")
  }

  /// A child inherits no descriptor but its three standard streams: a pipe this process opened without
  /// close-on-exec (as a C library may) ends when this process closes its end, although a child started meanwhile
  /// still runs. Children started at once from many threads each report their own status and output.
  func testChildrenInheritOnlyTheirStandardStreams() throws {
    var fds: [Int32] = [0, 0]
    XCTAssertEqual(pipe(&fds), 0)
    defer { close(fds[0]) }
    let sleepers = (0..<4).map { _ -> Child in
      let child = Child()
      child.executableURL = URL(fileURLWithPath: "/bin/sleep")
      child.arguments = ["30"]
      return child
    }
    let collected = Mutex<[Int: ToolResult]>([:])
    DispatchQueue.concurrentPerform(iterations: 12) { i in
      if i < sleepers.count {
        do { try sleepers[i].run() } catch { XCTFail("\(error)") }
      } else {
        let result = Tool.run("sh", ["-c", "echo \(i); exit \(i)"], timeout: 20)
        collected.withLock { $0[i] = result }
      }
    }
    close(fds[1])
    var reader = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
    XCTAssertEqual(poll(&reader, 1, 5000), 1, "the pipe stayed open in a child")
    var byte: UInt8 = 0
    XCTAssertEqual(read(fds[0], &byte, 1), 0)
    let statuses = collected.withLock { $0 }
    for i in sleepers.count..<12 {
      XCTAssertEqual(statuses[i]?.status, Int32(i))
      XCTAssertEqual(statuses[i]?.stdout, "\(i)\n")
    }
    for sleeper in sleepers {
      XCTAssertTrue(sleeper.isRunning)
      sleeper.terminate()
      sleeper.waitUntilExit()
      XCTAssertEqual(sleeper.terminationReason, .uncaughtSignal)
      XCTAssertEqual(sleeper.terminationStatus, SIGTERM)
    }
  }

  func testMediaIsCachedByRecipe() throws {
    let red = ["-f", "lavfi", "-i", "color=c=red:s=64x48:d=0.2", "-c:v", "libx264", "-preset", "ultrafast"]
    let first = try TestMedia.path("cache-check.mkv", red)
    let modified = try FileManager.default.attributesOfItem(atPath: first)[.modificationDate] as? Date
    let again = try TestMedia.path("cache-check.mkv", red)
    XCTAssertEqual(first, again)
    XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: again)[.modificationDate] as? Date, modified)
    let blue = try TestMedia.path("cache-check.mkv", ["-f", "lavfi", "-i", "color=c=blue:s=64x48:d=0.2"])
    XCTAssertNotEqual(first, blue, "a changed recipe is a new file")
    XCTAssertTrue(first.hasSuffix(".mkv"))
    XCTAssertTrue(first.hasPrefix(TestMedia.directory + "/cache-check-"))
  }

  func testRacingMakersBothGetAWholeFile() throws {
    let recipe = ["-f", "lavfi", "-i", "testsrc2=s=160x120:d=1", "-metadata", "title=\(UUID().uuidString)"]
    let paths = NSLock()
    nonisolated(unsafe) var results: [String] = []
    DispatchQueue.concurrentPerform(iterations: 2) { _ in
      let path = try? TestMedia.path("race.mkv", recipe)
      paths.withLock { results.append(path ?? "failed") }
    }
    XCTAssertEqual(Set(results).count, 1, "\(results)")
    XCTAssertEqual(FFprobe.frameCount(results[0]), 25)
  }

  func testFailedRecipeThrowsFFmpegsMessage() {
    XCTAssertThrowsError(try TestMedia.path("broken.mkv", ["-f", "lavfi", "-i", "nosuchsource=1"])) { error in
      XCTAssertTrue("\(error)".contains("nosuchsource"), "\(error)")
    }
  }

  func testRGBImageReadsPixels() throws {
    let path = try TestMedia.path(
      "red-left-blue-right.png",
      [
        "-f", "lavfi", "-i", "color=c=red:s=32x48", "-f", "lavfi", "-i", "color=c=blue:s=32x48", "-filter_complex",
        "[0][1]hstack", "-frames:v", "1",
      ])
    let image = try RGBImage(png: path)
    XCTAssertEqual(image.width, 64)
    XCTAssertEqual(image.height, 48)
    assertPixel(image, x: 5, y: 5, approximately: .red, tolerance: 2)
    assertPixel(image, x: 60, y: 40, approximately: .blue, tolerance: 2)
    XCTAssertEqual(RGB.red.distance(to: RGB(r: 250, g: 3, b: 10)), 10)
  }

  func testTruncatedKeepsTheHead() throws {
    let path = try TestMedia.file(named: "ten.txt", contents: "0123456789")
    let cut = try TestMedia.truncated(path, bytes: 4)
    XCTAssertEqual(try String(contentsOfFile: cut, encoding: .utf8), "0123")
    XCTAssertTrue(cut.hasSuffix(".txt"))
  }

  func testOrbBinaryIsInThePackage() {
    XCTAssertTrue(FileManager.default.fileExists(atPath: OrbBinary.packageRoot + "/Package.swift"))
    if ProcessInfo.processInfo.environment["ORB_PLAYER_BIN"] == nil {
      XCTAssertEqual(OrbBinary.path, OrbBinary.packageRoot + "/.build/debug/orb-player")
    }
  }
}
