import Foundation
import XCTest

@testable import OrbPlayer

/// "Buffering" means waiting for data, never a pause or a seek.
final class BufferingStateTests: XCTestCase {
  /// The picture on screen between calls of `play`, as a window keeps it until the next replaces it.
  private var onScreen: ShownPicture?

  private func play(_ player: Player, seconds: Double) {
    let end = Date(timeIntervalSinceNow: seconds)
    var shown = onScreen
    defer { onScreen = shown }
    while Date() < end {
      if case .show(let slot) = player.frameToShow(presentationTime: HostTime.now(), refreshInterval: 16_666_667) {
        if let old = shown { player.release(old) }
        shown = slot
      }
      usleep(16_000)
    }
  }

  func testAPauseOrASeekIsNotBuffering() throws {
    let player = Player(
      source: "test://bars?size=64x36&rate=25&duration=30", presentation: .memory, width: 64, height: 36)
    player.start()
    defer { player.stop() }
    play(player, seconds: 0.5)
    XCTAssertFalse(player.isBuffering)
    player.togglePause()
    Thread.sleep(forTimeInterval: 2)
    player.togglePause()
    XCTAssertFalse(player.isBuffering, "buffering right after a 2 s pause")
    play(player, seconds: 0.3)
    XCTAssertFalse(player.isBuffering)
    player.seek(to: 20)
    XCTAssertFalse(player.isBuffering, "buffering right after a seek")
    play(player, seconds: 0.5)
    XCTAssertFalse(player.isBuffering)
    XCTAssertEqual(player.position, 20.5, accuracy: 0.3)
  }
}
