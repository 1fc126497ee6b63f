import OrbDecode
import XCTest

@testable import OrbPlayer

/// Page Down and Page Up through a film's chapters, by mpv's rule.
final class ChapterStepTests: XCTestCase {
  private let chapters = [
    ChapterInfo(startMs: 0, endMs: 60_000, title: "One"), ChapterInfo(startMs: 60_000, endMs: 200_000, title: "Two"),
    ChapterInfo(startMs: 200_000, endMs: 300_000, title: nil),
  ]

  private func go(_ position: Double, forward: Bool) -> Int? {
    ChapterStep.target(chapters, from: position, forward: forward)
  }

  func testForwardGoesToTheNextChapterAndNoFurtherThanTheLast() {
    XCTAssertEqual(go(0, forward: true), 1)
    XCTAssertEqual(go(59.9, forward: true), 1, "just before a chapter: that one")
    XCTAssertEqual(go(60, forward: true), 2, "at a chapter's start (a seek landed there): the next")
    XCTAssertEqual(go(59.995, forward: true), 2, "a seek's rounding is its start")
    XCTAssertNil(go(250, forward: true), "in the last chapter")
  }

  func testBackStartsThisChapterAgainFiveSecondsIntoItElseTheOneBefore() {
    XCTAssertEqual(go(130, forward: false), 1, "70 s into Two: its start")
    XCTAssertEqual(go(64, forward: false), 0, "4 s into Two: One")
    XCTAssertEqual(go(60, forward: false), 0, "at Two's start: One")
    XCTAssertEqual(go(205.5, forward: false), 2, "5.5 s into the last: its start")
    XCTAssertEqual(go(3, forward: false), 0, "in the first: its start")
  }

  /// At 23.976 fps a chapter at 60 s starts between pictures: a seek there shows the one at 59.977 s.
  func testAChapterThatStartsWithinThePictureShownHasBeenReached() {
    let picture = 1001.0 / 24000
    let shown = 59.977
    XCTAssertEqual(ChapterStep.target(chapters, from: shown, forward: true, picture: picture), 2)
    XCTAssertEqual(ChapterStep.target(chapters, from: shown, forward: false, picture: picture), 0, "at Two's start")
    XCTAssertEqual(go(shown, forward: true), 1, "without the picture's length: Two again")
    XCTAssertEqual(
      ChapterStep.target(chapters, from: 59.9, forward: true, picture: picture), 1, "two pictures before Two: Two")
  }

  /// A chapter is shown from its first picture: a start within a picture goes to the next one, a start at a
  /// picture's (or a rounding from it) to that one, a millisecond into it; a start only just within a picture, or
  /// with no picture shown, stays.
  func testAChapterLandsOnItsFirstPicture() {
    let picture = 1001.0 / 24000
    let shown = (time: 130 * picture, duration: picture)
    XCTAssertEqual(ChapterStep.landing(4, shown: shown), 96 * picture + 0.001, accuracy: 1e-9, "4 s: within 3.962")
    XCTAssertEqual(ChapterStep.landing(96 * picture, shown: shown), 96 * picture + 0.001, accuracy: 1e-9, "at one")
    XCTAssertEqual(ChapterStep.landing(96 * picture + 0.005, shown: shown), 96 * picture + 0.005, "just within one")
    XCTAssertEqual(ChapterStep.landing(4.004, shown: shown), 96 * picture + 0.001, accuracy: 1e-9, "in milliseconds")
    XCTAssertEqual(ChapterStep.landing(0, shown: shown), 0.001, accuracy: 1e-9, "the first picture")
    XCTAssertEqual(ChapterStep.landing(4, shown: nil), 4, "no picture shown")
    XCTAssertEqual(ChapterStep.landing(4, shown: (3.9, 0)), 4, "a picture with no length")
    XCTAssertEqual(ChapterStep.landing(600.3, shown: (10, 1)), 600.3, "a slide show: its sound from the start")
  }

  func testChaptersThatStartLaterAndNone() {
    let late = [ChapterInfo(startMs: 10_000, endMs: 20_000, title: nil)]
    XCTAssertNil(ChapterStep.target(late, from: 5, forward: false), "before the first chapter: none back")
    XCTAssertEqual(ChapterStep.target(late, from: 5, forward: true), 0)
    XCTAssertNil(ChapterStep.target([], from: 5, forward: true))
  }
}
