import Foundation
import OrbTestSupport
import XCTest

/// Every way a network source fails, against `FaultServer` on the loopback, played in a window as a host launches
/// it: what the host hears (the events, to the last position), that what can be recovered resumes where it was, and,
/// from the server's log, that the token, the cookies and the `--header` reached the media's origin and no other.
/// Nothing secret shows in standard error, an event, the window or its stats overlay.
final class NetworkFaultTests: XCTestCase {
  static let token = "orb-token-7f3a"
  static let cookie = "orb-cookie-91c2"
  /// A cookie for `localhost`: the player's origin is 127.0.0.1, so this one goes nowhere either.
  static let localCookie = "orb-cookie-10ca"
  static let header = "orb-header-55d0"
  static var secrets: [String] { [token, cookie, localCookie, header] }

  private var cookies = ""
  private var servers: [FaultServer] = []

  override func setUpWithError() throws {
    try Screen.requireDisplay()
    cookies = NSTemporaryDirectory() + "orb-fault-cookies-\(UUID().uuidString).txt"
    try """
    # Netscape HTTP Cookie File
    127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\t\(Self.cookie)
    localhost\tFALSE\t/\tFALSE\t0\tthere\t\(Self.localCookie)

    """.write(toFile: cookies, atomically: true, encoding: .utf8)
  }

  override func tearDown() {
    for server in servers { server.stop() }
    servers = []
    try? FileManager.default.removeItem(atPath: cookies)
  }

  // MARK: - Media, servers, players

  /// 3 s of testsrc2, 640x360 at 30 fps, with its index first (a break at half the bytes is half way in).
  static func clip() throws -> String { try RetryTests.clip() }

  /// 3 s of 640x360 H.264 at 30 fps with a key picture every 5 (a resume lands just behind a break), faststart.
  static func shortGOPClip() throws -> String {
    try TestMedia.path(
      "moving-3s-g5-faststart.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=3", "-c:v", "libx264", "-preset", "veryfast",
        "-g", "5", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
      ])
  }

  /// A folder of an HLS VOD playlist, `index.m3u8`, of 8 one-second segments `seg0.ts`…`seg7.ts` (testsrc2 at
  /// 320x180 and a tone), made once in the test media folder.
  static func hlsFolder() throws -> String {
    let folder = TestMedia.directory + "/hls-8x1s-v1"
    if FileManager.default.fileExists(atPath: folder + "/index.m3u8") { return folder }
    let building = "\(folder).tmp-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: building, withIntermediateDirectories: true)
    let made = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=8",
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=8", "-c:v", "libx264", "-preset",
        "ultrafast", "-g", "25", "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0",
        "-hls_segment_filename", "\(building)/seg%d.ts", "\(building)/index.m3u8",
      ], timeout: 120)
    guard made.succeeded else { throw TestMediaError("ffmpeg could not make the HLS playlist: \(made.stderr)") }
    if rename(building, folder) != 0 { try? FileManager.default.removeItem(atPath: building) }
    return folder
  }

  /// A `FaultServer` serving `files` (or the folder `serving`) with `options`, stopped when the test ends.
  private func server(_ files: [String: String] = [:], serving: String? = nil, _ options: [String] = []) throws
    -> FaultServer
  {
    let server = try FaultServer(files: files, serving: serving, options: options)
    servers.append(server)
    return server
  }

  /// The server of `clip()` as clip.mp4.
  private func clipServer(_ options: [String] = []) throws -> FaultServer {
    try server(["clip.mp4": try Self.clip()], options)
  }

  /// The token, a header and the cookie file; `token: false` leaves the token out.
  private func credentials(token: Bool = true) -> [String] {
    (token ? ["--auth-token", Self.token] : []) + [
      "--header", "X-Orb-Secret: \(Self.header)", "--cookies-file", cookies,
    ]
  }

  /// Starts the player in a window on `url` with the events on its standard output.
  private func start(_ url: String, _ arguments: [String] = []) throws -> BackgroundPlayer {
    try BackgroundPlayer(["--events-fd", "1", "--error-linger-ms", "0"] + arguments + [url])
  }

  /// Plays `url` to its end (or its error); the player, its exit status checked against `status`.
  private func play(
    _ url: String, _ arguments: [String] = [], status: Int32, timeout: Double = 60, file: StaticString = #filePath,
    line: UInt = #line
  ) throws -> BackgroundPlayer {
    let player = try start(url, arguments)
    XCTAssertEqual(player.wait(timeout: timeout), status, player.stdout + player.stderr, file: file, line: line)
    return player
  }

  private func events(_ player: BackgroundPlayer, _ name: String) -> [[String: Any]] {
    player.events.filter { $0["event"] as? String == name }
  }

  private func states(_ player: BackgroundPlayer) -> [String] {
    events(player, "state").compactMap { $0["state"] as? String }
  }

  private func last(_ player: BackgroundPlayer) -> [String: Any] { player.events.last ?? [:] }

  // MARK: - What every credentialed run is checked for

  /// Every request that reached `home` (a Host header) carried the credentials, and no request anywhere else carried
  /// any of them: nothing of the token, the header or either cookie.
  private func assertCredentialsStayedHome(
    _ requests: [FaultServer.Request], home: String, token: Bool = true, file: StaticString = #filePath,
    line: UInt = #line
  ) {
    let there = requests.filter { $0.host == home }
    XCTAssertFalse(there.isEmpty, "no request reached \(home): \(requests.map(\.path))", file: file, line: line)
    for r in there {
      XCTAssertEqual(
        r.header("Authorization"), token ? "Bearer \(Self.token)" : nil, "\(r.path) at \(home)", file: file,
        line: line)
      XCTAssertEqual(r.header("X-Orb-Secret"), Self.header, "\(r.path) at \(home)", file: file, line: line)
      XCTAssertEqual(r.header("Cookie"), "session=\(Self.cookie)", "\(r.path) at \(home)", file: file, line: line)
    }
    for r in requests where r.host != home {
      let leaked = r.headers.filter { h in Self.secrets.contains { h.value.contains($0) } }
      XCTAssertTrue(leaked.isEmpty, "\(r.path) at \(r.host) was sent \(leaked)", file: file, line: line)
    }
  }

  /// Nothing secret in the player's standard error (its log lines and error messages) or in any event.
  private func assertNoSecret(_ player: BackgroundPlayer, file: StaticString = #filePath, line: UInt = #line) {
    for secret in Self.secrets {
      XCTAssertFalse(player.stderr.contains(secret), "\(secret) in stderr: \(player.stderr)", file: file, line: line)
      XCTAssertFalse(player.stdout.contains(secret), "\(secret) in an event: \(player.stdout)", file: file, line: line)
    }
  }

  // MARK: - Refusals

  /// 401 and 403 are `sign-in`; 404, 410, 400 and any other 4xx are `missing`: each one error event naming the
  /// address, exit 1, not tried again, and the credentials went to the origin with every request.
  func testEachRefusalIsTheKindTheHostExpectsAndIsNotTriedAgain() throws {
    let server = try clipServer()
    for (code, kind) in [
      ("401", "sign-in"), ("403", "sign-in"), ("404", "missing"), ("410", "missing"), ("400", "missing"),
      ("451", "missing"),
    ] {
      let url = server.url(code, "clip.mp4")
      let player = try play(url, credentials(), status: 1)
      let errors = events(player, "error")
      XCTAssertEqual(errors.count, 1, "\(code): \(player.stdout)")
      XCTAssertEqual(errors.first?["kind"] as? String, kind, "\(code): \(player.stdout)")
      let message = errors.first?["message"] as? String ?? ""
      XCTAssertTrue(message.hasPrefix("cannot open '\(url)': "), "\(code): \(message)")
      XCTAssertEqual(last(player)["event"] as? String, "error", "the error is the last word: \(player.stdout)")
      XCTAssertTrue(events(player, "retry").isEmpty, "\(code) is not worth a retry: \(player.stdout)")
      XCTAssertTrue(events(player, "ended").isEmpty, "an error is not an end: \(player.stdout)")
      assertNoSecret(player)
    }
    assertCredentialsStayedHome(server.requests, home: server.originHost)
  }

  /// Once the error is said, nothing more is while the window shows it: no `state` (the end of the wait to try again
  /// was read as playing again) and no `settings`, which said playback went on; the error is the host's last event.
  func testTheErrorIsTheLastEventWhileTheWindowShowsIt() throws {
    let server = try clipServer()
    for (mode, extra) in [("503", ["--retry-for", "1"]), ("401", [])] {
      let player = try play(server.url(mode, "clip.mp4"), extra + ["--error-linger-ms", "1500"], status: 1)
      XCTAssertEqual(last(player)["event"] as? String, "error", "\(mode): \(player.stdout)")
      XCTAssertEqual(events(player, "error").count, 1, "\(mode): \(player.stdout)")
    }
  }

  /// A web page where media was expected: with credentials it is a sign-in service's answer (`sign-in`), without
  /// them a page that is not a video (`unplayable`); the message says so, the token went to the origin only.
  func testAWebPageIsSignInWithCredentialsAndUnplayableWithout() throws {
    let server = try clipServer()
    let url = server.url("page", "clip.mp4")
    let signIn = try play(url, credentials(), status: 1)
    XCTAssertEqual(events(signIn, "error").first?["kind"] as? String, "sign-in", signIn.stdout)
    assertNoSecret(signIn)
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    let plain = try play(url, status: 1)
    let error = events(plain, "error").first
    XCTAssertEqual(error?["kind"] as? String, "unplayable", plain.stdout)
    XCTAssertEqual(error?["message"] as? String, "cannot open '\(url)': the server sent a web page, not a video")
  }

  /// A video its server calls a web page (`text/html`, as a web server with no type for the file's extension may)
  /// plays, with the credentials, as mpv and VLC play it: its first bytes are not markup.
  func testAVideoServedAsAWebPagePlays() throws {
    let server = try clipServer()
    let player = try play(server.url("html", "clip.mp4"), credentials(), status: 0)
    XCTAssertEqual(last(player)["event"] as? String, "ended", player.stdout)
    XCTAssertTrue(events(player, "error").isEmpty, player.stdout)
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    let plain = try play(server.url("html", "clip.mp4"), status: 0)
    XCTAssertEqual(last(plain)["event"] as? String, "ended", plain.stdout)
  }

  /// A redirect loop is named ("too many redirects"), not tried again, and the walk is bounded; each hop stays at
  /// the origin, so each takes the credentials.
  func testARedirectLoopIsNamedAndNotTriedAgain() throws {
    let server = try clipServer()
    let player = try play(server.url("loop-a", "clip.mp4"), credentials(), status: 1)
    let error = events(player, "error").first
    XCTAssertEqual(error?["kind"] as? String, "unplayable", player.stdout)
    XCTAssertTrue((error?["message"] as? String ?? "").hasSuffix("too many redirects (more than 10)"), player.stdout)
    XCTAssertTrue(events(player, "retry").isEmpty, player.stdout)
    XCTAssertLessThanOrEqual(server.requests.count, 12, "the walk went on: \(server.requests.map(\.path))")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  /// A name that does not resolve is a network failure (tried again, by the rule), and the reason names the host.
  func testAnUnknownHostIsANetworkErrorThatNamesIt() throws {
    let player = try play("http://nonexistent.invalid/clip.mp4", ["--retry-for", "1"], status: 1, timeout: 90)
    let tries = events(player, "retry")
    XCTAssertEqual(tries.count, 1, player.stdout)
    XCTAssertEqual(tries.first?["reason"] as? String, "the server's name cannot be found (nonexistent.invalid)")
    let error = events(player, "error").first
    XCTAssertEqual(error?["kind"] as? String, "network", player.stdout)
    XCTAssertTrue((error?["message"] as? String ?? "").contains("nonexistent.invalid"), player.stdout)
  }

  // MARK: - Redirects and other origins

  /// A redirect to the same host keeps the credentials: both requests have them, and it plays to its end.
  func testARedirectWithinTheHostKeepsTheCredentials() throws {
    let server = try clipServer()
    let player = try play(server.url("here", "clip.mp4"), credentials(), status: 0)
    XCTAssertEqual(last(player)["reason"] as? String, "eof", player.stdout)
    XCTAssertFalse(server.requests("/file/clip.mp4").isEmpty, "the redirect was not followed")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  /// `localhost` is another host than `127.0.0.1`, though it is the same server: with a token a redirect there is
  /// `sign-in` and is not followed (nothing reaches `localhost`); without one it is followed and plays, and nothing
  /// of the header or the cookies (not even localhost's own) goes there.
  func testARedirectToLocalhostIsAnotherHost() throws {
    let server = try clipServer()
    let url = server.url("elsewhere", "clip.mp4")
    let signIn = try play(url, credentials(), status: 1)
    let error = events(signIn, "error").first
    XCTAssertEqual(error?["kind"] as? String, "sign-in", signIn.stdout)
    XCTAssertTrue((error?["message"] as? String ?? "").contains("localhost"), signIn.stdout)
    XCTAssertEqual(Set(server.requests.map(\.host)), [server.originHost], "another host was asked")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(signIn)

    let before = server.requests.count
    let followed = try play(url, credentials(token: false), status: 0)
    XCTAssertEqual(last(followed)["reason"] as? String, "eof", followed.stdout)
    let asked = Array(server.requests.dropFirst(before))
    XCTAssertTrue(asked.contains { $0.host == "localhost:\(server.port)" }, "not followed: \(asked.map(\.host))")
    assertCredentialsStayedHome(asked, home: server.originHost, token: false)
    assertNoSecret(followed)
  }

  /// A stream that breaks off half way, whose server then sends the rest to another host (`localhost`): with a token
  /// that is how a sign-in service turns a request away, a `sign-in` error with the position (exit 1) and nothing
  /// sent there; it was an end half way (`eof`, exit 0), the host told the film was over. Without credentials the
  /// redirect is followed and it plays to its end.
  func testARedirectElsewhereInTheMiddleIsSignInWithAToken() throws {
    let server = try clipServer(["--moved"])
    let url = server.url("disconnect", "clip.mp4")
    let signIn = try play(url, credentials(), status: 1)
    let error = events(signIn, "error").first
    XCTAssertEqual(error?["kind"] as? String, "sign-in", signIn.stdout)
    XCTAssertTrue(
      (error?["message"] as? String ?? "").contains("sent the request on to localhost:\(server.port)"), signIn.stdout)
    XCTAssertEqual(
      Double(error?["position_ms"] as? Int ?? 0), 1500, accuracy: 700, "where it stopped: \(signIn.stdout)")
    XCTAssertTrue(events(signIn, "ended").isEmpty, signIn.stdout)
    XCTAssertTrue(events(signIn, "retry").isEmpty, "a sign-in is not tried again: \(signIn.stdout)")
    XCTAssertEqual(Set(server.requests.map(\.host)), [server.originHost], "another host was asked")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(signIn)

    let fresh = try clipServer(["--moved"])
    let followed = try play(fresh.url("disconnect", "clip.mp4"), [], status: 0)
    XCTAssertEqual(last(followed)["reason"] as? String, "eof", followed.stdout)
    XCTAssertEqual(Double(last(followed)["position_ms"] as? Int ?? 0), 3000, accuracy: 150, followed.stdout)
    XCTAssertEqual(fresh.cuts.count, 1)
    XCTAssertTrue(
      fresh.requests.contains { $0.host == "localhost:\(fresh.port)" }, "not followed: \(fresh.requests.map(\.host))")
  }

  /// The same with a `--header` and cookies but no token (a person's own server behind a proxy, not a launch by the
  /// media server): the redirect is followed, without them, and it plays to its end, the connection going on from
  /// the byte it had reached. With a key picture every 5 pictures, the resume lands just behind the break, inside what
  /// was already read: the new connection must take up at that byte, or the picture data comes from the file's start.
  func testARedirectElsewhereInTheMiddleWithoutATokenIsFollowedWithoutTheCredentials() throws {
    for clip in [try Self.clip(), try Self.shortGOPClip()] {
      let server = try server(["clip.mp4": clip], ["--moved"])
      let player = try play(server.url("disconnect", "clip.mp4"), credentials(token: false), status: 0)
      XCTAssertEqual(last(player)["reason"] as? String, "eof", player.stdout)
      XCTAssertEqual(Double(last(player)["position_ms"] as? Int ?? 0), 3000, accuracy: 150, player.stdout)
      let stats = last(player)["stats"] as? [String: Any]
      // The packet the break cut in two is the one that is damaged; bytes from elsewhere would damage most after it.
      XCTAssertLessThanOrEqual(stats?["corrupt_packets"] as? Int ?? 99, 1, "after the move: \(player.stdout)")
      let resumed = server.requests.filter {
        $0.host == "localhost:\(server.port)" && !($0.header("Range") ?? "bytes=0-").hasPrefix("bytes=0-")
      }
      XCTAssertFalse(
        resumed.isEmpty, "the connection did not go on there: \(server.requests.map { ($0.host, $0.header("Range")) })")
      assertCredentialsStayedHome(server.requests, home: server.originHost, token: false)
      assertNoSecret(player)
    }
  }

  /// The other way round: the origin first sends the file from a second host (a CDN), which, half way, sends it
  /// back to the origin, where it is served only with the header. The connection goes back with the credentials
  /// (none went to the second host) and plays to its end.
  func testAFileSentBackToItsOriginMidwayGetsTheCredentialsThere() throws {
    // The second host is the same server under its other name (localhost): another origin to the player.
    let server = try clipServer(["--moved-home", "--need", "X-Orb-Secret: \(Self.header)"])
    let player = try play(server.url("elsewhere", "clip.mp4?to=disconnect"), credentials(token: false), status: 0)
    XCTAssertEqual(last(player)["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(last(player)["position_ms"] as? Int ?? 0), 3000, accuracy: 150, player.stdout)
    XCTAssertEqual(server.cuts.count, 1)
    let back = server.requests.filter { $0.host == server.originHost && $0.path == "/file/clip.mp4" }
    XCTAssertFalse(back.isEmpty, "not sent back: \(server.requests.map { ($0.host, $0.path) })")
    assertCredentialsStayedHome(server.requests, home: server.originHost, token: false)
    assertNoSecret(player)
  }

  /// With a token, a move within the origin (a file renamed or re-stored mid-way) is no sign-in: the connection goes
  /// there with the token and plays to its end.
  func testAMoveWithinTheOriginMidwayKeepsTheToken() throws {
    let server = try clipServer(["--moved-home", "--need", "X-Orb-Secret: \(Self.header)"])
    let player = try play(server.url("disconnect", "clip.mp4"), credentials(), status: 0)
    XCTAssertEqual(last(player)["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(last(player)["position_ms"] as? Int ?? 0), 3000, accuracy: 150, player.stdout)
    XCTAssertTrue(events(player, "error").isEmpty, player.stdout)
    XCTAssertFalse(server.requests("/file/").isEmpty, "not moved: \(server.requests.map(\.path))")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  /// A move to a file of another length is not taken for the same file: the player stops with an error that says so,
  /// where it had got to, and does not try it again.
  func testAMoveToAnotherFileMidwayIsAnErrorThatSaysSo() throws {
    let server = try server(
      ["clip.mp4": try Self.clip(), "other.mp4": try Self.shortGOPClip()],
      ["--moved-home", "--moved-name", "other.mp4"])
    let player = try play(server.url("disconnect", "clip.mp4"), credentials(token: false), status: 1)
    let error = events(player, "error").last
    XCTAssertEqual(error?["kind"] as? String, "unplayable", player.stdout)
    XCTAssertTrue(
      (error?["message"] as? String ?? "").contains("the server now sends another file"), player.stdout)
    XCTAssertEqual(Double(error?["position_ms"] as? Int ?? 0), 1500, accuracy: 700, player.stdout)
    XCTAssertTrue(events(player, "retry").isEmpty, "tried again: \(player.stdout)")
    XCTAssertTrue(server.requests("/file/clip.mp4").isEmpty, "moved after all: \(server.requests.map(\.path))")
    assertCredentialsStayedHome(server.requests, home: server.originHost, token: false)
    assertNoSecret(player)
  }

  /// An HLS playlist served under a name without an extension and a generic type is found by its first bytes, and
  /// its demuxer (not the movable connection for a single file) opens the segments, with the credentials at the
  /// origin: it plays to its end.
  func testAPlaylistUnderAGenericNameAndTypeIsPlayedAsOne() throws {
    let folder = try Self.hlsFolder()
    var files = ["stream": folder + "/index.m3u8"]
    for i in 0..<8 { files["seg\(i).ts"] = folder + "/seg\(i).ts" }
    let server = try server(files)
    let player = try play(server.url("file", "stream"), credentials(), status: 0)
    XCTAssertEqual(last(player)["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(last(player)["position_ms"] as? Int ?? 0), 8000, accuracy: 500, player.stdout)
    XCTAssertEqual(
      Set(server.requests("/file/seg").map(\.path)), Set((0..<8).map { "/file/seg\($0).ts" }), "every segment")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  /// A password in the URL (`user:password@host`) and a media server's `api_key` are secrets too: the error the host
  /// and stderr get names the address without them.
  func testTheURLsOwnSecretsAreNotInTheErrors() throws {
    let server = try clipServer()
    let url = "http://qa:pw-5521@127.0.0.1:\(server.port)/401/clip.mp4?api_key=key-7734&start=0"
    let player = try play(url, [], status: 1)
    let error = events(player, "error").last
    XCTAssertEqual(error?["kind"] as? String, "sign-in", player.stdout)
    XCTAssertTrue(
      (error?["message"] as? String ?? "").hasPrefix(
        "cannot open 'http://127.0.0.1:\(server.port)/401/clip.mp4?api_key=***&start=0': "), player.stdout)
    for secret in ["pw-5521", "key-7734"] {
      XCTAssertFalse(player.stdout.contains(secret), player.stdout)
      XCTAssertFalse(player.stderr.contains(secret), player.stderr)
    }
  }

  /// HLS whose segments are on a second origin: the playlist takes the credentials, no segment does, and it plays to
  /// its end.
  func testHLSSegmentsOnASecondOriginGetNoCredentials() throws {
    let folder = try Self.hlsFolder()
    let second = try server(serving: folder)
    let origin = try server(serving: folder, ["--other", second.origin])
    let player = try play(origin.url("file", "index.m3u8?segments=other"), credentials(), status: 0)
    XCTAssertEqual(last(player)["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(last(player)["position_ms"] as? Int ?? 0), 8000, accuracy: 500, player.stdout)
    XCTAssertEqual(
      Set(second.requests.map(\.path)), Set((0..<8).map { "/file/seg\($0).ts" }), "every segment, from the second")
    assertCredentialsStayedHome(origin.requests + second.requests, home: origin.originHost)
    assertNoSecret(player)
  }

  // MARK: - Failures worth trying again

  /// A 500 at the open is tried again after a second, as the host hears, and then plays from the resume point to
  /// its end; the second try took the credentials too.
  func testAServerErrorOnceIsTriedAgainAndPlaysFromTheResumePoint() throws {
    let server = try clipServer()
    let player = try play(server.url("500-once", "clip.mp4"), credentials() + ["--resume-ms", "1000"], status: 0)
    let tries = events(player, "retry")
    XCTAssertEqual(tries.count, 1, player.stdout)
    XCTAssertEqual(tries.first?["attempt"] as? Int, 1)
    XCTAssertEqual(tries.first?["of"] as? Int, 14)
    XCTAssertEqual(tries.first?["in_ms"] as? Int, 1000)
    XCTAssertEqual(tries.first?["reason"] as? String, "server returned 500")
    XCTAssertEqual(states(player), ["buffering", "playing"], player.stdout)
    let playing = events(player, "state").last
    XCTAssertEqual(Double(playing?["position_ms"] as? Int ?? 0), 1000, accuracy: 50, "from the resume point")
    let ended = last(player)
    XCTAssertEqual(ended["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 3000, accuracy: 150, player.stdout)
    let asked = server.requests.map(\.time)
    XCTAssertGreaterThan(asked.count, 1)
    XCTAssertGreaterThan(asked[1] - asked[0], 0.9, "the second try waited its second")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  /// An MP4 with its index at the end, with sound, from a server that ignores range requests: nothing of it can be
  /// read once the index is found, and the host is told why (the server), as it is for a resume point, not that the
  /// file is damaged.
  func testAFileThatNeedsRangeRequestsFromAServerWithoutThemSaysSo() throws {
    let clip = try TestMedia.path(
      "moov-last-sound-3s.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=3", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=3", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac",
      ])
    let server = try server(["clip.mp4": clip])
    let url = server.url("norange", "clip.mp4")
    let player = try play(url, [], status: 1)
    XCTAssertEqual(last(player)["event"] as? String, "error", player.stdout)
    XCTAssertEqual(last(player)["kind"] as? String, "unplayable", player.stdout)
    XCTAssertEqual(
      last(player)["message"] as? String,
      "cannot open '\(url)': the server cannot seek in it (it ignores range requests), and this file needs that",
      player.stdout)
  }

  /// A file the server cuts short while it is played (its copy replaced by a shorter one): the read breaks off and a
  /// reconnect at that byte is refused as past the end (416). That is said at once, with the sizes, and not tried
  /// again for five minutes as an "input/output error".
  func testAFileCutShortOnTheServerMidwayIsSaidToBe() throws {
    let server = try clipServer()
    let url = server.url("shrunk", "clip.mp4")
    let player = try play(url, [], status: 1)
    let size = try XCTUnwrap(
      (try? FileManager.default.attributesOfItem(atPath: try Self.clip()))?[.size] as? Int)
    XCTAssertTrue(events(player, "retry").isEmpty, player.stdout)
    XCTAssertEqual(last(player)["kind"] as? String, "unplayable", player.stdout)
    XCTAssertEqual(
      last(player)["message"] as? String,
      "stopped playing '\(url)': the server now has \(size / 2) bytes of it, not the \(size) it first said: it seems "
        + "cut short", player.stdout)
    XCTAssertEqual(Double(last(player)["position_ms"] as? Int ?? 0), 1500, accuracy: 700, player.stdout)
  }

  /// A server that always stops sending at the same byte, though it says it sends the rest: each try and the final
  /// error say where it stops, not "input/output error".
  func testAServerThatAlwaysStopsAtTheSameByteSaysWhere() throws {
    let server = try clipServer()
    let url = server.url("short", "clip.mp4")
    let player = try play(url, ["--retry-for", "3"], status: 1)
    let size = try XCTUnwrap((try? FileManager.default.attributesOfItem(atPath: try Self.clip()))?[.size] as? Int)
    let reason = "the server stopped sending it at byte \(size / 2) of \(size)"
    let tries = events(player, "retry").compactMap { $0["reason"] as? String }
    XCTAssertFalse(tries.isEmpty, player.stdout)
    XCTAssertEqual(Set(tries), [reason], player.stdout)
    XCTAssertEqual(last(player)["kind"] as? String, "network", player.stdout)
    XCTAssertEqual(last(player)["message"] as? String, "stopped playing '\(url)': \(reason)", player.stdout)
  }

  /// A server that takes the connection and never answers: each try ends after 15 s (as FFmpeg's reads do) with
  /// that reason, not after FFmpeg's own three tries of 15 s each; with one try to spare the host hears the error
  /// about 31 s after the launch (it was 56 s to the first retry, and for ever with tries left).
  func testAServerThatNeverAnswersEndsEachTryAfterFifteenSeconds() throws {
    let server = try clipServer()
    let url = server.url("silent", "clip.mp4")
    let started = Date()
    let player = try play(url, ["--retry-for", "1"], status: 1, timeout: 70)
    let took = Date().timeIntervalSince(started)
    let reason = "the server took the connection but did not answer within 15 s"
    XCTAssertEqual(events(player, "retry").compactMap { $0["reason"] as? String }, [reason], player.stdout)
    XCTAssertEqual(last(player)["kind"] as? String, "network", player.stdout)
    XCTAssertEqual(last(player)["message"] as? String, "cannot open '\(url)': \(reason)", player.stdout)
    XCTAssertGreaterThan(took, 30, player.stdout)
    XCTAssertLessThan(took, 45, player.stdout)
    XCTAssertEqual(server.requests.count, 2, "one request a try: \(server.requests.map(\.path))")
  }

  /// A server that stays down (503) is tried by the rule until `--retry-for` is spent, each try an event with the
  /// server's answer and each request with the credentials, then it is a network error.
  func testAServerThatStaysDownIsANetworkErrorOnceItsTriesAreSpent() throws {
    let server = try clipServer()
    let url = server.url("503", "clip.mp4")
    let player = try play(url, credentials() + ["--retry-for", "3"], status: 1)
    let tries = events(player, "retry")
    XCTAssertEqual(tries.compactMap { $0["attempt"] as? Int }, [1, 2], player.stdout)
    XCTAssertEqual(tries.compactMap { $0["of"] as? Int }, [2, 2])
    XCTAssertEqual(tries.compactMap { $0["in_ms"] as? Int }, [1000, 2000])
    XCTAssertEqual(tries.compactMap { $0["reason"] as? String }, ["server returned 503", "server returned 503"])
    XCTAssertEqual(last(player)["event"] as? String, "error", player.stdout)
    XCTAssertEqual(last(player)["kind"] as? String, "network")
    XCTAssertEqual(last(player)["message"] as? String, "cannot open '\(url)': server returned 503")
    XCTAssertEqual(server.requests.count, 3, "one request a try: \(server.requests.map(\.path))")
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  /// A server that stops sending half way through the body for 4 s: the host hears `buffering` in the middle, then
  /// `playing`, and every picture plays to the end on the same request (nothing to try again).
  func testAStallInTheMiddleIsBufferingAndPlaysOn() throws {
    let server = try clipServer(["--stall", "4"])
    let player = try play(server.url("stall", "clip.mp4"), credentials(), status: 0)
    let buffering =
      events(player, "state").first { $0["state"] as? String == "buffering" }?["position_ms"] as? Int ?? 0
    XCTAssertTrue((500...2500).contains(buffering), "the stall came in the middle: \(player.stdout)")
    XCTAssertEqual(states(player).last, "playing", player.stdout)
    let ended = last(player)
    XCTAssertEqual(ended["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 3000, accuracy: 150, player.stdout)
    XCTAssertGreaterThanOrEqual((ended["stats"] as? [String: Any])?["presented"] as? Int ?? 0, 88, player.stdout)
    XCTAssertTrue(events(player, "retry").isEmpty, player.stdout)
    XCTAssertEqual(server.cuts.count, 1)
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  /// A connection that ends half way through the body (closed, or reset), with the server fine after: the player
  /// asks again from the byte it had reached, with the credentials, and shows every picture once.
  func testABrokenConnectionResumesAtTheByteItReached() throws {
    for mode in ["disconnect", "reset"] {
      let server = try clipServer()
      let player = try play(server.url(mode, "clip.mp4"), credentials(), status: 0)
      let ended = last(player)
      XCTAssertEqual(ended["reason"] as? String, "eof", "\(mode): \(player.stdout)")
      let stats = ended["stats"] as? [String: Any] ?? [:]
      let shown = (stats["presented"] as? Int ?? 0) + (stats["dropped"] as? Int ?? 0)
      XCTAssertTrue((89...91).contains(shown), "\(mode): each of the 90 pictures once: \(stats)")
      XCTAssertTrue(events(player, "error").isEmpty, player.stdout)
      let cut = try XCTUnwrap(server.cuts.first, "\(mode): the answer did not break")
      // The requests after the break (the first two are the player's two-byte look and the whole file).
      let after = server.requests("/\(mode)/").dropFirst(2)
      let resumed = after.first?.header("Range") ?? "none"
      let from = Int(resumed.dropFirst("bytes=".count).prefix { $0.isNumber }) ?? -1
      if mode == "disconnect" {
        XCTAssertEqual(resumed, "bytes=\(cut)-", "resumed at the byte where the answer broke off")
      } else {
        // A reset throws away what had not crossed yet: it asks again from what it had, not from the start.
        XCTAssertTrue((1...cut).contains(from), "\(mode): resumed at \(resumed), broke at \(cut)")
      }
      XCTAssertEqual(after.count, 1, "\(mode): one request after the break: \(server.requests.map(\.path))")
      assertCredentialsStayedHome(server.requests, home: server.originHost)
      assertNoSecret(player)
    }
  }

  /// A 10 KB/s trickle of a 200 kb/s clip: playback waits for data again and again (`buffering`), says so in its
  /// progress, and plays every second of it.
  func testATrickleIsBuffering() throws {
    let clip = try TestMedia.path(
      "trickle-2s-200k.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2", "-c:v", "libx264", "-preset", "ultrafast",
        "-b:v", "200k", "-g", "25", "-movflags", "+faststart",
      ])
    let server = try server(["clip.mp4": clip], ["--rate", "10000"])
    let player = try play(server.url("trickle", "clip.mp4"), credentials(), status: 0, timeout: 90)
    let said = states(player)
    let waited = try XCTUnwrap(said.firstIndex(of: "buffering"), player.stdout)
    XCTAssertTrue(said[waited...].contains("playing"), "it played on after a wait: \(player.stdout)")
    let waiting = events(player, "progress").filter { $0["state"] as? String == "buffering" }
    XCTAssertFalse(waiting.isEmpty, player.stdout)
    // A host counting on from `at` at `speed` must not run ahead while nothing moves.
    XCTAssertTrue(waiting.allSatisfy { ($0["speed"] as? Double) == 0 }, "speed 0 while buffering: \(player.stdout)")
    let ended = last(player)
    XCTAssertEqual(ended["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 2000, accuracy: 150, player.stdout)
    assertCredentialsStayedHome(server.requests, home: server.originHost)
    assertNoSecret(player)
  }

  // MARK: - While it waits to try again

  /// Quitting while the player waits to try again (not paused) is immediate, at the open (the resume point is
  /// where it was) and in the middle of playing (where the picture stopped).
  func testQuitDuringAWaitToTryAgainIsImmediateAndSaysWhereItWas() throws {
    // At the open: the third try waits 4 s.
    let down = try clipServer()
    let title = "backoff-\(UUID().uuidString.prefix(6))"
    let opening = try start(down.url("503", "clip.mp4"), ["--title", title, "--resume-ms", "2000"])
    defer { _ = opening.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), opening.stderr)
    XCTAssertNotNil(
      opening.waitForEvent(timeout: 20) { $0["event"] as? String == "retry" && $0["attempt"] as? Int == 3 },
      opening.stdout)
    var asked = Date()
    Screen.press("q", title: title)
    XCTAssertEqual(opening.wait(timeout: 10), 0, opening.stderr)
    XCTAssertLessThan(Date().timeIntervalSince(asked), 2, "quit waited on the 4 s before the next try")
    XCTAssertEqual(last(opening)["reason"] as? String, "user-quit", opening.stdout)
    XCTAssertEqual(last(opening)["position_ms"] as? Int, 2000, "nothing played: the resume point: \(opening.stdout)")

    // In the middle: the connection breaks half way and the server answers 503 from then on.
    let broken = try clipServer(["--down", "-1"])
    let title2 = "backoff-mid-\(UUID().uuidString.prefix(6))"
    let playing = try start(broken.url("disconnect", "clip.mp4"), ["--title", title2])
    defer { _ = playing.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title2), playing.stderr)
    XCTAssertNotNil(
      playing.waitForEvent(timeout: 30) { $0["event"] as? String == "retry" && $0["attempt"] as? Int == 3 },
      playing.stdout)
    asked = Date()
    Screen.press("q", title: title2)
    XCTAssertEqual(playing.wait(timeout: 10), 0, playing.stderr)
    XCTAssertLessThan(Date().timeIntervalSince(asked), 2, "quit waited on the 4 s before the next try")
    let stopped = try XCTUnwrap(
      events(playing, "state").first { $0["state"] as? String == "buffering" }?["position_ms"] as? Int,
      playing.stdout)
    XCTAssertGreaterThan(stopped, 500, "the break came while playing: \(playing.stdout)")
    XCTAssertEqual(last(playing)["event"] as? String, "ended", playing.stdout)
    XCTAssertEqual(last(playing)["reason"] as? String, "user-quit")
    XCTAssertEqual(
      Double(last(playing)["position_ms"] as? Int ?? 0), Double(stopped), accuracy: 100,
      "the end says where the picture stopped: \(playing.stdout)")
  }

  /// Paused while waiting to try again, the player stops trying (no request, no event, though the wait ran out);
  /// Play tries at once, not when the wait would have ended, and once the server is back it plays to the end.
  func testPausedWhileWaitingStopsTryingAndPlayTriesAtOnce() throws {
    let server = try clipServer()
    let down = server.directory + "/clip.mp4.down"
    XCTAssertTrue(FileManager.default.createFile(atPath: down, contents: nil))
    let title = "retry-pause-\(UUID().uuidString.prefix(6))"
    let player = try start(server.url("503-while", "clip.mp4"), ["--title", title])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    let isPaused = { (e: [String: Any]) in e["event"] as? String == "state" && e["state"] as? String == "paused" }
    /// Waits for try `attempt`'s event and pauses at once; the number of events and of requests by then.
    func pause(at attempt: Int) -> (events: Int, requests: Int) {
      XCTAssertNotNil(
        player.waitForEvent(timeout: 20) { $0["event"] as? String == "retry" && $0["attempt"] as? Int == attempt },
        player.stdout)
      let n = player.events.count
      Screen.press("space", title: title)
      XCTAssertNotNil(player.waitForEvent(after: n, isPaused), "the host hears the pause: \(player.stdout)")
      return (player.events.count, server.requests.count)
    }
    /// Plays: the next request comes at once (the wait had seconds left, or had run out while paused).
    func play(after requests: Int) throws {
      let pressed = Date()
      Screen.press("space", title: title)
      let deadline = Date(timeIntervalSinceNow: 10)
      while server.requests.count == requests && Date() < deadline { usleep(50_000) }
      let next = try XCTUnwrap(server.requests.dropFirst(requests).first, "Play did not try: \(player.stdout)")
      XCTAssertLessThan(next.time - pressed.timeIntervalSince1970, 2, "Play waited for the wait to end")
    }
    // The third try waits 4 s: paused for 5, it does not try when the wait runs out.
    let third = pause(at: 3)
    usleep(5_000_000)
    XCTAssertEqual(server.requests.count, third.requests, "paused, it tried: \(server.requests.map(\.path))")
    let said = player.events.dropFirst(third.events).filter { $0["event"] as? String != "progress" }
    XCTAssertTrue(said.isEmpty, "paused, it said \(said)")
    try play(after: third.requests)
    // The fourth waits 8 s: paused for one and played, it tries at once, and the server is back.
    let fourth = pause(at: 4)
    usleep(1_000_000)
    try FileManager.default.removeItem(atPath: down)
    try play(after: fourth.requests)
    XCTAssertEqual(player.wait(timeout: 30), 0, player.stderr)
    XCTAssertEqual(last(player)["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(last(player)["position_ms"] as? Int ?? 0), 3000, accuracy: 150, player.stdout)
    XCTAssertEqual(events(player, "retry").count, 4, player.stdout)
  }

  /// While it waits, the window says "Reconnecting… (try N of M)" and the server's answer, as a screen reader
  /// reads it, and what it says follows the tries.
  func testTheWindowSaysItIsReconnectingAndWhy() throws {
    try Accessibility.require()
    let server = try clipServer()
    let title = "reconnecting-\(UUID().uuidString.prefix(6))"
    let player = try start(server.url("503", "clip.mp4"), ["--title", title, "--retry-for", "20"])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    let pid = player.process.processIdentifier
    let text = { (tree: Accessibility.Node) in tree.all.map { $0.name + "\n" + $0.text }.joined(separator: "\n") }
    // The third and fourth tries wait 4 and 8 s: time enough to read the tree before the next, though loaded.
    for attempt in [3, 4] {
      XCTAssertNotNil(
        player.waitForEvent(timeout: 20) { $0["event"] as? String == "retry" && $0["attempt"] as? Int == attempt },
        player.stdout)
      let wanted = "Reconnecting… (try \(attempt) of 5)\nserver returned 503"
      let tree = try Accessibility.wait(pid) { text($0).contains(wanted) }
      XCTAssertTrue(text(tree).contains(wanted), "the window says: \(text(tree))")
    }
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
  }

  // MARK: - What the host and the viewer see

  /// The token, the header and the cookies show nowhere: not in the log lines, the events or the stats overlay
  /// (read through the accessible tree), on a run that was tried again before it opened.
  func testTheCredentialsShowNowhere() throws {
    try Accessibility.require()
    // 6 s: time to read the overlay while it plays (paused, it would not try again until Play).
    let server = try server(["clip.mp4": try RetryTests.longerClip()])
    let title = "secret-\(UUID().uuidString.prefix(6))"
    let url = server.url("500-once", "clip.mp4")
    let player = try start(url, credentials() + ["--title", title])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertNotNil(
      player.waitForEvent(timeout: 20) { $0["event"] as? String == "state" && $0["state"] as? String == "playing" },
      player.stdout)
    Screen.press("i", title: title)
    let overlay = { (tree: Accessibility.Node) in
      tree.all.map(\.text).filter { $0.contains("Video") }.joined(separator: "\n")
    }
    let tree = try Accessibility.wait(player.process.processIdentifier) { !overlay($0).isEmpty }
    let everything = tree.all.map { $0.name + "\n" + $0.text }.joined(separator: "\n")
    XCTAssertTrue(overlay(tree).contains("640x360"), "the stats overlay: \(everything)")
    for secret in Self.secrets {
      XCTAssertFalse(everything.contains(secret), "\(secret) in the window: \(everything)")
    }
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    XCTAssertEqual(events(player, "retry").count, 1, player.stdout)
    assertNoSecret(player)
    assertCredentialsStayedHome(server.requests, home: server.originHost)
  }

  /// `progress` says when its position was read (`at`, Unix ms, now) and how fast it moves (`speed`): between two
  /// of them the position moves by the time between them times the speed.
  func testProgressSaysWhenAndHowFast() throws {
    let server = try server(["clip.mp4": try RetryTests.longerClip()])
    let before = Int(Date().timeIntervalSince1970 * 1000)
    let player = try play(server.url("file", "clip.mp4"), ["--speed", "1.5"], status: 0)
    let after = Int(Date().timeIntervalSince1970 * 1000)
    let progress = events(player, "progress")
    XCTAssertGreaterThanOrEqual(progress.count, 3, player.stdout)
    for p in progress {
      let at = try XCTUnwrap(p["at"] as? Int, "\(p)")
      XCTAssertTrue((before...after).contains(at), "at \(at) is not between \(before) and \(after)")
      XCTAssertNotNil(p["speed"] as? Double, "\(p)")
    }
    let playing = progress.filter { $0["state"] as? String == "playing" }
    XCTAssertGreaterThanOrEqual(playing.count, 2, player.stdout)
    XCTAssertTrue(playing.allSatisfy { $0["speed"] as? Double == 1.5 }, player.stdout)
    for (a, b) in zip(playing, playing.dropFirst()) {
      let elapsed = Double((b["at"] as? Int ?? 0) - (a["at"] as? Int ?? 0))
      let moved = Double((b["position_ms"] as? Int ?? 0) - (a["position_ms"] as? Int ?? 0))
      XCTAssertGreaterThan(elapsed, 500, "\(a) \(b)")
      XCTAssertEqual(moved / elapsed, 1.5, accuracy: 0.25, "\(a) then \(b)")
    }
  }

  /// A window closed by the window manager (its close button, a taskbar) ends as a quit, with the position it had
  /// reached, and without a crash or a complaint from GTK.
  func testAWindowClosedByTheWindowManagerSaysWhereItWas() throws {
    let manager = try WindowManager()
    defer { manager.stop() }
    let server = try server(["clip.mp4": try RetryTests.longerClip()])
    let title = "wm-close-\(UUID().uuidString.prefix(6))"
    let player = try start(server.url("file", "clip.mp4"), ["--title", title])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    let reached = try XCTUnwrap(
      player.waitForEvent(timeout: 20) {
        $0["event"] as? String == "progress" && $0["position_ms"] as? Int ?? 0 >= 1500
      }, player.stdout)
    XCTAssertTrue(Screen.closeThroughWindowManager(title: title))
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    // Nothing of the window is used once GTK has freed it (the video view's widget was: two GTK criticals a close).
    XCTAssertEqual(Orb.toolkitComplaints(player.stderr), [])
    let ended = last(player)
    XCTAssertEqual(ended["event"] as? String, "ended", player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "user-quit", player.stdout)
    let position = ended["position_ms"] as? Int ?? 0
    let from = reached["position_ms"] as? Int ?? 0
    XCTAssertTrue((from...from + 3000).contains(position), "ended at \(position), had reached \(from)")
    XCTAssertLessThan(position, 5500, "closed before the end: \(player.stdout)")
  }

  // MARK: - HLS

  /// A live playlist (no end, a window the server slides on each segment's length) starts at the live edge, three
  /// segments from the newest, not at the oldest it lists, follows the window as it slides and ends when the
  /// playlist does.
  func testALiveHLSPlaylistStartsAtTheLiveEdge() throws {
    // Six of the eight segments are out when it starts: the window lists 1-5, the live edge is 3.
    let server = try server(serving: try Self.hlsFolder(), ["--live-start", "6", "--live-window", "5"])
    let player = try play(server.url("live", "index.m3u8"), status: 0)
    let segments = server.requests.map(\.path).filter { $0.hasSuffix(".ts") }
    let first = try XCTUnwrap(segments.first.flatMap { Int($0.dropFirst("/live/seg".count).dropLast(3)) })
    // A slow start may see the window slide once or twice first.
    XCTAssertTrue((3...5).contains(first), "the first segment read: \(segments)")
    XCTAssertEqual(segments.last, "/live/seg7.ts", "it followed the window to its end: \(segments)")
    XCTAssertGreaterThan(server.requests("/live/index.m3u8").count, 2, "the playlist was read again as it slid")
    XCTAssertTrue(events(player, "warning").isEmpty, "an end with its mark is no stop: \(player.stdout)")
    let ended = last(player)
    XCTAssertEqual(ended["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(
      Double(ended["position_ms"] as? Int ?? 0), Double(8 - first) * 1000, accuracy: 600,
      "it played from the live edge on: \(player.stdout)")
  }

  /// A live playlist that stops changing without its end mark (a packager that died, a stream that ended without
  /// saying so) is taken as ended once it has been read again for 12 target durations with nothing new (12 s here),
  /// with a warning that says so; FFmpeg's own rule kept it buffering for 500 target durations.
  func testALivePlaylistThatStopsChangingEndsWithAWarning() throws {
    let server = try server(serving: try Self.hlsFolder(), ["--live-start", "4", "--live-stop", "4"])
    let started = Date()
    let player = try play(server.url("live", "index.m3u8"), status: 0, timeout: 60)
    let took = Date().timeIntervalSince(started)
    let ended = last(player)
    XCTAssertEqual(ended["event"] as? String, "ended", player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof", player.stdout)
    let warnings = events(player, "warning").compactMap { $0["message"] as? String }
    XCTAssertTrue(
      warnings.contains { $0.hasPrefix("the live stream stopped: nothing new came for 1") }, "\(warnings)")
    XCTAssertGreaterThan(took, 12, player.stdout)
    XCTAssertLessThan(took, 40, player.stdout)
  }

  /// HLS encrypted with AES-128 whose key needs a sign-in the player lacks: the key's 401 makes it a sign-in error
  /// that names the key, not "not a media file, or damaged".
  func testAnHLSKeyRefusedIsASignInThatNamesIt() throws {
    let folder = TestMedia.directory + "/hls-aes-3x1s-v1"
    if !FileManager.default.fileExists(atPath: folder + "/index.m3u8") {
      let building = "\(folder).tmp-\(UUID().uuidString)"
      try FileManager.default.createDirectory(atPath: building, withIntermediateDirectories: true)
      try Data((0..<16).map { UInt8($0 * 7 + 3) }).write(to: URL(fileURLWithPath: building + "/enc.key"))
      try "/token/enc.key\n\(building)/enc.key\n".write(
        toFile: building + "/key.info", atomically: true, encoding: .utf8)
      let made = Tool.run(
        "ffmpeg",
        [
          "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=3",
          "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0",
          "-hls_key_info_file", "\(building)/key.info", "-hls_segment_filename", "\(building)/seg%d.ts",
          "\(building)/index.m3u8",
        ], timeout: 120)
      guard made.succeeded else { throw TestMediaError("ffmpeg could not make the AES HLS playlist: \(made.stderr)") }
      if rename(building, folder) != 0 { try? FileManager.default.removeItem(atPath: building) }
    }
    let server = try server(serving: folder)
    let url = server.url("file", "index.m3u8")
    let player = try play(url, [], status: 1)
    XCTAssertFalse(server.requests("/token/enc.key").isEmpty, "the key was not asked for: \(server.requests)")
    XCTAssertEqual(last(player)["kind"] as? String, "sign-in", player.stdout)
    XCTAssertEqual(
      last(player)["message"] as? String,
      "cannot open '\(url)': the server refused access to enc.key (Server returned 401 Unauthorized (authorization failed))",
      player.stdout)
    // With the token, the key comes and it plays.
    let signedIn = try play(url, ["--auth-token", "orb-test"], status: 0)
    XCTAssertEqual(last(signedIn)["reason"] as? String, "eof", signedIn.stdout)
  }

  /// A segment of a VOD playlist that answers 404 is skipped: the segments after it are read and playback goes on to
  /// the end, with no error, and the host hears which segment was skipped.
  func testAMissingHLSSegmentIsSkipped() throws {
    let server = try server(serving: try Self.hlsFolder())
    let player = try play(server.url("file", "index.m3u8?missing=seg3.ts"), status: 0)
    XCTAssertFalse(server.requests("/404/seg3.ts").isEmpty, "the missing segment was asked for")
    XCTAssertEqual(
      Set(server.requests("/file/seg").map(\.path)), Set([0, 1, 2, 4, 5, 6, 7].map { "/file/seg\($0).ts" }))
    XCTAssertTrue(events(player, "error").isEmpty, player.stdout)
    XCTAssertEqual(
      events(player, "warning").compactMap { $0["message"] as? String },
      ["seg3.ts could not be loaded (Server returned 404 Not Found); skipped"], player.stdout)
    let ended = last(player)
    XCTAssertEqual(ended["reason"] as? String, "eof", player.stdout)
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 8000, accuracy: 500, player.stdout)
    let presented = (ended["stats"] as? [String: Any])?["presented"] as? Int ?? 0
    XCTAssertTrue((160...190).contains(presented), "the 7 s that were there, at 25 fps: \(player.stdout)")
  }
}
