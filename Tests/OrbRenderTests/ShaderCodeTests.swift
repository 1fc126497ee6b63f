import OrbTestSupport
import XCTest

/// The SPIR-V embedded in the binary is what shaders/ compiles to today.
final class ShaderCodeTests: XCTestCase {
  func testEmbeddedSPIRVIsCurrent() {
    let script = OrbBinary.packageRoot + "/scripts/compile-shaders.sh"
    let r = Tool.run("bash", [script, "--check"], timeout: 120)
    XCTAssertEqual(r.status, 0, "run scripts/compile-shaders.sh: \(r.stderr)")
  }
}
