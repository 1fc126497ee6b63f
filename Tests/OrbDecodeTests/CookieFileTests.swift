import Foundation
import OrbDecode
import XCTest

/// Cookies from a Netscape cookies file go to the requests whose domain and path they name, and no other.
final class CookieFileTests: XCTestCase {
  let file = CookieFile(
    text: """
      # Netscape HTTP Cookie File
      media.example.com\tFALSE\t/\tFALSE\t0\tsession\tabc
      .example.com\tTRUE\t/videos\tTRUE\t4102444800\tsso\txyz
      #HttpOnly_media.example.com\tFALSE\t/\tFALSE\t0\thidden\th1
      media.example.com\tFALSE\t/\tFALSE\t1000\told\tgone
      not a cookie line

      """)

  func testEachCookieGoesWhereItsDomainAndPathSay() {
    XCTAssertEqual(file.badLines, [6])
    XCTAssertEqual(
      file.header(for: "https://media.example.com/videos/film.mkv"), "Cookie: session=abc; sso=xyz; hidden=h1")
    XCTAssertEqual(
      file.header(for: "http://media.example.com/videos/film.mkv"), "Cookie: session=abc; hidden=h1",
      "a secure cookie never goes over plain HTTP")
    XCTAssertEqual(
      file.header(for: "https://cdn.example.com/videos/a.ts"), "Cookie: sso=xyz", "subdomains of .example.com")
    XCTAssertNil(file.header(for: "https://cdn.example.com/other/a.ts"), "outside the cookie's path")
    XCTAssertNil(file.header(for: "https://evil.com/videos/"), "another site gets nothing")
    XCTAssertNil(file.header(for: "https://example.com.evil.com/videos/"))
    let folder = CookieFile(text: "a.example\tFALSE\t/media/\tFALSE\t0\tk\tv\n")
    XCTAssertEqual(folder.header(for: "https://a.example/media/"), "Cookie: k=v", "a path with its slash")
    XCTAssertNil(folder.header(for: "https://a.example/mediafiles/x"))
  }
}
