import Foundation
import OrbTestSupport
import XCTest

/// The bearer token and `--header` lines go only to the media's own origin: never to another host after a redirect,
/// never to HLS segments on another host. Two loopback servers on two ports are two origins.
final class CredentialTests: XCTestCase {
  private var folder = ""
  private var origin: FaultServer!
  private var elsewhere: FaultServer!

  override func setUpWithError() throws {
    folder = try FaultServer.mediaFolder("creds")
    // The other server's address must be known first: the origin's redirects and playlists point at it.
    elsewhere = try FaultServer(serving: folder)
    origin = try FaultServer(serving: folder, options: ["--other", elsewhere.origin])
  }

  override func tearDown() {
    origin?.stop()
    elsewhere?.stop()
    try? FileManager.default.removeItem(atPath: folder)
  }

  private func probe(_ args: [String]) -> (status: Int32, kind: String?, stderr: String) {
    let r = Orb.run(["--probe", "--events-fd", "2"] + args, timeout: 60)
    let kind = Orb.events(r.stderr).first { $0["event"] as? String == "error" }?["kind"] as? String
    return (r.status, kind, r.stderr)
  }

  func testWithATokenARedirectToAnotherHostIsSignInAndNotFollowed() {
    let r = probe(["--auth-token", "orb-secret", origin.url("elsewhere", "clip.mp4")])
    XCTAssertEqual(r.status, 1, r.stderr)
    XCTAssertEqual(r.kind, "sign-in", r.stderr)
    XCTAssertTrue(elsewhere.requests.isEmpty, "the other host was asked: \(elsewhere.requests)")
    XCTAssertFalse(r.stderr.contains("orb-secret"), "the token in a message: \(r.stderr)")
  }

  func testWithoutATokenRedirectsAreFollowedWithoutTheHeaders() {
    let r = probe(["--header", "X-Secret: s3cret", origin.url("elsewhere", "clip.mp4")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let there = elsewhere.requests
    XCTAssertFalse(there.isEmpty, "the redirect was not followed")
    XCTAssertTrue(there.allSatisfy { $0.header("X-Secret") == nil }, "the header left its origin: \(there)")
    XCTAssertEqual(origin.requests.first?.header("X-Secret"), "s3cret", "the origin had it")
  }

  /// A session cookie that the server sets on its redirect to the media goes with the media's requests (a sign-in
  /// that hands one over on the way was refused with 403: the player followed the redirect itself and dropped it).
  func testACookieSetOnTheWayGoesWithTheMedia() throws {
    let r = probe([origin.url("setcookie", "clip.mp4")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let media = origin.requests("/needcookie/")
    XCTAssertFalse(media.isEmpty, "the redirect was not followed: \(origin.requests)")
    XCTAssertTrue(media.allSatisfy { $0.header("Cookie")?.contains("sess=abc123") == true }, "\(media)")
    // Beside the cookie jar's own, not instead of it (nor hidden by it).
    let jar = "\(folder)/cookies.txt"
    try "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\torb-cookie\n"
      .write(toFile: jar, atomically: true, encoding: .utf8)
    let withJar = probe(["--cookies-file", jar, origin.url("setcookie", "clip.mp4")])
    XCTAssertEqual(withJar.status, 0, withJar.stderr)
    let both = origin.requests("/needcookie/").dropFirst(media.count)
    XCTAssertFalse(both.isEmpty)
    XCTAssertTrue(
      both.allSatisfy { $0.header("Cookie") == "session=orb-cookie; sess=abc123" }, "\(both.map(\.headers))")
  }

  func testARedirectWithinTheOriginKeepsTheToken() {
    let r = probe(["--auth-token", "orb-secret", origin.url("here", "clip.mp4")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let clip = origin.requests.filter { $0.path == "/file/clip.mp4" }
    XCTAssertFalse(clip.isEmpty)
    XCTAssertTrue(clip.allSatisfy { $0.header("Authorization") == "Bearer orb-secret" }, "\(clip)")
  }

  /// A session cookie set on the way to an HLS playlist goes with the playlist, never to segments on another host
  /// (FFmpeg sends segments on with the playlist connection's cookies, around the origin guard, when it keeps
  /// connections alive).
  func testACookieSetOnTheWayToAPlaylistStaysOffAnotherHostsSegments() {
    let png = "\(folder)/frame.png"
    let r = Orb.run(["--frame-at", "2.5", "--output", png, origin.url("setcookie", "index.m3u8?segments=other")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let playlist = origin.requests("/needcookie/index.m3u8")
    XCTAssertTrue(playlist.allSatisfy { $0.header("Cookie") == "sess=abc123" }, "\(playlist)")
    let segments = elsewhere.requests.filter { $0.path.hasSuffix(".ts") }
    XCTAssertGreaterThan(segments.count, 1, "segments read: \(segments)")
    XCTAssertTrue(segments.allSatisfy { $0.header("Cookie") == nil }, "the cookie went to \(segments)")
  }

  func testHLSSegmentsOnAnotherHostGetNoToken() {
    let r = probe(["--auth-token", "orb-secret", origin.url("file", "index.m3u8?segments=other")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let playlist = origin.requests.filter { $0.path.hasPrefix("/file/index.m3u8") }
    XCTAssertTrue(playlist.allSatisfy { $0.header("Authorization") == "Bearer orb-secret" }, "\(playlist)")
    let segments = elsewhere.requests.filter { $0.path.hasSuffix(".ts") }
    XCTAssertFalse(segments.isEmpty, "no segment was read")
    XCTAssertTrue(segments.allSatisfy { $0.header("Authorization") == nil }, "the token went to \(segments)")
  }

  /// A segment at the origin that redirects to another host: FFmpeg would follow it with the request's headers.
  /// With a token it is turned away as a sign-in (the other host is never asked); without one it is followed
  /// without the headers.
  func testAnHLSSegmentRedirectedElsewhereNeverTakesTheCredentials() {
    let signIn = probe(["--auth-token", "orb-secret", origin.url("file", "index.m3u8?segments=elsewhere")])
    XCTAssertEqual(signIn.status, 1, signIn.stderr)
    XCTAssertEqual(signIn.kind, "sign-in", signIn.stderr)
    XCTAssertTrue(elsewhere.requests.isEmpty, "the other host was asked: \(elsewhere.requests)")
    let bounced = origin.requests.filter { $0.path.hasPrefix("/elsewhere/") }
    XCTAssertFalse(bounced.isEmpty, "no segment was asked for")
    XCTAssertTrue(bounced.allSatisfy { $0.header("Authorization") == "Bearer orb-secret" }, "\(bounced)")

    let followed = probe(["--header", "X-Secret: s3cret", origin.url("file", "index.m3u8?segments=elsewhere")])
    XCTAssertEqual(followed.status, 0, followed.stderr)
    let there = elsewhere.requests
    XCTAssertFalse(there.isEmpty, "the redirect was not followed")
    XCTAssertTrue(there.allSatisfy { $0.header("X-Secret") == nil }, "the header left its origin: \(there)")
  }

  /// Cookies from `--cookies-file` reach the host they name and stay behind when a redirect leaves it.
  func testCookiesGoToTheirHostOnly() throws {
    let cookies = "\(folder)/cookies.txt"
    try "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\torb-cookie\n"
      .write(toFile: cookies, atomically: true, encoding: .utf8)
    let r = probe(["--cookies-file", cookies, origin.url("elsewhere", "clip.mp4")])
    XCTAssertEqual(r.status, 0, r.stderr)
    XCTAssertEqual(origin.requests.first?.header("Cookie"), "session=orb-cookie")
    let there = elsewhere.requests
    XCTAssertFalse(there.isEmpty)
    XCTAssertTrue(there.allSatisfy { $0.header("Cookie") == nil }, "the cookie left its host: \(there)")
  }

  /// Each request takes the cookies that match its own path: the playlist's cookie stays off the segments beside
  /// it on the same host, and the cookie for the whole host goes with both.
  func testEachRequestTakesTheCookiesOfItsOwnPath() throws {
    let cookies = "\(folder)/cookies.txt"
    try """
    # Netscape HTTP Cookie File
    127.0.0.1\tFALSE\t/hls-here/\tFALSE\t0\tplaylist\tonly-here
    127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\torb-cookie

    """.write(toFile: cookies, atomically: true, encoding: .utf8)
    let r = probe(["--cookies-file", cookies, origin.url("hls-here", "index.m3u8?segments=/media/")])
    XCTAssertEqual(r.status, 0, r.stderr)
    let asked = origin.requests
    let playlist = asked.filter { $0.path.hasPrefix("/hls-here/index.m3u8") }
    XCTAssertFalse(playlist.isEmpty)
    for request in playlist {
      let cookie = request.header("Cookie") ?? ""
      XCTAssertTrue(cookie.contains("playlist=only-here") && cookie.contains("session=orb-cookie"), cookie)
    }
    let segments = asked.filter { $0.path.hasPrefix("/media/") }
    XCTAssertFalse(segments.isEmpty, "no segment was read: \(asked)")
    XCTAssertTrue(
      segments.allSatisfy { $0.header("Cookie") == "session=orb-cookie" },
      "a segment's cookies: \(segments.map { $0.header("Cookie") ?? "none" })")
  }

  func testAWebPageWhereMediaWasExpectedIsSignInWithCredentials() {
    XCTAssertEqual(probe(["--auth-token", "orb-secret", origin.url("page", "clip.mp4")]).kind, "sign-in")
    let plain = probe([origin.url("page", "clip.mp4")])
    XCTAssertEqual(plain.kind, "unplayable")
    XCTAssertTrue(plain.stderr.contains("web page"), plain.stderr)
  }
}
