import OrbDecode
import XCTest

/// Seconds as whole milliseconds (events, libass) and microseconds (MPRIS), saturated where a file's made-up times
/// would trap a plain conversion.
final class MillisecondsTests: XCTestCase {
  func testConversionsRoundAndSaturate() {
    XCTAssertEqual(1.2345.wholeMilliseconds, 1235)
    XCTAssertEqual((-0.0015).wholeMilliseconds, -2)
    XCTAssertEqual(1e300.wholeMilliseconds, 9_000_000_000_000_000)
    XCTAssertEqual((-Double.infinity).wholeMilliseconds, -9_000_000_000_000_000)
    XCTAssertEqual(Double.nan.wholeMilliseconds, 0)
    XCTAssertEqual(1.5.wholeMicroseconds, 1_500_000)
    XCTAssertEqual(1e13.wholeMicroseconds, 9_000_000_000_000_000_000, "10^19 µs does not fit: the most")
    XCTAssertEqual(Double.infinity.wholeMicroseconds, 9_000_000_000_000_000_000)
    XCTAssertEqual(Double.nan.wholeMicroseconds, 0)
  }
}
