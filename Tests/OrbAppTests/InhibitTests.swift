import Foundation
import OrbTestSupport
import XCTest

/// The desktop's habits while a video plays: the screensaver and idle suspend are held off while it plays and let go
/// when it pauses or closes, asked of a stand-in GNOME session manager on the test's session bus.
final class InhibitTests: XCTestCase {
  /// gnome-session's Inhibit interface, answered in Python (GLib's own bindings), each call a line of a log.
  static let sessionManager = #"""
    #!/usr/bin/python3
    # A stand-in for the GNOME session manager on the test's session bus: answers RegisterClient, Inhibit and
    # Uninhibit as gnome-session does, and writes each call as a line to the log file named on the command line.
    import sys
    import gi
    gi.require_version("Gio", "2.0")
    from gi.repository import Gio, GLib

    XML = """
    <node>
      <interface name="org.gnome.SessionManager">
        <method name="RegisterClient"><arg type="s" direction="in"/><arg type="s" direction="in"/>
          <arg type="o" direction="out"/></method>
        <method name="Inhibit"><arg type="s" direction="in"/><arg type="u" direction="in"/>
          <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="u" direction="out"/></method>
        <method name="Uninhibit"><arg type="u" direction="in"/></method>
        <method name="IsInhibited"><arg type="u" direction="in"/><arg type="b" direction="out"/></method>
      </interface>
    </node>
    """
    log = open(sys.argv[1], "a", buffering=1)
    inhibitors = {}
    next_cookie = [1]


    def call(connection, sender, path, interface, method, params, invocation):
        if method == "RegisterClient":
            invocation.return_value(GLib.Variant("(o)", ("/org/gnome/SessionManager/Client1",)))
        elif method == "Inhibit":
            app, xid, reason, flags = params.unpack()
            cookie = next_cookie[0]
            next_cookie[0] += 1
            inhibitors[cookie] = flags
            log.write(f"inhibit {cookie} {flags} {reason}\n")
            invocation.return_value(GLib.Variant("(u)", (cookie,)))
        elif method == "Uninhibit":
            (cookie,) = params.unpack()
            inhibitors.pop(cookie, None)
            log.write(f"uninhibit {cookie}\n")
            invocation.return_value(None)
        elif method == "IsInhibited":
            (flags,) = params.unpack()
            invocation.return_value(GLib.Variant("(b)", (any(f & flags for f in inhibitors.values()),)))


    def acquired(connection, name):
        log.write("ready\n")


    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    node = Gio.DBusNodeInfo.new_for_xml(XML)
    bus.register_object("/org/gnome/SessionManager", node.interfaces[0], call, None, None)
    Gio.bus_own_name_on_connection(bus, "org.gnome.SessionManager", Gio.BusNameOwnerFlags.NONE, acquired, None)
    GLib.MainLoop().run()
    """#

  private func lines(_ log: String) -> [String] {
    ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  private func waitFor(_ log: String, timeout: Double = 10, _ matches: ([String]) -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
      if matches(lines(log)) { return true }
      usleep(100_000)
    }
    return false
  }

  func testPlayingHoldsOffTheScreensaverAndPausingLetsGo() throws {
    try Screen.requireDisplay()
    let python = "/usr/bin/python3"
    let hasGI = Tool.run(python, ["-c", "import gi"]).succeeded
    try Requirement.require(hasGI, "python3-gi is not installed (the stand-in session manager needs it)")
    let dir = NSTemporaryDirectory() + "orb-sm-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let script = "\(dir)/session-manager.py"
    let log = "\(dir)/calls.log"
    try Self.sessionManager.write(toFile: script, atomically: true, encoding: .utf8)
    let manager = Child()
    manager.executableURL = URL(fileURLWithPath: python)
    manager.arguments = [script, log]
    try manager.run()
    defer { manager.terminate() }
    XCTAssertTrue(waitFor(log) { $0.contains("ready") }, "the stand-in session manager did not start")

    let title = "inhibit-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer(["--title", title, try MarkerAppTests.clip(seconds: 20)])
    defer { _ = player.wait(timeout: 1) }
    XCTAssertNotNil(Screen.waitForWindow(title: title), player.stderr)
    XCTAssertTrue(
      waitFor(log) { $0.contains { $0.hasPrefix("inhibit ") } }, "playing did not inhibit: \(lines(log))")
    let first = try XCTUnwrap(lines(log).first { $0.hasPrefix("inhibit ") })
    let flags = Int(first.split(separator: " ")[2]) ?? 0
    XCTAssertEqual(flags & 8, 8, "idle (the screensaver) is inhibited: \(first)")
    XCTAssertEqual(flags & 4, 4, "suspend is inhibited: \(first)")
    Screen.press("space", title: title)
    XCTAssertTrue(
      waitFor(log) { $0.contains { $0.hasPrefix("uninhibit ") } }, "pausing did not let go: \(lines(log))")
    Screen.press("space", title: title)
    XCTAssertTrue(
      waitFor(log) { $0.filter { $0.hasPrefix("inhibit ") }.count == 2 }, "playing again did not inhibit again")
    Screen.press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let calls = lines(log)
    XCTAssertEqual(
      calls.filter { $0.hasPrefix("inhibit ") }.count, calls.filter { $0.hasPrefix("uninhibit ") }.count,
      "every inhibitor let go by the end: \(calls)")
  }
}
