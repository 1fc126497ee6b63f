import Foundation
import OrbTestSupport
import XCTest

/// MPRIS on the test session's bus: what desktop media controls and playerctl see and can do.
final class MPRISTests: XCTestCase {
  private func gdbus(_ pid: Int32, _ arguments: [String]) -> String { Orb.gdbus(pid, arguments) }

  private func property(_ pid: Int32, _ name: String) -> String {
    gdbus(pid, ["--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", name])
  }

  func testMediaControlsSeeAndSteerThePlayer() throws {
    try Screen.requireDisplay()
    try Requirement.require(ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil, "no session bus")
    let title = "mpris-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, "--events-fd", "1", "test://bars?duration=30"])
    XCTAssertNotNil(Screen.waitForWindow(title: title))
    usleep(800_000)
    let pid = player.process.processIdentifier
    XCTAssertTrue(property(pid, "PlaybackStatus").contains("'Playing'"), property(pid, "PlaybackStatus"))
    let metadata = property(pid, "Metadata")
    XCTAssertTrue(metadata.contains("'xesam:title': <'\(title)'>"), metadata)
    XCTAssertTrue(metadata.contains("'mpris:length': <int64 30000000>"), metadata)

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.PlayPause"])
    usleep(500_000)
    XCTAssertTrue(property(pid, "PlaybackStatus").contains("'Paused'"))
    let states = player.events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertEqual(states.last, "paused", player.stdout)

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Player.SetPosition", "/org/orb/Player/Track/0", "12000000"])
    usleep(500_000)
    let position = property(pid, "Position")
    let micros = Int(position.split(separator: " ").last?.filter(\.isNumber) ?? "") ?? 0
    XCTAssertEqual(Double(micros) / 1e6, 12, accuracy: 0.2, position)

    _ = gdbus(pid, ["--method", "org.mpris.MediaPlayer2.Quit"])
    XCTAssertEqual(player.wait(timeout: 15), 0)
    XCTAssertTrue(player.stdout.contains("\"reason\":\"user-quit\""), player.stdout)
  }
}
