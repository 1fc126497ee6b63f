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

  /// A web page is told from media its server labels text/html by its first bytes: markup's "<", after white space
  /// or a byte-order mark, in a chunked answer after the chunk's size line (an application server's sign-in page was
  /// taken for media by its size line).
  func testAWebPageIsToldFromMediaByItsFirstBytes() {
    func page(_ sent: [UInt8], chunked: Bool = false, type: String = "text/html; charset=utf-8") -> Bool {
      var headers = ["content-type": type]
      if chunked { headers["transfer-encoding"] = "chunked" }
      var answer = HTTPDiagnosis.Answer(status: 200, headers: headers)
      answer.body = Array(HTTPDiagnosis.content(sent[...], chunked: chunked).prefix(HTTPDiagnosis.sniffedBytes))
      return answer.isWebPage
    }
    XCTAssertTrue(page(Array("<!DOCTYPE html>".utf8)))
    XCTAssertTrue(page(Array("\r\n<html>".utf8)), "white space first")
    XCTAssertTrue(page([0xEF, 0xBB, 0xBF] + Array("<html>".utf8)), "a byte-order mark first")
    XCTAssertTrue(page(Array("1f3\r\n<html>".utf8), chunked: true), "chunked")
    XCTAssertTrue(page([]), "nothing to tell by: a page, as the label says")
    XCTAssertFalse(page([0x1A, 0x45, 0xDF, 0xA3]), "Matroska")
    XCTAssertFalse(page([0, 0, 0, 0x20] + Array("ftyp".utf8)), "MP4")
    XCTAssertFalse(page(Array("G@".utf8)), "MPEG-TS")
    XCTAssertFalse(page(Array("2\r\n\u{1A}E".utf8), chunked: true), "Matroska, chunked")
    XCTAssertFalse(page(Array("<html>".utf8), type: "video/mp4"), "not labelled a page")
  }
}
