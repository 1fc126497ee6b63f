import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

@testable import OrbRender

/// ASS cues drawn by libass as their script places and styles them: the pixels of the picture it gives.
final class ASSRendererTests: XCTestCase {
  /// A 640x360 script whose Default style is red 40-pixel text with a 2-pixel black outline, bottom centre, and
  /// whose Big style is the same at 80.
  static let header = SubtitleMedia.assScript(
    width: 640, height: 360,
    styles: [
      SubtitleMedia.assStyle("Default", size: 40, colour: "&H000000FF"),
      SubtitleMedia.assStyle("Big", size: 80, colour: "&H000000FF"),
    ])

  private func cue(
    _ text: String, style: String = "Default", order: Int = 0, from start: Double = 0, to end: Double = 10
  )
    -> ASSRenderer.Cue
  {
    ASSRenderer.Cue(ASSEvent(header: Self.header, line: "\(order),0,\(style),,0,0,0,,\(text)"), start: start, end: end)
  }

  /// The picture at `time`, failing when libass gives none or says nothing changed.
  private func drawn(
    _ renderer: ASSRenderer, at time: Double = 1, width: Int = 640, height: Int = 360, file: StaticString = #filePath,
    line: UInt = #line
  ) -> ASSRenderer.Picture? {
    let frame = renderer.render(at: time, width: width, height: height)
    guard case .picture(let picture?) = frame else {
      XCTFail("no picture at \(time): \(frame)", file: file, line: line)
      return nil
    }
    return picture
  }

  /// Where the picture is inked (alpha over half), in frame pixels: libass pads its pictures with clear pixels.
  private struct Ink {
    var x0 = Int.max, y0 = Int.max, x1 = Int.min, y1 = Int.min
    var width: Int { x1 - x0 }
    var height: Int { y1 - y0 }
    var centre: Double { Double(x0 + x1) / 2 }
  }
  private func ink(_ picture: ASSRenderer.Picture, columns: Range<Int>? = nil) -> Ink {
    var box = Ink()
    for row in 0..<picture.height {
      for column in 0..<picture.width where picture.pixel(column, row).a > 128 {
        if let columns, !columns.contains(picture.x + column) { continue }
        box.x0 = min(box.x0, picture.x + column)
        box.x1 = max(box.x1, picture.x + column + 1)
        box.y0 = min(box.y0, picture.y + row)
        box.y1 = max(box.y1, picture.y + row + 1)
      }
    }
    return box
  }

  /// How many of the picture's pixels are strongly red, and how many dark and opaque (outline).
  private func colours(_ picture: ASSRenderer.Picture) -> (red: Int, dark: Int) {
    var (red, dark) = (0, 0)
    for row in 0..<picture.height {
      for column in 0..<picture.width {
        let p = picture.pixel(column, row)
        if p.a > 200 && p.r > 200 && p.g < 50 && p.b < 50 { red += 1 }
        if p.a > 200 && p.r < 40 && p.g < 40 && p.b < 40 { dark += 1 }
      }
    }
    return (red, dark)
  }

  func testAPositionedCueIsDrawnWhereItsScriptPutsItInItsColoursAndOutline() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    renderer.show([cue("{\\an7\\pos(100,60)}Hello")])
    let at640 = try XCTUnwrap(drawn(renderer))
    let box = ink(at640)
    // Top-left anchored at (100, 60): the outline reaches a pixel or two beyond; the capitals' tops are below the
    // line's top.
    XCTAssertEqual(Double(box.x0), 100, accuracy: 4, "x")
    XCTAssertEqual(Double(box.y0), 66, accuracy: 8, "y")
    XCTAssertLessThan(box.width, 150, "one short word")
    XCTAssertEqual(Double(box.height), 32, accuracy: 6, "the capitals of 40-pixel text and the outline")
    let (red, dark) = colours(at640)
    XCTAssertGreaterThan(red, 300, "red text")
    XCTAssertGreaterThan(dark, 100, "a black outline")
    // The same script on a frame twice the size: twice as far, twice as tall.
    let at1280 = ink(try XCTUnwrap(drawn(renderer, width: 1280, height: 720)))
    XCTAssertEqual(Double(at1280.x0), 200, accuracy: 6)
    XCTAssertEqual(Double(at1280.height), Double(box.height) * 2, accuracy: 6)
  }

  func testStylesSizeTheTextAndAlignmentsPlaceIt() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    renderer.show([cue("Hello")])
    let small = ink(try XCTUnwrap(drawn(renderer)))
    // Bottom centre, MarginV 10 (the line's descent below the baseline).
    XCTAssertEqual(small.centre, 320, accuracy: 3)
    XCTAssertEqual(Double(small.y1), 340, accuracy: 8)
    renderer.show([cue("Hello", style: "Big")])
    let big = ink(try XCTUnwrap(drawn(renderer)))
    XCTAssertEqual(Double(big.width) / Double(small.width), 2, accuracy: 0.2)
    renderer.show([cue("{\\an9}Hello")])
    let topRight = ink(try XCTUnwrap(drawn(renderer)))
    XCTAssertEqual(Double(topRight.x1), 630, accuracy: 6)
    XCTAssertLessThan(topRight.y0, 30)
    renderer.show([cue("{\\an1}Hello")])
    let bottomLeft = ink(try XCTUnwrap(drawn(renderer)))
    XCTAssertEqual(Double(bottomLeft.x0), 10, accuracy: 6)
  }

  func testAMovingCueMovesAndAStillOneIsNotDrawnAgain() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    renderer.show([cue("{\\an7\\move(0,100,400,100,0,1000)}Go")])
    let early = ink(try XCTUnwrap(drawn(renderer, at: 0.1)))
    let late = ink(try XCTUnwrap(drawn(renderer, at: 0.9)))
    XCTAssertEqual(Double(late.x0 - early.x0), 320, accuracy: 8)
    // Past the move's end it stands still: drawn once, then unchanged frame after frame.
    _ = drawn(renderer, at: 2)
    XCTAssertEqual(renderer.render(at: 2.04, width: 640, height: 360), .unchanged)
    XCTAssertEqual(renderer.render(at: 2.08, width: 640, height: 360), .unchanged)
    // A new size is drawn again.
    XCTAssertNotEqual(renderer.render(at: 2.12, width: 320, height: 180), .unchanged)
  }

  /// With the controls over the bottom of the picture, dialogue goes above them; a cue placed by the script stays.
  func testDialogueMovesAboveWhatCoversTheBottom() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    renderer.show([cue("Hello"), cue("{\\an7\\pos(100,300)}Placed", order: 1)])
    let open = try XCTUnwrap(drawn(renderer))
    guard case .picture(let covered?) = renderer.render(at: 1, width: 640, height: 360, hiddenBelow: 80) else {
      return XCTFail("nothing drawn with the bottom covered")
    }
    // Hello: centred, its bottom above the covered 80 pixels; before, at 340.
    XCTAssertEqual(Double(ink(open).y1), 340, accuracy: 8)
    let hello = ink(covered, columns: 250..<390)
    XCTAssertLessThanOrEqual(hello.y1, 280, "above the controls")
    XCTAssertGreaterThan(hello.y1, 240, "just above them")
    // Placed: where its \\pos says, under the controls.
    XCTAssertEqual(Double(ink(covered, columns: 90..<250).y0), Double(ink(open, columns: 90..<250).y0), accuracy: 1)
  }

  /// Dialogue whose own bottom margin already clears what covers the bottom stays where the script puts it; with a
  /// smaller margin (an event's own, over its style's), it goes up only by what its margin does not clear.
  func testDialogueHighEnoughStaysWhereTheScriptPutsIt() throws {
    let header = SubtitleMedia.assScript(
      width: 640, height: 360,
      styles: [
        SubtitleMedia.assStyle("High", size: 40, colour: "&H000000FF").replacingOccurrences(
          of: ",10,10,10,1", with: ",10,10,100,1"),
        SubtitleMedia.assStyle("Low", size: 20).replacingOccurrences(of: ",10,10,10,1", with: ",10,10,0,1"),
      ])
    func cue(_ marginV: Int) -> ASSRenderer.Cue {
      ASSRenderer.Cue(ASSEvent(header: header, line: "0,0,High,,0,0,\(marginV),,Hello"), start: 0, end: 10)
    }
    func bottom(_ marginV: Int, hiddenBelow: Int, sign: String? = nil) throws -> Int {
      let renderer = try XCTUnwrap(ASSRenderer())
      renderer.show(
        [cue(marginV)] + (sign.map { [ASSRenderer.Cue(ASSEvent(header: header, line: $0), start: 0, end: 10)] } ?? []))
      guard case .picture(let picture?) = renderer.render(at: 1, width: 640, height: 360, hiddenBelow: hiddenBelow)
      else {
        XCTFail("nothing drawn")
        return 0
      }
      return ink(picture, columns: 200..<440).y1
    }
    // The style's margin: 100 of 360, its bottom near 260, above the 80 covered; a sign placed with \\pos, though
    // of a style with no margin, moves nothing.
    XCTAssertEqual(try bottom(0, hiddenBelow: 80), try bottom(0, hiddenBelow: 0), "already clear: not moved")
    XCTAssertEqual(
      try bottom(0, hiddenBelow: 80, sign: "0,0,Low,,0,0,0,,{\\pos(600,20)}Sign"), try bottom(0, hiddenBelow: 0),
      "a sign placed by the script counts for nothing")
    XCTAssertLessThan(
      try bottom(0, hiddenBelow: 80, sign: "0,0,Low,,0,0,0,,{\\an1}Low"), try bottom(0, hiddenBelow: 0),
      "a line at the bottom by \\an1 is one libass moves: it counts, and all go up")
    // The event's own margin of 40: its bottom near 320, 40 into the covered part, goes up by those 40.
    let open = try bottom(40, hiddenBelow: 0)
    XCTAssertEqual(Double(open), 320, accuracy: 8)
    XCTAssertEqual(try bottom(40, hiddenBelow: 80), open - 40, "up by what its margin does not clear")
  }

  /// A cue a file says lasts 10^300 s, or starts that far on, is drawn (or not yet) and stops nothing: its times
  /// were converted to milliseconds with a conversion that traps past Int64. At most `mostEvents` cues are given to
  /// libass at once.
  func testCuesAtTimesPastAnyRealLengthAndTooManyCues() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    renderer.show([cue("For ever", from: 0, to: 1e300), cue("Later", order: 1, from: 1e300, to: .infinity)])
    XCTAssertNotNil(drawn(renderer))
    renderer.show((0..<ASSRenderer.mostEvents + 100).map { cue("{\\an7\\pos(\($0 % 600),10)}.", order: $0) })
    XCTAssertEqual(renderer.events, ASSRenderer.mostEvents)
  }

  /// The masks (what cairo paints in the window) blend to the same picture as the one composed (`--frame-at`, GL),
  /// a cue reaching past the frame's top left clipped alike.
  func testMasksBlendToTheComposedPicture() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    renderer.show([cue("{\\an7\\pos(-10,-10)\\1a&H40&}Cut off"), cue("{\\an3\\blur2}Shadowed", order: 1)])
    let composed = try XCTUnwrap(drawn(renderer))
    guard case .picture(let masked?) = renderer.render(at: 1, width: 640, height: 360, masks: true) else {
      return XCTFail("no masks")
    }
    XCTAssertEqual(
      [masked.x, masked.y, masked.width, masked.height], [composed.x, composed.y, composed.width, composed.height])
    XCTAssertTrue(masked.bgra.isEmpty)
    XCTAssertFalse(masked.masks.isEmpty)
    // Premultiplied "over", in float, mask after mask, as cairo does it.
    var canvas = [Double](repeating: 0, count: composed.width * composed.height * 4)
    for mask in masked.masks {
      XCTAssertGreaterThanOrEqual(mask.x, 0)
      XCTAssertGreaterThanOrEqual(mask.y, 0)
      let colour = [mask.blue, mask.green, mask.red].map { Double($0) / 255 }
      for row in 0..<mask.height {
        for column in 0..<mask.width {
          let k = Double(mask.coverage[row * mask.width + column]) / 255 * Double(mask.opacity) / 255
          let i = ((mask.y - composed.y + row) * composed.width + mask.x - composed.x + column) * 4
          for c in 0..<3 { canvas[i + c] = colour[c] * k + canvas[i + c] * (1 - k) }
          canvas[i + 3] = k + canvas[i + 3] * (1 - k)
        }
      }
    }
    let worst = zip(canvas, composed.bgra).map { abs($0 * 255 - Double($1)) }.max() ?? 0
    XCTAssertLessThanOrEqual(worst, 1.5, "the masks and the composed picture differ by up to \(worst) codes")
  }

  func testCuesShowOnlyInTheirTimeAndClearWhenTakenAway() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    XCTAssertEqual(renderer.render(at: 1, width: 640, height: 360), .picture(nil), "nothing given, nothing drawn")
    renderer.show([cue("Later", from: 5, to: 6)])
    XCTAssertEqual(renderer.render(at: 1, width: 640, height: 360), .picture(nil))
    XCTAssertNotNil(drawn(renderer, at: 5.5))
    // Given again (after a seek, the same read order): drawn again, not dropped as a repeat.
    renderer.show([cue("Later", from: 5, to: 6)])
    XCTAssertNotNil(drawn(renderer, at: 5.5))
    renderer.show([])
    XCTAssertEqual(renderer.render(at: 5.5, width: 640, height: 360), .picture(nil))
    XCTAssertEqual(renderer.render(at: 5.6, width: 640, height: 360), .unchanged)
  }

  /// A font the media carries is used: with fontconfig given no fonts at all, nothing can be drawn until the font
  /// is given with the media.
  func testTheFontsTheMediaCarriesAreUsed() throws {
    let config = FileManager.default.temporaryDirectory.appendingPathComponent("orb-no-fonts-\(getpid()).conf")
    try "<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n".write(to: config, atomically: true, encoding: .utf8)
    setenv("FONTCONFIG_FILE", config.path, 1)
    defer { unsetenv("FONTCONFIG_FILE") }
    let without = try XCTUnwrap(ASSRenderer())
    without.show([cue("Hello")])
    XCTAssertEqual(without.render(at: 1, width: 640, height: 360), .picture(nil), "no font: nothing drawn")
    let path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    let bytes = try XCTUnwrap(FileManager.default.contents(atPath: path), "fonts-dejavu-core is installed")
    let with = try XCTUnwrap(ASSRenderer(fonts: [EmbeddedFont(name: "DejaVuSans.ttf", data: [UInt8](bytes))]))
    with.show([cue("Hello")])
    let drawn = try XCTUnwrap(drawn(with))
    XCTAssertGreaterThan(colours(drawn).red, 300)
  }

  func testLayersAndDrawingsAreDrawnAndAFadeFades() throws {
    let renderer = try XCTUnwrap(ASSRenderer())
    // A red square drawn with vector commands, 100x100 at (50, 50).
    renderer.show([cue("{\\an7\\pos(50,50)\\bord0\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}")])
    let square = try XCTUnwrap(drawn(renderer))
    XCTAssertEqual(ink(square).x0, 50)
    XCTAssertEqual(ink(square).width, 100)
    XCTAssertEqual(ink(square).height, 100)
    let middle = (ink(square).x0 + 50 - square.x, ink(square).y0 + 50 - square.y)
    XCTAssertEqual(square.pixel(middle.0, middle.1).r, 255)
    XCTAssertEqual(square.pixel(middle.0, middle.1).a, 255)
    // Fading in over its first second: half way in, about half as opaque.
    renderer.show([cue("{\\an7\\pos(50,50)\\bord0\\fad(1000,0)\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}")])
    let fading = try XCTUnwrap(drawn(renderer, at: 0.5))
    XCTAssertEqual(Double(fading.pixel(100 - fading.x, 100 - fading.y).a), 128, accuracy: 20)
    // Two cues with the same text in two layers, a shadow and the text: both drawn.
    renderer.show([
      cue("{\\an7\\pos(50,50)\\bord0\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}", order: 1),
      cue("{\\an7\\pos(300,50)\\bord0\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}", order: 2),
    ])
    let both = ink(try XCTUnwrap(drawn(renderer)))
    XCTAssertEqual(both.x0, 50)
    XCTAssertEqual(both.x1, 400)
  }
}
