import Foundation
import XCTest

@testable import OrbDecode

/// The words a sign-in refusal gives for where the server sent a request with a token.
final class HTTPDiagnosisTests: XCTestCase {
  /// Another host is named by itself, with the port the address gives; a move that changes only the scheme (to
  /// https on the same host and port) names the scheme, or the message would name the very host it came from.
  func testARedirectOffTheOriginIsNamedSoThatItDiffersFromTheOrigin() {
    let from = URL(string: "http://127.0.0.1:18080/a/f.mp4")!
    let cases = [
      ("http://localhost:18080/f.mp4", "localhost:18080"),
      ("https://127.0.0.1:18080/f.mp4", "https://127.0.0.1:18080"),
      ("https://sso.example/login", "sso.example"),
    ]
    for (to, named) in cases {
      XCTAssertEqual(
        HTTPDiagnosis.sentOnReason(URL(string: to)!, from: from),
        "the server sent the request on to \(named), as a sign-in page does; it is not followed with the credentials")
    }
  }
}
