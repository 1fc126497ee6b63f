import Foundation
import XCTest

@testable import OrbPlayer

/// The engine's frame choice at each refresh, with the clock in the test's hands (no sleeping on a schedule).
final class PlayerSchedulingTests: XCTestCase {
  /// A 10 fps, 2 s pattern, drawn into 64x36 memory targets.
  private func makePlayer(_ host: ManualHostClock, paused: Bool = false, start: Double = 0) -> Player {
    let player = Player(
      source: "test://bars?size=64x36&rate=10&duration=2", start: start, paused: paused, presentation: .memory,
      width: 64, height: 36, clock: MediaClock(host: host))
    player.start()
    return player
  }

  /// Asks again and again, for up to `seconds` of real time, what is shown at `host`'s time of each ask plus `ahead`
  /// nanoseconds (GTK's frame clock asks for the refresh it will present next), and returns the first slot shown
  /// with the presentation time it was asked for. The render thread draws ahead on its own time.
  private func firstShown(
    _ player: Player, at host: any HostClock, seconds: Double = 10, ahead: UInt64 = 0, refreshInterval: UInt64 = 0
  ) -> (slot: ShownPicture, at: UInt64)? {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
      let at = host.now() + ahead
      if case .show(let slot) = player.frameToShow(presentationTime: at, refreshInterval: refreshInterval) {
        return (slot, at)
      }
      usleep(2000)
    }
    return nil
  }

  /// Asks until the player shows something.
  private func nextShown(_ player: Player, at host: ManualHostClock) -> ShownPicture? {
    firstShown(player, at: host)?.slot
  }

  /// Asks for 0.3 s at the host time of now, and returns the first slot shown. Long enough for the render thread to
  /// draw the ring full (a 64x36 frame takes it milliseconds), so a check that nothing is shown is made while drawn
  /// frames wait: `shownAtOnce` afterwards proves they did.
  private func shownWhileAsking(_ player: Player, at host: ManualHostClock) -> ShownPicture? {
    firstShown(player, at: host, seconds: 0.3)?.slot
  }

  /// One ask, no waiting: what is shown at the host time of now, when the frame due was drawn already.
  private func shownAtOnce(_ player: Player, at host: ManualHostClock) -> ShownPicture? {
    if case .show(let slot) = player.frameToShow(presentationTime: host.now()) { return slot }
    return nil
  }

  func testFirstFrameStartsTheClockAndLaterFramesComeOnTime() throws {
    let host = ManualHostClock()
    let player = makePlayer(host)
    defer { player.stop() }
    let first = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertEqual(first.time, 0, accuracy: 1e-9)
    XCTAssertEqual(player.state, .playing)
    player.release(first)
    // Not yet due: 50 ms in, frame 1 (at 100 ms) must wait, though it is drawn.
    host.advance(seconds: 0.05)
    if let early = shownWhileAsking(player, at: host) {
      XCTFail("showed the frame at \(early.time) s at 0.05 s")
    }
    // It was drawn while it waited: the moment it is due, the first ask shows it.
    host.advance(seconds: 0.05)
    let second = try XCTUnwrap(shownAtOnce(player, at: host), "frame 1 was not drawn yet: nothing was waiting")
    XCTAssertEqual(second.time, 0.1, accuracy: 1e-6)
    XCTAssertEqual(player.stats.dropped, 0)
    XCTAssertEqual(player.stats.avOffset, 0, accuracy: 1e-6)
  }

  /// GTK's cairo renderer paints a window's first picture later than predicted (a fresh window's memory, 10-25 ms on
  /// the 2-core test machine): what a host reads as the first picture's and a seek's latency runs to the paint the
  /// display reports, not to the time the picture was asked for at.
  func testTheFirstPictureAndASeekAreTimedToWhenTheyWerePainted() throws {
    let player = Player(
      source: "test://bars?size=64x36&rate=10&duration=5", start: 0, paused: false, presentation: .memory,
      width: 64, height: 36)
    player.start()
    defer { player.stop() }
    let host = MonotonicHostClock()  // the launch and the seek's request are read from it too
    func shownNow() -> (slot: ShownPicture, at: UInt64)? { firstShown(player, at: host) }
    let (first, firstAt) = try XCTUnwrap(shownNow())
    player.release(first)
    let predicted = try XCTUnwrap(player.stats.firstFrameMs)
    XCTAssertEqual(Double(predicted), Double(firstAt - HostTime.launch) / 1e6, accuracy: 1.5)
    player.picturePainted(at: firstAt + 300_000_000)
    XCTAssertEqual(player.stats.firstFrameMs ?? 0, predicted + 300, accuracy: 1, "timed to the paint")
    player.picturePainted(at: firstAt + 900_000_000)
    XCTAssertEqual(player.stats.firstFrameMs ?? 0, predicted + 300, accuracy: 1, "a later picture's paint is not it")

    let asked = HostTime.now()
    player.seek(to: 3)
    var seekShown: (ShownPicture, UInt64)?
    while let (shown, at) = shownNow() {
      player.release(shown)
      if shown.time >= 3 {
        seekShown = (shown, at)
        break
      }
    }
    let (picture, shownAt) = try XCTUnwrap(seekShown, "no picture after the seek")
    XCTAssertEqual(picture.time, 3, accuracy: 1e-6)
    XCTAssertEqual(player.stats.seeks, 1)
    let seekPredicted = Double(shownAt - asked) / 1e6
    XCTAssertEqual(Double(player.stats.seekMsMedian ?? -1), seekPredicted, accuracy: 1.5)
    player.picturePainted(at: shownAt + 200_000_000)
    XCTAssertEqual(Double(player.stats.seekMsMedian ?? -1), seekPredicted + 200, accuracy: 1.5)
    XCTAssertEqual(player.stats.seeks, 1, "the same seek, measured again")
  }

  func testTheSecondPictureOfA60FpsVideoIsNotLate() throws {
    // The display asks at each refresh for the picture it will present a refresh later, as GTK's frame clock does.
    let refresh = 1.0 / 60
    let host = ManualHostClock()
    let player = Player(
      source: "test://bars?size=64x36&rate=60&duration=2", start: 0, paused: false, presentation: .memory,
      width: 64, height: 36, clock: MediaClock(host: host))
    player.start()
    defer { player.stop() }
    /// Asks at this refresh until the picture due is drawn.
    func shownNow() -> ShownPicture? {
      let interval = UInt64(refresh * 1e9)
      return firstShown(player, at: host, ahead: interval, refreshInterval: interval)?.slot
    }
    var shown = try XCTUnwrap(shownNow())
    XCTAssertEqual(shown.time, 0, accuracy: 1e-9)
    // Each of the next refreshes presents the next picture, none late.
    for n in 1...4 {
      host.advance(seconds: refresh)
      let next = try XCTUnwrap(shownNow(), "nothing shown at refresh \(n)")
      XCTAssertEqual(next.time, Double(n) * refresh, accuracy: 1e-3, "refresh \(n)")
      player.release(shown)
      shown = next
    }
    XCTAssertEqual(player.stats.dropped, 0)
  }

  /// While the first picture after opening or a seek is on its way to the screen, the render thread draws no other
  /// (and the decoder stops a picture ahead): on two cores, drawing and decoding ahead slowed the window's first
  /// frames, which paint it. Once the display says it was painted, or at its next refresh, drawing ahead goes on.
  func testNothingIsDrawnAheadWhileTheFirstPictureIsOnItsWay() throws {
    let host = ManualHostClock()
    let player = makePlayer(host)
    defer { player.stop() }
    func drawnAhead() -> Int { player.shared.withLock { $0.ring.ready.count } }
    func drawnAhead(reaches count: Int) -> Bool {
      let deadline = Date(timeIntervalSinceNow: 5)
      while drawnAhead() < count && Date() < deadline { usleep(2000) }
      return drawnAhead() >= count
    }
    let (first, shownAt) = try XCTUnwrap(firstShown(player, at: host))
    usleep(300_000)  // a 64x36 picture takes the render thread a millisecond or two
    XCTAssertEqual(drawnAhead(), 0, "drawn ahead before the first picture was painted")
    player.picturePainted(at: shownAt)
    XCTAssertTrue(drawnAhead(reaches: 2), "nothing drawn ahead once the first picture was painted")
    player.release(first)

    // A seek's first picture is held the same way, here until the next refresh (a display that says nothing of its
    // paints).
    player.seek(to: 1)
    var target: ShownPicture?
    while let (shown, _) = firstShown(player, at: host) {
      player.release(shown)
      if shown.time >= 1 {
        target = shown
        break
      }
    }
    XCTAssertEqual(try XCTUnwrap(target, "no picture after the seek").time, 1, accuracy: 1e-6)
    usleep(300_000)
    XCTAssertEqual(drawnAhead(), 0, "drawn ahead before the seek's picture was on screen")
    if case .show(let early) = player.frameToShow(presentationTime: host.now()) {
      XCTFail("showed the picture at \(early.time) s before its time")
    }
    XCTAssertTrue(drawnAhead(reaches: 2), "nothing drawn ahead after the next refresh")
    XCTAssertEqual(player.stats.dropped, 0)
  }

  func testLateFramesAreDroppedAndCounted() throws {
    let host = ManualHostClock()
    let player = makePlayer(host)
    defer { player.stop() }
    let first = try XCTUnwrap(nextShown(player, at: host))
    player.release(first)
    host.advance(seconds: 0.05)
    _ = shownAtOnce(player, at: host)  // the refresh after the first picture: the sound starts
    usleep(200_000)  // let the ring fill
    host.advance(seconds: 0.75)  // the display stalled for three quarters of a second
    let shown = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertLessThanOrEqual(shown.time, 0.75 + 1e-6)
    XCTAssertGreaterThan(shown.time, 0.1)
    XCTAssertGreaterThan(player.stats.dropped, 0)
  }

  func testPausedPlayerHoldsItsFrame() throws {
    let host = ManualHostClock()
    let player = makePlayer(host, paused: true)
    defer { player.stop() }
    let first = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertEqual(player.state, .paused)
    player.release(first)
    // Five seconds pass on the host while the render thread draws the frames after it: none may be shown.
    host.advance(seconds: 5)
    if let slot = shownWhileAsking(player, at: host) {
      XCTFail("showed \(slot.time) s while paused")
    }
    player.togglePause()
    XCTAssertEqual(player.state, .playing)
    // They were drawn while paused: once due, the first ask shows the next one, from where the pause began.
    host.advance(seconds: 0.1)
    let next = try XCTUnwrap(shownAtOnce(player, at: host), "frame 1 was not drawn yet: nothing was held back")
    XCTAssertEqual(next.time, 0.1, accuracy: 1e-6)
  }

  func testStartPositionAndEndOfMedia() throws {
    let host = ManualHostClock()
    let player = makePlayer(host, start: 1.7)
    defer { player.stop() }
    let first = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertEqual(first.time, 1.7, accuracy: 1e-6)
    var last = first
    var ended = false
    let deadline = Date(timeIntervalSinceNow: 10)
    while !ended && Date() < deadline {
      host.advance(seconds: 0.02)
      switch player.frameToShow(presentationTime: host.now()) {
      case .show(let slot):
        player.release(last)
        last = slot
      case .ended: ended = true
      case .keep: usleep(2000)
      }
    }
    XCTAssertTrue(ended, "never reached the end")
    XCTAssertEqual(last.time, 1.9, accuracy: 1e-6)
    XCTAssertEqual(player.state, .ended)
  }

  func testResizeRedrawsTheShownFrameAtTheNewSize() throws {
    let host = ManualHostClock()
    let player = makePlayer(host, paused: true)
    defer { player.stop() }
    let first = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertEqual(first.slot.target.width, 64)
    player.setTargetSize(width: 128, height: 72)
    let redrawn = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertEqual(redrawn.slot.target.width, 128)
    XCTAssertEqual(redrawn.slot.target.height, 72)
    XCTAssertEqual(redrawn.time, first.time)
  }

  func testAResizeWhilePlayingLosesNoFrameDrawnAhead() throws {
    let host = ManualHostClock()
    let player = makePlayer(host)
    defer { player.stop() }
    let first = try XCTUnwrap(nextShown(player, at: host))
    player.release(first)
    _ = player.frameToShow(presentationTime: host.now())  // the next refresh: the first picture is on screen
    usleep(200_000)  // the ring fills: frames drawn ahead at 64x36 wait for their time
    player.setTargetSize(width: 128, height: 72)
    usleep(200_000)  // the render thread makes the new ring
    var times: [Double] = []
    var widths: Set<Int> = []
    for _ in 0..<4 {
      host.advance(seconds: 0.1)
      let shown = try XCTUnwrap(nextShown(player, at: host))
      times.append(shown.time)
      widths.insert(shown.slot.target.width)
      player.release(shown)
    }
    // The frames drawn ahead before the resize are drawn again at the new size, not dropped.
    XCTAssertEqual(times.count, 4)
    for (i, t) in times.enumerated() { XCTAssertEqual(t, 0.1 * Double(i + 1), accuracy: 1e-6, "\(times)") }
    XCTAssertEqual(widths, [128])
    XCTAssertEqual(player.stats.dropped, 0)
  }

  /// 4K at 10 bits: 25 MB a picture, more than the ring keeps once drawn (`SlotRing.keptPictureBytes`).
  private static let uhd = "test://hdr10-bars?size=3840x2160&rate=10&duration=2"

  func testAPictureTooLargeToKeepIsLetGoOnceDrawnAndAPausedOneIsDecodedAgainForANewSize() throws {
    let host = ManualHostClock()
    let player = Player(
      source: Self.uhd, paused: true, presentation: .memory, width: 64, height: 36, clock: MediaClock(host: host))
    player.start()
    defer { player.stop() }
    let first = try XCTUnwrap(nextShown(player, at: host))
    let shown = try XCTUnwrap(player.shownFrame)
    XCTAssertGreaterThan(shown.pictureBytes, SlotRing.keptPictureBytes)
    XCTAssertFalse(shown.hasPicture, "the 25 MB picture on screen is still held")
    XCTAssertEqual(shown.width, 3840, "its description stays")
    player.release(first)
    player.setTargetSize(width: 128, height: 72)
    let redrawn = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertEqual(redrawn.slot.target.width, 128)
    XCTAssertEqual(redrawn.time, first.time, accuracy: 1e-6)
    XCTAssertEqual(player.state, .paused)
    // The bars are drawn, not black: the picture was decoded again, not lost.
    let pixels = try XCTUnwrap(redrawn.slot.target.pixels)
    let middle = (36 * redrawn.slot.target.width + 8) * 4
    XCTAssertGreaterThan(Int(pixels[middle]) + Int(pixels[middle + 1]) + Int(pixels[middle + 2]), 100)
  }

  func testPicturesSmallEnoughAreKeptToBeDrawnAgain() throws {
    let host = ManualHostClock()
    let player = makePlayer(host, paused: true)
    defer { player.stop() }
    _ = try XCTUnwrap(nextShown(player, at: host))
    XCTAssertEqual(player.shownFrame?.hasPicture, true)
  }

  func testAMissingFileIsReportedAsAnEvent() {
    let reported = expectation(description: "failed event")
    let player = Player(
      source: "/nonexistent/clip.mkv", presentation: .memory, width: 64, height: 36,
      onEvent: { event in
        if case .failed(let error) = event {
          XCTAssertEqual(error.kind, .missing)
          XCTAssertEqual(error.description, "cannot open '/nonexistent/clip.mkv': no such file")
          reported.fulfill()
        }
      })
    player.start()
    wait(for: [reported], timeout: 10)
    XCTAssertEqual(player.state, .error)
  }
}
