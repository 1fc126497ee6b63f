import Foundation
import OrbTestSupport
import XCTest

/// The window a person sees, under the test session's Xvfb: screenshots, keys, resizing, events.
final class WindowTests: XCTestCase {
  /// The 75% bars of test://bars.
  static let bars: [RGB] = [
    RGB(r: 191, g: 191, b: 191), RGB(r: 191, g: 191, b: 0), RGB(r: 0, g: 191, b: 191), RGB(r: 0, g: 191, b: 0),
    RGB(r: 191, g: 0, b: 191), RGB(r: 191, g: 0, b: 0), RGB(r: 0, g: 0, b: 191), RGB(r: 0, g: 0, b: 0),
  ]

  private func start(_ args: [String], title: String, environment: [String: String] = [:]) throws -> BackgroundPlayer {
    try BackgroundPlayer.window(args, title: title, environment: environment)
  }

  private func windowID(_ title: String) -> String { Screen.windowID(title) }

  private func press(_ key: String, title: String) { Screen.press(key, title: title) }

  /// Every bar colour appears along a row through the bars (they scroll, so their positions move).
  private func assertShowsBars(_ image: RGBImage, file: StaticString = #filePath, line: UInt = #line) {
    let y = image.height / 4
    let row = (0..<image.width).map { image.pixel(x: $0, y: y) }
    for (i, bar) in Self.bars.enumerated() {
      let closest = row.map { $0.distance(to: bar) }.min() ?? 255
      XCTAssertLessThanOrEqual(closest, 6, "bar \(i) \(bar) not on screen", file: file, line: line)
    }
  }

  private func barsShowThrough(_ path: String) throws {
    let title = "bars-\(path)-\(UUID().uuidString.prefix(6))"
    let player = try start(["--video-output", path, "test://bars?duration=30"], title: title)
    usleep(1_500_000)
    let first = try Screen.grab(title: title)
    Screen.keep(title: title, as: "window-bars-\(path)")
    XCTAssertEqual(first.width, 1280)
    XCTAssertEqual(first.height, 720)
    assertShowsBars(first)
    // Playing: the time code (bottom quarter) changes between two screenshots a second apart.
    usleep(1_000_000)
    let second = try Screen.grab(title: title)
    var changed = 0
    for y in stride(from: 560, to: 700, by: 4) {
      for x in stride(from: 200, to: 1080, by: 4) where first.pixel(x: x, y: y) != second.pixel(x: x, y: y) {
        changed += 1
      }
    }
    XCTAssertGreaterThan(changed, 20, "the time code did not move")
    XCTAssertTrue(player.stderr.contains("presentation: \(path)"), player.stderr)
    press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
    let ended = player.events.last { $0["event"] as? String == "ended" }
    XCTAssertEqual(ended?["reason"] as? String, "user-quit", player.stdout)
  }

  func testBarsThroughZeroCopyGLImport() throws {
    try barsShowThrough("zero-copy")
  }

  func testBarsThroughMemoryTextures() throws {
    try barsShowThrough("memory")
  }

  /// Left to choose (`auto`), the window draws with GL where there is a GPU, and with GTK's cairo renderer from
  /// memory where there is none (GL would be Mesa's software GL, which costs far more memory and CPU there).
  func testWithoutAGPUTheWindowDrawsWithCairo() throws {
    let title = "bars-auto-\(UUID().uuidString.prefix(6))"
    let player = try start(["test://bars?duration=30"], title: title)
    usleep(1_500_000)
    assertShowsBars(try Screen.grab(title: title))
    let gpu = Self.hasGPU
    let expected = gpu ? "presentation: zero-copy" : "presentation: memory (GTK draws with cairo)"
    XCTAssertTrue(player.stderr.contains(expected), "GPU render node: \(gpu); \(player.stderr)")
    // Without a GPU, SDR is drawn with swscale and no Vulkan device is made: lavapipe and its LLVM stay unloaded.
    if !gpu {
      let maps = Self.memoryMap(player)
      XCTAssertTrue(maps.contains("libavcodec"), "the player's memory map, whole")
      XCTAssertFalse(maps.contains("libvulkan_lvp"), "lavapipe loaded for SDR")
      XCTAssertFalse(maps.contains("libLLVM"), "LLVM loaded for SDR")
    }
    press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// Drawn with cairo on X11, a frame's picture reaches the X server through shared memory that the player keeps
  /// mapped from frame to frame (`X11UploadMemory`). cairo alone maps a fresh window-sized segment each frame, which
  /// the kernel faults in page by page: 30,000 faults in two seconds of this 960x540 window; now none or a few dozen.
  func testACairoWindowDoesNotFaultInItsPictureEachFrame() throws {
    let title = "upload-\(UUID().uuidString.prefix(6))"
    let player = try start(
      ["--geometry", "960x540", "test://bars?duration=30"], title: title, environment: ["GSK_RENDERER": "cairo"])
    usleep(1_500_000)
    let pid = player.process.processIdentifier
    let first = try Screen.grab(title: title)
    let before = try Self.minorFaults(pid)
    usleep(2_000_000)
    let faults = try Self.minorFaults(pid) - before
    let second = try Screen.grab(title: title)
    assertShowsBars(second)
    // Frames were drawn meanwhile: the time code (bottom quarter) moved.
    var changed = 0
    for y in stride(from: 400, to: 530, by: 4) {
      for x in stride(from: 100, to: 860, by: 4) where first.pixel(x: x, y: y) != second.pixel(x: x, y: y) {
        changed += 1
      }
    }
    XCTAssertGreaterThan(changed, 20, "the time code did not move")
    XCTAssertLessThan(faults, 3000, "page faults in 2 s of playing (about 500 a frame would be a fresh picture each)")
    press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
  }

  /// The page faults a process has taken that needed no disk (minflt, the 10th field of /proc/PID/stat).
  private static func minorFaults(_ pid: Int32) throws -> Int {
    let stat = Tool.run("cat", ["/proc/\(pid)/stat"]).stdout
    // The command's name, in parentheses, may hold spaces: count the fields after it (state is the 3rd).
    guard let close = stat.lastIndex(of: ")") else { throw TestMediaError("no /proc/\(pid)/stat: \(stat)") }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 7, let value = Int(fields[7]) else { throw TestMediaError("odd /proc/\(pid)/stat: \(stat)") }
    return value
  }

  /// Whether the machine has a GPU the player would use (a DRM render node, or NVIDIA's device).
  private static var hasGPU: Bool {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []).contains { $0.hasPrefix("renderD") }
      || FileManager.default.fileExists(atPath: "/dev/nvidiactl")
  }

  /// The libraries and memory the player has mapped now (/proc/PID/maps).
  private static func memoryMap(_ player: BackgroundPlayer) -> String {
    // Read through cat: procfs files have no size, and Foundation reads them only in part.
    Tool.run("cat", ["/proc/\(player.process.processIdentifier)/maps"]).stdout
  }

  /// Without a GPU a cairo window makes a Vulkan device only for what the CPU does not draw: PQ and HLG are
  /// tone-mapped on the CPU (the table of `HDRToSDR` the shader samples, the same dither), a rotated video takes the
  /// shader. Each shows what `--frame-at` (the Vulkan renderer) draws for the same frame at the same size.
  func testWithoutAGPUOnlyWhatTheCPUCannotDrawMakesAVulkanDevice() throws {
    // A quarter turn in the container's display matrix (ffmpeg 5.1 writes it only when copying the stream).
    let upright = try TestMedia.path(
      "upright-320x240-v1.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=30", "-c:v", "libx264", "-preset", "ultrafast",
        "-pix_fmt", "yuv420p",
      ])
    let rotated = try TestMedia.path(
      "rotated-90-v1.mp4", ["-i", upright, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
    for (source, vulkan) in [
      ("test://hdr10-bars?duration=30", false), ("test://hlg-bars?duration=30", false),
      (rotated, true),
    ] {
      let title = "on-demand-\(UUID().uuidString.prefix(6))"
      let player = try start(["--paused", source], title: title)
      usleep(1_500_000)
      let shown = try Screen.grabSettled(title: title)
      Screen.keep(title: title, as: "window-on-demand-\((source as NSString).lastPathComponent)")
      let png = NSTemporaryDirectory() + "orb-on-demand-\(UUID().uuidString).png"
      defer { try? FileManager.default.removeItem(atPath: png) }
      let drawn = Orb.run(["--frame-at", "0", "--size", "\(shown.width)x\(shown.height)", "--output", png, source])
      XCTAssertEqual(drawn.status, 0, drawn.stderr)
      let reference = try RGBImage(png: png)
      var far = 0
      var checked = 0
      for y in stride(from: 8, to: shown.height - 8, by: 16) {
        for x in stride(from: 8, to: shown.width - 8, by: 16) {
          checked += 1
          if shown.pixel(x: x, y: y).distance(to: reference.pixel(x: x, y: y)) > 6 { far += 1 }
        }
      }
      XCTAssertLessThan(far, checked / 50, "\(source): \(far) of \(checked) points differ from --frame-at's picture")
      if !Self.hasGPU {
        let maps = Self.memoryMap(player)
        XCTAssertTrue(maps.contains("libavcodec"), "the player's memory map, whole")
        XCTAssertEqual(maps.contains("libvulkan_lvp"), vulkan, "\(source): lavapipe loaded: \(player.stderr)")
      }
      press("q", title: title)
      XCTAssertEqual(player.wait(timeout: 15), 0, player.stderr)
    }
  }

  func testClipPlaysToTheEndAtItsRateWithEvents() throws {
    let clip = try Clips.moving(seconds: 3)
    try Screen.requireDisplay()
    let started = Date()
    let player = try BackgroundPlayer(["--events-fd", "1", clip])
    let name = (clip as NSString).lastPathComponent
    XCTAssertNotNil(Screen.waitForWindow(title: name), "window titled with the file name")
    XCTAssertEqual(player.wait(timeout: 30), 0, player.stderr)
    let elapsed = Date().timeIntervalSince(started)
    XCTAssertGreaterThan(elapsed, 2.8, "3 s of video played in \(elapsed) s")
    let progress = player.events.filter { $0["event"] as? String == "progress" }
    XCTAssertGreaterThanOrEqual(progress.count, 2, player.stdout)
    let positions = progress.compactMap { $0["position_ms"] as? Int }
    XCTAssertEqual(positions, positions.sorted(), "progress only moves forward")
    XCTAssertEqual(progress.first?["duration_ms"] as? Int, 3000)
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" })
    XCTAssertEqual(ended["reason"] as? String, "eof")
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 3000, accuracy: 150)
  }

  /// `--resume-ms` starts where the host left off: the first picture is that moment, and the rest plays from there.
  func testResumeStartsAtThePosition() throws {
    let clip = try Clips.moving(seconds: 3)
    try Screen.requireDisplay()
    let started = Date()
    let player = try BackgroundPlayer(["--events-fd", "1", "--resume-ms", "2000", clip])
    XCTAssertEqual(player.wait(timeout: 30), 0, player.stderr)
    let elapsed = Date().timeIntervalSince(started)
    XCTAssertLessThan(elapsed, 2.8, "played from the start? \(elapsed) s")
    let state = try XCTUnwrap(player.events.first { $0["event"] as? String == "state" })
    XCTAssertEqual(state["position_ms"] as? Int, 2000)
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" })
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 3000, accuracy: 150)
    let shown = (ended["stats"] as? [String: Any])?["presented"] as? Int ?? 0
    XCTAssertLessThanOrEqual(shown, 32, "about a second of 30 fps video, not three")
  }

  /// Right and Left move playback by 5 s either way, and it goes on from there.
  func testArrowKeysSeek() throws {
    let clip = try Clips.moving(seconds: 12)
    let title = "seek-\(UUID().uuidString.prefix(6))"
    let player = try start([clip], title: title)
    usleep(1_000_000)
    press("Right", title: title)
    usleep(1_500_000)
    let afterForward = player.events.last { $0["event"] as? String == "progress" }?["position_ms"] as? Int ?? 0
    XCTAssertGreaterThan(afterForward, 5500, "Right did not move playback forward: \(player.stdout)")
    press("Left", title: title)
    usleep(1_500_000)
    let afterBack = player.events.last { $0["event"] as? String == "progress" }?["position_ms"] as? Int ?? 0
    XCTAssertLessThan(afterBack, afterForward, "Left did not move playback back: \(player.stdout)")
    press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0)
  }

  /// Moving the pointer brings up the controls; clicking the slider seeks, the button pauses.
  func testTransportBarSeeksAndPauses() throws {
    let clip = try Clips.moving(seconds: 12)
    let title = "transport-\(UUID().uuidString.prefix(6))"
    // The pointer well away from where the window opens, so the controls start hidden.
    _ = Tool.run("xdotool", ["mousemove", "1919", "1079"])
    let player = try start([clip], title: title)
    usleep(1_000_000)
    let id = windowID(title)
    let before = try Screen.grab(title: title)
    _ = Tool.run("xdotool", ["mousemove", "--window", id, "300", "150"])
    _ = Tool.run("xdotool", ["mousemove", "--window", id, "310", "160"])
    usleep(600_000)
    let shown = try Screen.grab(title: title)
    Screen.keep(title: title, as: "window-transport")
    // Two rows: the slider across the width, the buttons under it.
    let sliderY = shown.height - 71
    let barY = shown.height - 35
    // A dark band with light controls along the bottom, where the picture was bright bars.
    let dark = (0..<shown.width).filter { x in
      let p = shown.pixel(x: x, y: shown.height - 20)
      return p.r + p.g + p.b < before.pixel(x: x, y: shown.height - 20).r + before.pixel(x: x, y: shown.height - 20).g
        + before.pixel(x: x, y: shown.height - 20).b - 60
    }.count
    XCTAssertGreaterThan(dark, shown.width / 2, "no control bar at the bottom")
    // Click at 60% of the width: on the slider, about two thirds along (the 12 s clip must not end before the
    // pause below).
    _ = Tool.run("xdotool", ["mousemove", "--window", id, String(shown.width * 6 / 10), String(sliderY), "click", "1"])
    usleep(1_500_000)
    let position = player.events.last { $0["event"] as? String == "progress" }?["position_ms"] as? Int ?? 0
    XCTAssertGreaterThan(position, 6000, "the slider did not seek: \(player.stdout)")
    // The play/pause button at the bar's left end.
    _ = Tool.run("xdotool", ["mousemove", "--window", id, "40", String(barY), "click", "1"])
    usleep(500_000)
    let states = player.events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertEqual(states.last, "paused", player.stdout)
    press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0)
  }

  func testSpacePausesAndResumes() throws {
    let title = "pause-\(UUID().uuidString.prefix(6))"
    let player = try start(["test://bars?duration=60"], title: title)
    usleep(1_200_000)
    press("space", title: title)
    usleep(300_000)
    let paused = try Screen.grab(title: title)
    usleep(1_200_000)
    let stillPaused = try Screen.grab(title: title)
    XCTAssertEqual(paused.bytes, stillPaused.bytes, "the picture moved while paused")
    press("space", title: title)
    usleep(1_200_000)
    let resumed = try Screen.grab(title: title)
    XCTAssertNotEqual(paused.bytes, resumed.bytes, "the picture did not move after resuming")
    let states = player.events.filter { $0["event"] as? String == "state" }.compactMap { $0["state"] as? String }
    XCTAssertEqual(Array(states.suffix(2)), ["paused", "playing"], player.stdout)
    press("Escape", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0)
  }

  func testResizedWindowIsRedrawnAtItsNewSizeAndLetterboxed() throws {
    let title = "resize-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", "test://bars?duration=60"], title: title)
    usleep(1_000_000)
    _ = Tool.run("xdotool", ["windowsize", "--sync", windowID(title), "800", "600"])
    usleep(1_000_000)
    let image = try Screen.grab(title: title)
    Screen.keep(title: title, as: "window-resized-800x600")
    XCTAssertEqual(image.width, 800)
    XCTAssertEqual(image.height, 600)
    // 16:9 in 800x600: a 450-row picture with 75-row bars above and below; bars 100 px wide.
    assertPixel(image, x: 400, y: 30, approximately: .black, tolerance: 3, "letterbox above")
    assertPixel(image, x: 400, y: 570, approximately: .black, tolerance: 3, "letterbox below")
    assertShowsBarsInRect(image, y: 75 + 120)
    // Drawn at 800 wide, not scaled from 1280: a bar's edge is a single step, no blur.
    let row = (0..<800).map { image.pixel(x: $0, y: 195) }
    let soft = zip(row, row.dropFirst()).filter { a, b in
      let d = a.distance(to: b)
      return d > 12 && d < 150
    }.count
    XCTAssertLessThanOrEqual(soft, 16, "bar edges are smeared over \(soft) pixels")
    press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0)
  }

  private func assertShowsBarsInRect(_ image: RGBImage, y: Int, file: StaticString = #filePath, line: UInt = #line) {
    let row = (0..<image.width).map { image.pixel(x: $0, y: y) }
    for (i, bar) in Self.bars.enumerated() {
      XCTAssertLessThanOrEqual(row.map { $0.distance(to: bar) }.min() ?? 255, 6, "bar \(i)", file: file, line: line)
    }
  }

  /// `i` lays the stats over the picture (a dark box with light text, top left) and takes them away again.
  func testStatsOverlayOnAnHDRPattern() throws {
    let title = "stats-\(UUID().uuidString.prefix(6))"
    let player = try start(["--paused", "test://hdr10-bars?duration=60"], title: title)
    usleep(1_000_000)
    let before = try Screen.grab(title: title)
    press("i", title: title)
    usleep(1_200_000)
    let shown = try Screen.grab(title: title)
    Screen.keep(title: title, as: "window-stats-hdr10-bars")
    var changed = 0
    var light = 0
    for y in stride(from: 20, to: 220, by: 2) {
      for x in stride(from: 20, to: 420, by: 2) {
        let p = shown.pixel(x: x, y: y)
        if p.distance(to: before.pixel(x: x, y: y)) > 40 { changed += 1 }
        if p.r > 200 && p.g > 200 && p.b > 200 && before.pixel(x: x, y: y).distance(to: p) > 40 { light += 1 }
      }
    }
    XCTAssertGreaterThan(changed, 2000, "no overlay box appeared")
    XCTAssertGreaterThan(light, 200, "no text in the overlay")
    press("i", title: title)
    usleep(800_000)
    let hidden = try Screen.grab(title: title)
    XCTAssertLessThanOrEqual(hidden.pixel(x: 100, y: 100).distance(to: before.pixel(x: 100, y: 100)), 3)
    press("q", title: title)
    XCTAssertEqual(player.wait(timeout: 15), 0)
  }

  func testNoDisplayIsAClearError() {
    var env = ProcessInfo.processInfo.environment
    env["DISPLAY"] = nil
    env["WAYLAND_DISPLAY"] = nil
    let r = Tool.run(OrbBinary.path, ["test://bars"], environment: env, timeout: 20)
    XCTAssertEqual(r.status, 1)
    XCTAssertTrue(r.stderr.contains("cannot open a window: no display"), r.stderr)
  }

  /// A display that is named but not there (no server on :57) is one clear line too, after a second of retrying.
  func testAnUnreachableDisplayIsAClearError() {
    var env = ProcessInfo.processInfo.environment
    env["DISPLAY"] = ":57"
    env["WAYLAND_DISPLAY"] = nil
    let r = Tool.run(OrbBinary.path, ["test://bars"], environment: env, timeout: 20)
    XCTAssertEqual(r.status, 1)
    XCTAssertTrue(r.stderr.contains("orb-player: cannot open a window: cannot connect to the display :57"), r.stderr)
  }
}
