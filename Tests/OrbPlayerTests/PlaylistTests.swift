import OrbPlayer
import XCTest

/// The order a window plays its entries in, and when failures stop it.
final class PlaylistTests: XCTestCase {
  func testEntriesPlayInOrderBothWays() {
    var list = Playlist(["a", "b", "c"])
    XCTAssertEqual(list.current, "a")
    XCTAssertFalse(list.canGoPrevious)
    XCTAssertFalse(list.previous())
    XCTAssertTrue(list.next())
    XCTAssertTrue(list.next())
    XCTAssertEqual(list.current, "c")
    XCTAssertFalse(list.canGoNext)
    XCTAssertFalse(list.next(), "the last entry has no next")
    XCTAssertTrue(list.previous())
    XCTAssertEqual(list.current, "b")
    list.replace(with: ["d"])
    XCTAssertEqual(list.current, "d")
    XCTAssertEqual(Playlist().current, nil)
  }

  func testAFailedEntryIsSkippedAndThreeInARowStop() {
    var list = Playlist(["bad1", "good", "bad2", "bad3", "bad4", "never"])
    XCTAssertTrue(list.failed())
    XCTAssertEqual(list.current, "good")
    list.played()
    XCTAssertTrue(list.next())
    XCTAssertTrue(list.failed())
    XCTAssertTrue(list.failed(), "two in a row: go on")
    XCTAssertEqual(list.current, "bad4")
    XCTAssertFalse(list.failed(), "three in a row stop")
    var last = Playlist(["only"])
    XCTAssertFalse(last.failed(), "nothing after the last entry")
  }
}
