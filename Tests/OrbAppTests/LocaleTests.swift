import Foundation
import OrbTestSupport
import XCTest

/// The player under a language whose numbers have a decimal comma (German): what it reads is read as under C.
final class LocaleTests: XCTestCase {
  /// A German locale made with localedef into a folder of the test's own (LOCPATH): the machine's locales stay as
  /// they are. Needs the `locales` package's definitions (scripts/setup.sh installs it).
  private func germanLocale() throws -> String {
    let folder = NSTemporaryDirectory() + "orb-locale"
    if FileManager.default.fileExists(atPath: folder + "/de_DE.UTF-8/LC_NUMERIC") { return folder }
    try Requirement.require(
      FileManager.default.fileExists(atPath: "/usr/share/i18n/locales/de_DE"), "no locale definitions (package locales)"
    )
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let made = Tool.run("localedef", ["-i", "de_DE", "-f", "UTF-8", folder + "/de_DE.UTF-8"], timeout: 120)
    guard FileManager.default.fileExists(atPath: folder + "/de_DE.UTF-8/LC_NUMERIC") else {
      throw TestMediaError("localedef failed: \(made.stdout)\(made.stderr)")
    }
    return folder
  }

  /// An HLS playlist of 1.5 s segments lasts 9 s under German too. FFmpeg reads "#EXTINF:1.500000" with atof,
  /// which stopped at the point once GTK had set the session's locale: 6 s, and the bar ran out early.
  func testAnHLSPlaylistLastsAsLongUnderADecimalComma() throws {
    try Screen.requireDisplay()
    let locales = try germanLocale()
    let folder = NSTemporaryDirectory() + "orb-hls-comma-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let made = Tool.run(
      "ffmpeg",
      [
        "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=9", "-c:v", "libx264",
        "-preset", "ultrafast", "-g", "45", "-keyint_min", "45", "-sc_threshold", "0", "-f", "hls", "-hls_time", "1.5",
        "-hls_list_size", "0", "-hls_playlist_type", "vod", folder + "/p.m3u8",
      ], timeout: 120)
    XCTAssertTrue(made.succeeded, made.stderr)
    let playlist = try String(contentsOfFile: folder + "/p.m3u8", encoding: .utf8)
    XCTAssertTrue(playlist.contains("#EXTINF:1.500000,"), playlist)
    let player = try BackgroundPlayer(
      ["--events-fd", "1", "--paused", folder + "/p.m3u8"], environment: ["LOCPATH": locales, "LC_ALL": "de_DE.UTF-8"])
    defer { player.process.terminate() }
    let progress = player.waitForEvent(timeout: 20) { $0["event"] as? String == "progress" }
    XCTAssertEqual(progress?["duration_ms"] as? Int, 9000, player.stdout + player.stderr)
  }
}
