import Foundation
import OrbTestSupport
import XCTest

/// Interlaced video (TV recordings, DVDs, 1080i broadcasts) shown as a person expects: each field a whole picture
/// of its own moment, no combing where things move; progressive video untouched.
final class DeinterlaceTests: XCTestCase {
  private func frame(_ clip: String, at seconds: Double, _ extra: [String] = []) throws -> RGBImage {
    let png = NSTemporaryDirectory() + "orb-fields-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    let r = Orb.run(["--frame-at", String(seconds), "--output", png] + extra + [clip], timeout: 120)
    XCTAssertEqual(r.status, 0, r.stderr)
    return try RGBImage(png: png)
  }

  /// Places where a row and the row below it differ by more than half the range: none in a picture of a bar that
  /// spans the height, hundreds where its two fields disagree about where the bar is (combing).
  static func combs(_ image: RGBImage) -> Int {
    var count = 0
    for y in 0..<(image.height - 1) {
      for x in 0..<image.width where abs(image.pixel(x: x, y: y).g - image.pixel(x: x, y: y + 1).g) > 128 {
        count += 1
      }
    }
    return count
  }

  /// The first column of the middle row that is brighter than half (the bar's left edge).
  private func leftEdge(_ image: RGBImage) -> Int? {
    (0..<image.width).first { image.pixel(x: $0, y: image.height / 2).g > 128 }
  }

  private func benchmarkFrames(_ clip: String, _ extra: [String] = []) throws -> Int {
    let r = Orb.run(["--benchmark", "--size", "360x288"] + extra + [clip], timeout: 120)
    XCTAssertEqual(r.status, 0, r.stderr)
    let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
    return try XCTUnwrap(json?["frames"] as? Int, r.stdout)
  }

  func testAMovingBarInInterlacedVideoShowsNoCombing() throws {
    let clip = try Clips.interlacedBar()
    // As stored: the picture at 1 s weaves the field of 1.00 s (bar at 600) with that of 1.02 s (bar at 612).
    let woven = try frame(clip, at: 1.0, ["--deinterlace", "no"])
    XCTAssertGreaterThan(Self.combs(woven), 400, "the stored picture should show combing, else this tests nothing")
    let first = try frame(clip, at: 1.0)
    XCTAssertLessThan(Self.combs(first), 20, "deinterlaced, the bar's edges run straight down")
    XCTAssertEqual(Double(try XCTUnwrap(leftEdge(first))), 600, accuracy: 3, "the first field's moment")
    // The second field is a picture of its own, 20 ms later, the bar 12 px on.
    let second = try frame(clip, at: 1.03)
    XCTAssertLessThan(Self.combs(second), 20)
    XCTAssertEqual(Double(try XCTUnwrap(leftEdge(second))), 612, accuracy: 3, "the second field's moment")
  }

  func testEachFieldIsShownAndProgressiveVideoIsLeftAlone() throws {
    let interlaced = try Clips.interlacedBar()
    XCTAssertEqual(try benchmarkFrames(interlaced), 100, "2 s of 50 fields a second: 100 pictures")
    XCTAssertEqual(try benchmarkFrames(interlaced, ["--deinterlace", "no"]), 50, "as stored: 25 pictures a second")
    let progressive = try Clips.interlacedBar(progressive: true)
    XCTAssertEqual(try benchmarkFrames(progressive), 50, "pictures not marked interlaced pass as they are")
    XCTAssertEqual(try benchmarkFrames(progressive, ["--deinterlace", "yes"]), 100, "yes: every picture is split")
  }

  /// In the window, paused on a moving moment: the picture shown is whole; `d` twice (every picture, then none)
  /// shows the stored picture, combed, at once, and says so.
  func testTheDKeyChangesThePausedPictureAtOnce() throws {
    let title = "fields-\(UUID().uuidString.prefix(6))"
    let player = try BackgroundPlayer.window(
      ["--paused", "--resume-ms", "1000", try Clips.interlacedBar()], title: title,
      environment: try BackgroundPlayer.temporaryHome(for: self))
    defer { _ = player.wait(timeout: 1) }
    Screen.type([(1, "s"), (0.5, "d"), (0.3, "d"), (1, "s"), (0.5, "q")], title: title)
    XCTAssertEqual(player.wait(timeout: 10), 0, player.stderr)
    let paths = player.screenshots
    XCTAssertEqual(paths.count, 2, player.stdout)
    guard paths.count == 2 else { return }
    XCTAssertLessThan(Self.combs(try RGBImage(png: paths[0])), 20, "shown deinterlaced by default")
    XCTAssertGreaterThan(Self.combs(try RGBImage(png: paths[1])), 400, "after d d: the stored picture, combed")
    XCTAssertTrue(player.stderr.contains("Deinterlace: every picture"), player.stderr)
    XCTAssertTrue(player.stderr.contains("Deinterlace: off"), player.stderr)
  }

  /// Still lines one pixel high at the picture's first two and last two rows stay in every picture (they blinked
  /// at 25 Hz, the lines beyond the edge taken as the line itself).
  func testStillLinesAtTheEdgesStay() throws {
    let lines = [(0, 0), (120, 1), (0, 575), (120, 574)]
    let boxes = lines.map { "drawbox=x=\($0.0):y=\($0.1):w=100:h=1:c=white:t=fill" }.joined(separator: ",")
    let clip = try TestMedia.path(
      "edge-lines-25i.mkv",
      [
        "-f", "lavfi", "-i", "color=c=black:s=720x576:r=50:d=2,format=yuv420p,\(boxes)", "-vf",
        "tinterlace=mode=interleave_top,setfield=tff", "-c:v", "libx264", "-qp", "0", "-flags", "+ildct+ilme",
        "-x264-params", "tff=1:log-level=error",
      ])
    for seconds in [1.0, 1.02] {
      let image = try frame(clip, at: seconds)
      for (x, y) in lines {
        XCTAssertGreaterThan(image.pixel(x: x + 50, y: y).g, 200, "the line at row \(y), \(seconds) s")
      }
    }
  }

  /// FFmpeg's HEVC decoder marks pictures interlaced that hold one field each, or both fields with an order that
  /// flips from one picture to the next: left as they are (the bar would jerk back and forth), unless asked.
  func testHEVCMarksAreNotTrusted() throws {
    let bar =
      "color=black:s=720x576:r=50,format=yuv420p[bg];color=white:s=40x576:r=50[bar];"
      + "[bg][bar]overlay=x='mod(t*600,680)':y=0"
    let clip = try TestMedia.path(
      "bar-25i-hevc.mkv",
      [
        "-f", "lavfi", "-i", bar, "-t", "2", "-vf", "tinterlace=mode=interleave_top,setfield=tff", "-c:v", "libx265",
        "-preset", "ultrafast", "-x265-params", "interlace=tff:log-level=error",
      ])
    XCTAssertEqual(try benchmarkFrames(clip), 50)
    XCTAssertEqual(try benchmarkFrames(clip, ["--deinterlace", "yes"]), 100)
  }

  /// The bar of `Clips.interlacedBar` in HEVC coded in fields, as 576i and 1080i broadcasts carry it: each coded
  /// picture one field of 720x288, 50 a second, top field first.
  private func hevcFields(_ container: String) throws -> String {
    let bar =
      "color=black:s=720x576:r=50,format=yuv420p[bg];color=white:s=40x576:r=50[bar];"
      + "[bg][bar]overlay=x='mod(t*600,680)':y=0"
    let mkv = try TestMedia.path(
      "bar-25i-hevc-fields.mkv",
      [
        "-f", "lavfi", "-i", bar, "-t", "2", "-vf", "tinterlace=mode=interleave_top,setfield=tff,separatefields",
        "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "interlace=tff:log-level=error",
      ])
    return container == "mkv" ? mkv : try TestMedia.path("bar-25i-hevc-fields.\(container)", ["-i", mkv, "-c", "copy"])
  }

  /// HEVC coded in fields is shown at the frame's height (not squashed to half of it, as FFmpeg hands out each field),
  /// each field whole at its own moment, as the same bar coded in frames is.
  func testHEVCCodedInFieldsIsShownAtFullHeight() throws {
    let clip = try hevcFields("mkv")
    let woven = try frame(clip, at: 1.0, ["--deinterlace", "no"])
    XCTAssertEqual([woven.width, woven.height], [720, 576], "two fields make a frame")
    XCTAssertGreaterThan(Self.combs(woven), 400, "as stored: the two fields woven, the bar combed")
    let first = try frame(clip, at: 1.0)
    XCTAssertEqual([first.width, first.height], [720, 576])
    XCTAssertLessThan(Self.combs(first), 20)
    XCTAssertEqual(Double(try XCTUnwrap(leftEdge(first))), 600, accuracy: 3, "the first field's moment")
    let second = try frame(clip, at: 1.03)
    XCTAssertLessThan(Self.combs(second), 20)
    XCTAssertEqual(Double(try XCTUnwrap(leftEdge(second))), 612, accuracy: 3, "the second field's moment")
    XCTAssertEqual(try benchmarkFrames(clip), 100, "one picture per field")
    XCTAssertEqual(try benchmarkFrames(clip, ["--deinterlace", "no"]), 50, "as stored: one per frame")
  }

  /// `--probe` describes a stream coded in fields by its frames, in every container and as a raw stream.
  func testProbeDescribesHEVCFieldsAsFrames() throws {
    for container in ["mkv", "mp4", "ts", "hevc"] {
      let clip = try hevcFields(container)
      let r = Orb.run(["--probe", clip])
      XCTAssertEqual(r.status, 0, r.stderr)
      let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
      let video = try XCTUnwrap((json?["video"] as? [[String: Any]])?.first, r.stdout)
      XCTAssertEqual(video["coded_as_fields"] as? Bool, true, container)
      XCTAssertEqual(video["height"] as? Int, 576, container)
      XCTAssertEqual(video["display_height"] as? Int, 576, container)
      XCTAssertEqual(video["frame_rate"] as? Double, 25, container)
      XCTAssertEqual(video["field_order"] as? String, "tt", container)
    }
    XCTAssertEqual(try benchmarkFrames(try hevcFields("hevc")), 100, "the raw stream plays from its start")
  }

  func testProbeNamesTheFieldOrder() throws {
    for (clip, order) in [
      (try Clips.interlacedBar(), "tb"), (try Clips.interlacedBar(progressive: true), "progressive"),
    ] {
      let r = Orb.run(["--probe", clip])
      XCTAssertEqual(r.status, 0, r.stderr)
      let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
      let video = try XCTUnwrap((json?["video"] as? [[String: Any]])?.first, r.stdout)
      XCTAssertEqual(video["field_order"] as? String, order, clip)
    }
  }

  func testAnUnknownModeIsRefusedInWords() {
    let r = Orb.run(["--deinterlace", "maybe", "--probe", "x.mkv"])
    XCTAssertEqual(r.status, 1, r.stderr)
    XCTAssertTrue(r.stderr.contains("--deinterlace must be auto, yes or no"), r.stderr)
  }
}
