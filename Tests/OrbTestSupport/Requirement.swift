import Foundation
import XCTest

/// What a test needs of its environment (a display, the session bus, PipeWire, an ffmpeg filter, a compiler).
/// Outside CI a missing part skips the test with a hint; under `CI=true` it fails loudly, since CI's environment is
/// complete and a test that did not run must not pass.
public enum Requirement {
  public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

  /// - Throws: `XCTSkip` when `met` is false (after an `XCTFail` under CI).
  public static func require(
    _ met: Bool, _ missing: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line
  )
    throws
  {
    guard !met else { return }
    let what = missing()
    if isCI { XCTFail("\(what) in CI: run the suite through scripts/test.sh", file: file, line: line) }
    throw XCTSkip("\(what): run the suite through scripts/test.sh")
  }
}
