import Foundation
import OrbTestSupport
import XCTest

/// Two MPEG-TS recordings joined end to end (`cat a.ts b.ts`): the second part's clock starts again at the join.
/// Both parts play, every picture once, the position never going back; the length grows past the header's (which
/// saw one part) as the second is read. The picture froze for the second part while the sound played on.
final class JoinedRecordingTests: XCTestCase {
  func testBothPartsOfRecordingsJoinedEndToEndPlay() throws {
    try Screen.requireDisplay()
    let part = try TestMedia.path(
      "join-part.ts", Clips.pictureAndTone(seconds: 3) + ["-c:v", "mpeg2video", "-c:a", "mp2", "-f", "mpegts"])
    let bytes = try Data(contentsOf: URL(fileURLWithPath: part))
    let joined = try TestMedia.file(named: "joined-twice.ts", contents: bytes + bytes)
    let player = try BackgroundPlayer(["--events-fd", "1", joined])
    XCTAssertEqual(player.wait(timeout: 40), 0, player.stderr)
    let progress = player.events.filter { $0["event"] as? String == "progress" }
    let positions = progress.compactMap { $0["position_ms"] as? Int }
    XCTAssertEqual(positions, positions.sorted(), "the position went back: \(positions)")
    XCTAssertGreaterThan(positions.last ?? 0, 4500, "the second part was not played: \(positions)")
    let ended = try XCTUnwrap(player.events.last { $0["event"] as? String == "ended" }, player.stdout)
    XCTAssertEqual(ended["reason"] as? String, "eof")
    XCTAssertEqual(Double(ended["position_ms"] as? Int ?? 0), 6000, accuracy: 150, player.stdout)
    let stats = try XCTUnwrap(ended["stats"] as? [String: Any])
    XCTAssertGreaterThanOrEqual(stats["presented"] as? Int ?? 0, 145, "every picture of both parts: \(stats)")
    XCTAssertEqual(
      Double(progress.last?["duration_ms"] as? Int ?? 0), 6000, accuracy: 150, "the length grew past the first part")
  }
}
