import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

@testable import OrbPlayer

/// Sound through PipeWire (the test session's null sink) driving the clock, and pictures following it.
final class AudioSyncTests: XCTestCase {
  private func requirePipeWire() throws {
    do {
      _ = try AudioOutput(mediaName: "probe")
    } catch {
      if ProcessInfo.processInfo.environment["CI"] == "true" {
        XCTFail("no PipeWire in CI (\(error)): run the suite through scripts/test.sh")
      }
      throw XCTSkip("no PipeWire (\(error)): run through scripts/test.sh")
    }
  }

  static func avsyncClip() throws -> String {
    try TestMedia.path(
      "avsync-12s.mp4",
      [
        "-f", "lavfi", "-i", "avsynctest=s=640x360:fr=30:sr=48000:d=12[out1][out0]", "-c:v", "libx264", "-preset",
        "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac",
      ])
  }

  /// Plays like a 60 Hz display would, for `seconds`, calling `observe` after each new picture.
  private func display(_ player: Player, seconds: Double, observe: (VideoSlot) -> Void) {
    let refresh: UInt64 = 16_666_667
    let end = Date(timeIntervalSinceNow: seconds)
    var shown: VideoSlot?
    while Date() < end {
      let at = HostTime.now() + refresh
      if case .show(let slot) = player.frameToShow(presentationTime: at, refreshInterval: refresh) {
        if let old = shown { player.release(old) }
        shown = slot
        observe(slot)
      }
      usleep(UInt32(refresh / 1000))
    }
  }

  private func startPlayer(_ clip: String, speed: Double = 1) -> Player {
    let player = Player(
      source: clip, speed: speed, presentation: .memory, width: 160, height: 90,
      audio: MediaPipeline.AudioRequest())
    player.start()
    return player
  }

  /// Waits until the audio output drives the clock.
  private func waitForMaster(_ player: Player) throws {
    var driven = false
    display(player, seconds: 0.2) { _ in }
    for _ in 0..<100 where !driven {
      display(player, seconds: 0.05) { _ in }
      driven = player.clock.isDrivenByMaster
    }
    XCTAssertTrue(driven, "the audio output never drove the clock")
    if !driven { throw XCTSkip("no audio clock") }
  }

  func testClockRunsAtRealTimeFromPipeWire() throws {
    try requirePipeWire()
    let player = startPlayer(try Self.avsyncClip())
    defer { player.stop() }
    try waitForMaster(player)
    let host0 = HostTime.now()
    let media0 = player.clock.time(at: host0)
    display(player, seconds: 5) { _ in }
    let host1 = HostTime.now()
    let media1 = player.clock.time(at: host1)
    let rate = (media1 - media0) / (Double(host1 - host0) / 1e9)
    XCTAssertEqual(rate, 1, accuracy: 0.005, "media clock ran at \(rate)× real time")
    XCTAssertTrue(player.clock.isDrivenByMaster)
  }

  func testPicturesFollowTheSoundAtOneX() throws {
    try requirePipeWire()
    let player = startPlayer(try Self.avsyncClip())
    defer { player.stop() }
    try waitForMaster(player)
    var offsets: [Double] = []
    display(player, seconds: 6) { _ in
      if player.clock.isDrivenByMaster { offsets.append(player.stats.avOffset) }
    }
    XCTAssertGreaterThan(offsets.count, 120, "frames shown: \(offsets.count)")
    let worst = offsets.map(abs).max() ?? 1
    let mean = offsets.reduce(0, +) / Double(max(1, offsets.count))
    XCTAssertLessThanOrEqual(worst, 0.020, "worst A/V offset \(worst * 1000) ms")
    XCTAssertEqual(mean, 0, accuracy: 0.005, "mean A/V offset \(mean * 1000) ms")
    print("A/V offset at 1x over \(offsets.count) frames: mean \(mean * 1000) ms, worst \(worst * 1000) ms")
  }

  func testAudioOnlyFilePlaysOnTheAudioClock() throws {
    try requirePipeWire()
    let clip = try TestMedia.path(
      "sine-2s.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-c:a", "aac"])
    let player = startPlayer(clip)
    defer { player.stop() }
    let started = Date()
    var ended = false
    while !ended && Date().timeIntervalSince(started) < 10 {
      if case .ended = player.frameToShow(presentationTime: HostTime.now()) { ended = true }
      usleep(20_000)
    }
    XCTAssertTrue(ended, "an audio-only file never ended")
    XCTAssertGreaterThan(Date().timeIntervalSince(started), 1.8, "2 s of sound ended early")
  }
}
