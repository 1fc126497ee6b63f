import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

@testable import OrbPlayer

/// Sound through PipeWire (the test session's null sink) driving the clock, and pictures following it.
final class AudioSyncTests: XCTestCase {
  private func requirePipeWire() throws {
    var problem = ""
    do { _ = try AudioOutput(mediaName: "probe") } catch { problem = "\(error)" }
    try Requirement.require(problem.isEmpty, "no PipeWire (\(problem))")
  }

  static func avsyncClip() throws -> String {
    try TestMedia.path(
      "avsync-12s.mp4",
      [
        "-f", "lavfi", "-i", "avsynctest=s=640x360:fr=30:sr=48000:d=12[out1][out0]", "-c:v", "libx264", "-preset",
        "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac",
      ])
  }

  /// The picture on screen between calls of `display`, as a window keeps it until the next replaces it.
  private var onScreen: ShownPicture?

  /// Plays like a 60 Hz display would, for `seconds`, calling `observe` after each new picture. Refreshes sit on a
  /// fixed grid, as vsync does: one that this loop reaches too late is skipped, as a compositor skips it.
  private func display(_ player: Player, seconds: Double, observe: (ShownPicture) -> Void) {
    let refresh: UInt64 = 16_666_667
    let start = HostTime.now()
    let end = start + UInt64(seconds * 1e9)
    var shown = onScreen
    defer { onScreen = shown }
    var k: UInt64 = 1
    while true {
      var now = HostTime.now()
      if now >= end { break }
      // The refresh this frame will be presented at: the next grid point at least half a refresh away.
      while start + k * refresh < now + refresh / 2 { k += 1 }
      let at = start + k * refresh
      if case .show(let slot) = player.frameToShow(presentationTime: at, refreshInterval: refresh) {
        if let old = shown { player.release(old) }
        shown = slot
        observe(slot)
      }
      now = HostTime.now()
      if at > now { usleep(UInt32((at - now) / 1000)) }
      k += 1
    }
  }

  private func startPlayer(_ clip: String, start: Double = 0, speed: Double = 1) -> Player {
    let player = Player(
      source: clip, start: start, speed: speed, presentation: .memory, width: 160, height: 90,
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
    print("clock rate at 1x: \(rate)")
    // A functional bound that holds under load; bench/avsync.sh reports the figure (about 1.000 ± 0.005).
    XCTAssertEqual(rate, 1, accuracy: 0.03, "media clock ran at \(rate)× real time")
    XCTAssertTrue(player.clock.isDrivenByMaster)
  }

  func testNothingIsHeardBeforeTheSoundStartsOrWhilePaused() throws {
    try requirePipeWire()
    let output = try AudioOutput(mediaName: "heard")
    output.setActive(false)  // as the player opens it: held until the first picture starts the clock
    let fifth = [Float](repeating: 0, count: 2 * output.sampleRate / 5)  // a fifth of a second fits in the ring
    XCTAssertEqual(fifth.withUnsafeBufferPointer { output.write($0) }, fifth.count / 2)
    usleep(100_000)
    XCTAssertNil(output.heardFrame(at: HostTime.now()), "not started: nothing heard")
    output.setActive(true)
    let deadline = Date(timeIntervalSinceNow: 5)
    while output.heardFrame(at: HostTime.now()) == nil && Date() < deadline { usleep(5000) }
    usleep(100_000)
    let heard = try XCTUnwrap(output.heardFrame(at: HostTime.now()), "playing: a position")
    XCTAssertGreaterThan(heard, 0)
    output.setActive(false)
    // Paused, the position is not extrapolated from the last cycle (it would read a tenth of a second on).
    XCTAssertNil(output.heardFrame(at: HostTime.now() + 100_000_000), "paused: nothing heard")
  }

  /// While the sound server does not call (stalled, or stopped by a debugger or the system), the position is not
  /// run on over everything the ring holds: it stands a cycle and a little past the last call, and so does not step
  /// back when the server comes back.
  func testWhenTheServerStopsCallingThePositionStandsNearItsLastCall() throws {
    try requirePipeWire()
    // The bound tells only while less has been heard than was written: early, within the first cycles. A loaded
    // machine can come back later than that; then it is tried again with a new stream.
    for _ in 0..<5 {
      let output = try AudioOutput(mediaName: "stall")
      let most = [Float](repeating: 0, count: 2 * output.sampleRate * 24 / 100)  // 0.24 s: the ring holds 0.25 s
      XCTAssertEqual(most.withUnsafeBufferPointer { output.write($0) }, most.count / 2)
      output.setActive(true)
      let deadline = Date(timeIntervalSinceNow: 5)
      while output.heardFrame(at: HostTime.now()) == nil && Date() < deadline { usleep(2000) }
      // Asked about a second after the last call, as a picture's clock asks while the server is stopped; a call
      // coming in between (the timing read before and after differs) asks again.
      for _ in 0..<50 {
        let t = output.timing
        let heard = try XCTUnwrap(output.heardFrame(at: UInt64(t.now_ns) + 1_000_000_000))
        guard output.timing.now_ns == t.now_ns else { continue }
        let bound = Double(t.consumed) - Double(t.pending) + Double(t.cycle_frames) + 0.05 * Double(output.sampleRate)
        guard bound < Double(output.writeIndex) else { break }
        XCTAssertLessThanOrEqual(heard, bound, "run on to \(heard) of \(output.writeIndex) frames written")
        return
      }
    }
    XCTFail("no try caught the output within its first cycles")
  }

  private func assertPicturesFollowTheSound(speed: Double, file: StaticString = #filePath, line: UInt = #line) throws {
    try requirePipeWire()
    let player = startPlayer(try Self.avsyncClip(), speed: speed)
    defer { player.stop() }
    try waitForMaster(player)
    var offsets: [Double] = []
    display(player, seconds: 5) { _ in
      if player.clock.isDrivenByMaster { offsets.append(player.stats.avOffset) }
    }
    XCTAssertGreaterThan(offsets.count, 100, "frames shown: \(offsets.count)", file: file, line: line)
    let worst = offsets.map(abs).max() ?? 1
    let mean = offsets.reduce(0, +) / Double(max(1, offsets.count))
    // A functional check that holds on a loaded 2-core machine: pictures within a frame of the sound, and on average
    // within the band the scheduler keeps them in (`PresentationState.refresh`: up to a quarter of half a refresh
    // more than half a refresh early, a refresh late). Where the 30 fps pictures fall against the 60 Hz refreshes
    // depends on when the sound started, so one run's mean lies anywhere in that band (a CI run: +10.1 ms early),
    // not around zero. The figures themselves are measurements, reported by bench/avsync.sh.
    let halfRefresh = speed / 120
    XCTAssertLessThanOrEqual(worst, 0.040, "worst A/V offset \(worst * 1000) ms", file: file, line: line)
    XCTAssertLessThanOrEqual(
      mean, halfRefresh * 1.25 + 0.001, "mean A/V offset \(mean * 1000) ms", file: file, line: line)
    XCTAssertGreaterThanOrEqual(mean, -2 * halfRefresh, "mean A/V offset \(mean * 1000) ms", file: file, line: line)
    print("A/V offset at \(speed)x over \(offsets.count) frames: mean \(mean * 1000) ms, worst \(worst * 1000) ms")
  }

  func testPicturesFollowTheSoundAtOneX() throws {
    try assertPicturesFollowTheSound(speed: 1)
  }

  func testPicturesFollowTheSoundAtOneAndAHalfX() throws {
    try assertPicturesFollowTheSound(speed: 1.5)
  }

  /// Asked at each refresh for the time a refresh ahead (GTK's frame clock gives the predicted presentation time),
  /// the clock moves a refresh each refresh, and a 60 fps video keeps its pictures. The position used to stop at what
  /// PipeWire had taken so far, which a sink reporting no delay (the null sink) reaches before the next cycle: the
  /// clock moved by 21 ms cycles, 11 ms then 21 ms between refreshes, and one picture in six of a 60 fps video was
  /// dropped (100-200 of 600 in `bench`'s 1080p60 clip; 0-1 now).
  func testTheClockMovesARefreshEachRefreshAndA60fpsVideoKeepsItsPictures() throws {
    try requirePipeWire()
    let clip = try TestMedia.path(
      "avsync-60fps-8s.mp4",
      [
        "-f", "lavfi", "-i", "avsynctest=s=320x180:fr=60:sr=48000:d=8[out1][out0]", "-c:v", "libx264", "-preset",
        "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac",
      ])
    let player = startPlayer(clip)
    defer { player.stop() }
    try waitForMaster(player)
    let refresh: UInt64 = 16_666_667
    let start = HostTime.now() + refresh
    var times: [Double] = []
    for k in 1...90 {
      let at = start + UInt64(k) * refresh
      let now = HostTime.now()
      if at > now + refresh { usleep(UInt32((at - refresh - now) / 1000)) }
      times.append(player.clock.time(at: at))
    }
    let steps = zip(times, times.dropFirst()).map { $1 - $0 }
    let even = steps.filter { abs($0 - 1.0 / 60) < 0.002 }.count
    XCTAssertGreaterThan(
      even, steps.count * 9 / 10,
      "clock steps between refreshes (ms): \(steps.map { Int(($0 * 1000).rounded()) })")
    // Counted from half a second in: pictures that came due while the clock alone was asked are late.
    let counting = HostTime.now() + 500_000_000
    var from: (presented: Int, dropped: Int)?
    display(player, seconds: 3.5) { _ in
      if from == nil && HostTime.now() >= counting { from = (player.stats.presented, player.stats.dropped) }
    }
    let shown = player.stats.presented - (from?.presented ?? 0)
    let lost = player.stats.dropped - (from?.dropped ?? 0)
    XCTAssertGreaterThan(shown, 150, "pictures shown in 3 s of a 60 fps video")
    XCTAssertLessThanOrEqual(lost, shown / 20, "\(lost) pictures dropped, \(shown) shown")
    print("60 fps: \(shown) pictures shown, \(lost) dropped in 3 s")
  }

  func testClockRunsAtTheNewSpeedAfterASpeedChange() throws {
    try requirePipeWire()
    let player = startPlayer(try Self.avsyncClip())
    defer { player.stop() }
    try waitForMaster(player)
    player.setSpeed(1.5)
    display(player, seconds: 0.6) { _ in }  // what was already in the output plays out at the old speed
    let host0 = HostTime.now()
    let media0 = player.clock.time(at: host0)
    display(player, seconds: 4) { _ in }
    let host1 = HostTime.now()
    let rate = (player.clock.time(at: host1) - media0) / (Double(host1 - host0) / 1e9)
    print("clock rate at 1.5x: \(rate)")
    XCTAssertEqual(rate, 1.5, accuracy: 0.045, "media clock ran at \(rate)× real time at speed 1.5")
    XCTAssertTrue(player.clock.isDrivenByMaster)
  }

  /// A stopped player leaves nothing working: the audio feed, decoders and render thread all end.
  func testStoppedPlayerLeavesNoThreadBusy() throws {
    try requirePipeWire()
    let player = startPlayer(try Self.avsyncClip())
    try waitForMaster(player)
    player.stop()
    usleep(200_000)
    let before = ProcessStats.cpuSeconds()
    usleep(1_000_000)
    let busy = ProcessStats.cpuSeconds() - before
    XCTAssertLessThan(busy, 0.15, "\(busy) CPU-seconds spent in the second after stop()")
  }

  /// A host's resume point: the file opens there, its sound is heard from there (the sound drives the clock), and
  /// playback ends at the end of the file, with and without pictures.
  func testAFileStartedAtAResumePointIsHeardFromThereAndEnds() throws {
    try requirePipeWire()
    let sine = try TestMedia.path(
      "sine-3s.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3", "-c:a", "aac"])
    for (clip, start, length) in [(try Self.avsyncClip(), 10.5, 12.0), (sine, 1.5, 3.0)] {
      let name = (clip as NSString).lastPathComponent
      let player = startPlayer(clip, start: start)
      defer { player.stop() }
      let started = Date()
      var driven = false
      var ended = false
      var firstPicture: Double?
      while !ended && Date().timeIntervalSince(started) < 8 {
        display(player, seconds: 0.05) { shown in firstPicture = firstPicture ?? shown.time }
        driven = driven || player.clock.isDrivenByMaster
        ended = player.state == .ended
      }
      if let old = onScreen { player.release(old) }
      onScreen = nil
      XCTAssertTrue(driven, "\(name): the sound from the resume point never drove the clock")
      XCTAssertTrue(ended, "\(name): never ended (clock at \(player.clock.time()) s of \(length))")
      XCTAssertGreaterThan(Date().timeIntervalSince(started), (length - start) * 0.9, "\(name): ended early")
      if let firstPicture { XCTAssertEqual(firstPicture, start, accuracy: 0.04, "\(name): the first picture") }
    }
  }

  func testAudioOnlyFilePlaysOnTheAudioClock() throws {
    try requirePipeWire()
    let clip = try TestMedia.path(
      "sine-2s.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-c:a", "aac"])
    let player = startPlayer(clip)
    defer { player.stop() }
    let started = Date()
    var ended = false
    var sought = false
    while !ended && Date().timeIntervalSince(started) < 10 {
      if case .ended = player.frameToShow(presentationTime: HostTime.now()) { ended = true }
      if !sought && Date().timeIntervalSince(started) > 0.8 {
        // Back to 0.3 s: with no picture to wait for, sound must start again by itself.
        player.seek(to: 0.3)
        sought = true
      }
      usleep(20_000)
    }
    XCTAssertTrue(ended, "an audio-only file never ended (after a seek)")
    // Waiting for the sound after the seek, and running dry once it has ended, are not gaps in it.
    usleep(300_000)
    XCTAssertEqual(player.stats.audioUnderruns, 0, "a seek's refill or the end of the sound counted as underruns")
    // 0.8 s played, then 1.7 s more from 0.3 s.
    XCTAssertGreaterThan(Date().timeIntervalSince(started), 2.3, "the sound ended early")
    XCTAssertTrue(player.clock.isPlaying)
  }
}

/// Passes audio through as stereo and remembers what it saw: the chain's place, with eyes.
final class RecordingProcessor: AudioProcessing, @unchecked Sendable {
  private let lock = NSLock()
  private let plain = PlainStereo()
  private var seen: [(count: Int, crossings: Int, frames: Int)] = []
  var latency: Double { 0 }
  var speed: Double { 1 }
  func reset() {}
  func flush() -> [Float] { [] }
  func process(_ samples: [Float], channels: Int) -> [Float] {
    // Zero crossings of the first channel give the tone's frequency without an FFT.
    var crossings = 0
    var previous = samples.first ?? 0
    for i in stride(from: channels, to: samples.count, by: channels) {
      let v = samples[i]
      if (previous < 0) != (v < 0) { crossings += 1 }
      previous = v
    }
    lock.withLock { seen.append((seen.count, crossings, samples.count / channels)) }
    return plain.process(samples, channels: channels)
  }

  /// Frequency of the tone in the chunks processed after the first `skip`, Hz at 48 kHz.
  func frequency(after skip: Int) -> Double {
    let later = lock.withLock { seen.dropFirst(skip) }
    let crossings = later.reduce(0) { $0 + $1.crossings }
    let frames = later.reduce(0) { $0 + $1.frames }
    return frames == 0 ? 0 : Double(crossings) / 2 / (Double(frames) / 48000)
  }

  var count: Int { lock.withLock { seen.count } }
}

final class AudioTrackSwitchTests: XCTestCase {
  func testSwitchingTrackChangesTheSoundAndKeepsThePosition() throws {
    var problem = ""
    do { _ = try AudioOutput(mediaName: "probe") } catch { problem = "\(error)" }
    try Requirement.require(problem.isEmpty, "no PipeWire (\(problem))")
    let clip = try TestMedia.path(
      "two-tones-6s.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=6", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=6", "-f", "lavfi", "-i",
        "sine=frequency=880:sample_rate=48000:duration=6", "-map", "0:v", "-map", "1:a", "-map", "2:a", "-c:v",
        "libx264", "-preset", "ultrafast", "-c:a", "flac", "-metadata:s:a:0", "language=eng", "-metadata:s:a:1",
        "language=jpn",
      ])
    let recorder = RecordingProcessor()
    let player = Player(
      source: clip, presentation: .memory, width: 160, height: 90, audio: MediaPipeline.AudioRequest(),
      audioProcessor: { recorder })
    player.start()
    defer { player.stop() }
    var shown: ShownPicture?
    func play(_ seconds: Double) {
      let end = Date(timeIntervalSinceNow: seconds)
      while Date() < end {
        if case .show(let slot) = player.frameToShow(presentationTime: HostTime.now(), refreshInterval: 16_666_667) {
          if let old = shown { player.release(old) }
          shown = slot
        }
        usleep(16_000)
      }
    }
    play(2)
    XCTAssertEqual(player.audioTracks.count, 2)
    XCTAssertEqual(player.audioTracks.current, 1)
    XCTAssertEqual(recorder.frequency(after: 0), 440, accuracy: 5)
    let before = player.position
    let seen = recorder.count
    player.switchAudioTrack(2)
    play(1.5)
    XCTAssertEqual(player.audioTracks.current, 2)
    XCTAssertEqual(recorder.frequency(after: seen + 2), 880, accuracy: 8)
    let after = player.position
    XCTAssertGreaterThan(after, before + 1.0, "playback went on from \(before) s, it is at \(after) s")
    XCTAssertLessThan(after, before + 2.5)
  }
}
