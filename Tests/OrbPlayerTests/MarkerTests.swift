import OrbPlayer
import XCTest

/// Marker windows read from the host's options, checked, followed as the play head moves, and skipped.
final class MarkerTests: XCTestCase {
  func testOptionsAreReadInMilliseconds() throws {
    XCTAssertEqual(
      try Marker.parse("5000-65000", kind: .intro, endOptional: false).get(),
      Marker(kind: .intro, start: 5, end: 65))
    XCTAssertEqual(
      try Marker.parse("1200000", kind: .credits, endOptional: true).get(),
      Marker(kind: .credits, start: 1200, end: nil))
    for bad in ["", "abc", "5000", "5-x", "-5-10", "1-2-3"] {
      if case .success(let m) = Marker.parse(bad, kind: .intro, endOptional: false) { XCTFail("'\(bad)' read as \(m)") }
    }
  }

  func testMarkersThatCannotBeMeantAreLeftOutWithAWarning() {
    var warnings: [String] = []
    let timeline = MarkerTimeline(
      [
        Marker(kind: .intro, start: 10, end: 5), Marker(kind: .credits, start: 700, end: nil),
      ], duration: 600, warn: { warnings.append($0) })
    XCTAssertEqual(timeline.markers, [])
    XCTAssertEqual(warnings.count, 2, "\(warnings)")
    XCTAssertTrue(warnings[0].contains("--intro") && warnings[0].contains("before it starts"), warnings[0])
    XCTAssertTrue(warnings[1].contains("--credits") && warnings[1].contains("after the end"), warnings[1])
    warnings = []
    let overlapping = MarkerTimeline(
      [Marker(kind: .intro, start: 10, end: 100), Marker(kind: .credits, start: 50, end: nil)], duration: 600,
      warn: { warnings.append($0) })
    XCTAssertEqual(overlapping.markers.map(\.kind), [.intro])
    XCTAssertEqual(warnings.count, 1)
    warnings = []
    _ = MarkerTimeline([Marker(kind: .intro, start: 5, end: 5)], duration: 600, warn: { warnings.append($0) })
    XCTAssertEqual(warnings, ["--intro ignored: it ends where it starts (5000 ms)"])
  }

  func testTheWindowIsEnteredAndLeftByPlayingAndBySeeking() {
    var timeline = MarkerTimeline(
      [Marker(kind: .intro, start: 10, end: 70), Marker(kind: .credits, start: 550, end: nil)], duration: 600,
      warn: { _ in })
    XCTAssertTrue(timeline.update(position: 9.9) == (nil, nil))
    let entered = timeline.update(position: 10)
    XCTAssertNil(entered.left)
    XCTAssertEqual(entered.entered?.kind, .intro)
    XCTAssertTrue(timeline.update(position: 30) == (nil, nil), "no change while inside")
    // A seek from inside the intro straight into the credits leaves one and enters the other.
    let jumped = timeline.update(position: 560)
    XCTAssertEqual(jumped.left?.kind, .intro)
    XCTAssertEqual(jumped.entered?.kind, .credits)
    XCTAssertEqual(timeline.update(position: 5).left?.kind, .credits)
    XCTAssertNil(timeline.current)
  }

  func testSkippingGoesToTheEndOfTheWindowOrEndsAtTheCredits() {
    let timeline = MarkerTimeline(
      [Marker(kind: .intro, start: 10, end: 70), Marker(kind: .credits, start: 500, end: 580)], duration: 600,
      warn: { _ in })
    XCTAssertEqual(timeline.skip(timeline.markers[0]), .seek(70))
    XCTAssertEqual(timeline.skip(timeline.markers[1]), .seek(580), "credits with a scene after them")
    XCTAssertEqual(timeline.skip(Marker(kind: .credits, start: 500, end: nil)), .end)
    XCTAssertEqual(timeline.skip(Marker(kind: .credits, start: 500, end: 599.5)), .end, "END at the end of the file")
    let toTheEnd = MarkerTimeline([Marker(kind: .intro, start: 0.5, end: 60)], duration: 10, warn: { _ in })
    XCTAssertEqual(toTheEnd.skip(toTheEnd.markers[0]), .end, "an intro that runs to the end, as its button comes back")
  }
}
