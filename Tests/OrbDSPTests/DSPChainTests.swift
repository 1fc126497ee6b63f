import Foundation
import OrbDSP
import XCTest

final class DSPChainTests: XCTestCase {
  private let rate = Signals.rate

  /// RMS (dBFS) of the left output channel over its last `seconds`.
  private func tailLevelDB(_ stereo: [Float], seconds: Double = 0.5) -> Double {
    let left = Signals.channel(stereo, 0, of: 2)
    return Signals.dB(Signals.rms(left.suffix(Int(seconds * Double(rate)))))
  }

  func testDefaultsAreABitExactStereoPassThrough() {
    let chain = DSPChain(sampleRate: rate)
    let input = Signals.noise(frames: 10_000, channels: 2)
    XCTAssertEqual(chain.process(input, channels: 2), input)
    XCTAssertEqual(chain.latency, 0)
    XCTAssertEqual(chain.consumedInputFrames, 10_000)
    XCTAssertEqual(chain.producedOutputFrames, 10_000)
  }

  func testSurroundComesOutAsStereo() {
    let chain = DSPChain(sampleRate: rate)
    let centre = Signals.sine(hz: 1000, amplitude: 0.5, seconds: 0.1, channels: 6, onChannel: 2)
    let output = chain.process(centre, channels: 6)
    XCTAssertEqual(output.count, centre.count / 6 * 2)
    let scale = 1 / (1 + 2 * ChannelRemap.minus3dB)
    XCTAssertEqual(Signals.channel(output, 0, of: 2), Signals.channel(output, 1, of: 2))
    XCTAssertEqual((output.map(abs).max() ?? 0) / 0.5, 0.7071 * scale, accuracy: 1e-4)
  }

  func testEqualizerComesBeforeNightMode() {
    // A 1 kHz tone well above the threshold: boosting its band by 12 dB before a 4:1 compressor raises the output by
    // only 3 dB; an equaliser after the compressor would raise it by the full 12.
    func level(boost: Double) -> Double {
      var gains = [Double](repeating: 0, count: 10)
      gains[5] = boost
      let chain = DSPChain(sampleRate: rate, settings: DSPSettings(equalizerGainsDB: gains, nightMode: true))
      return tailLevelDB(chain.process(Signals.sine(hz: 1000, amplitude: 0.1, seconds: 2), channels: 2))
    }
    let raised = level(boost: 12) - level(boost: 0)
    XCTAssertEqual(raised, 3, accuracy: 0.5, "EQ after night mode? a 12 dB boost came out as \(raised) dB")
  }

  func testNightModeComesBeforeTheDownMix() {
    // A loud LFE channel is dropped by the down-mix, but night mode sees it first and turns the dialogue down.
    func level(lfe: Float) -> Double {
      let chain = DSPChain(sampleRate: rate, settings: DSPSettings(nightMode: true))
      let dialogue = Signals.sine(hz: 1000, amplitude: 0.05, seconds: 2, channels: 6, onChannel: 2)
      let rumble = Signals.sine(hz: 40, amplitude: lfe, seconds: 2, channels: 6, onChannel: 3)
      return tailLevelDB(chain.process(zip(dialogue, rumble).map { $0 + $1 }, channels: 6))
    }
    XCTAssertGreaterThan(
      level(lfe: 0) - level(lfe: 0.9), 6, "night mode did not see the LFE: it ran after the down-mix")
  }

  func testVolumeComesAfterNightMode() {
    // With night mode on, halving the volume still halves the output exactly: volume is the last stage.
    func output(percent: Double) -> [Float] {
      let chain = DSPChain(sampleRate: rate, settings: DSPSettings(nightMode: true, volumePercent: percent))
      return chain.process(Signals.sine(hz: 1000, amplitude: 0.5, seconds: 1), channels: 2)
    }
    XCTAssertEqual(tailLevelDB(output(percent: 50)) - tailLevelDB(output(percent: 100)), -6.02, accuracy: 0.01)
  }

  func testTimeStretchComesFirstAndTheClockFollowsIt() {
    let chain = DSPChain(sampleRate: rate, settings: DSPSettings(speed: 2, remap: .swapped))
    let input = Signals.sine(hz: 1000, amplitude: 0.5, seconds: 2, channels: 2, onChannel: 0)
    var output: [Float] = []
    input.withUnsafeBufferPointer { all in
      for start in stride(from: 0, to: all.count, by: 2048) {
        let end = min(all.count, start + 2048)
        chain.process(
          UnsafeBufferPointer(rebasing: all[start..<end]), inputChannels: 2, frames: (end - start) / 2,
          into: &output)
      }
    }
    XCTAssertEqual(chain.speed, 2)
    XCTAssertGreaterThan(chain.latency, 0)
    XCTAssertEqual(chain.consumedInputFrames + chain.latency * Double(rate), 96_000, accuracy: 1e-6)
    XCTAssertEqual(chain.consumedInputFrames, Double(chain.producedOutputFrames) * 2, accuracy: 1e-6)
    chain.flush(into: &output)
    XCTAssertEqual(Double(output.count / 2), 48_000, accuracy: 480)
    let right = Signals.channel(output, 1, of: 2)
    XCTAssertEqual(Signals.zeroCrossingFrequency(right[4800..<40_000]), 1000, accuracy: 2)
    XCTAssertTrue(Signals.channel(output, 0, of: 2).allSatisfy { $0 == 0 }, "the remap ran before the stretch")
  }

  func testSettingsChangedOnAnotherThreadArePickedUp() {
    let chain = DSPChain(sampleRate: rate)
    let block = Signals.sine(hz: 440, amplitude: 0.5, seconds: 0.05)
    XCTAssertEqual(chain.process(block, channels: 2), block)
    let changed = expectation(description: "settings changed on another thread")
    Thread {
      chain.updateSettings { $0.isMuted = true }
      changed.fulfill()
    }.start()
    wait(for: [changed], timeout: 5)
    let fading = chain.process(block, channels: 2)
    XCTAssertTrue(fading[(480 * 2)...].allSatisfy { $0 == 0 }, "mute set on another thread was not heard")
    XCTAssertTrue(chain.settings.isMuted)
  }

  func testSettingsHammeredFromAnotherThreadWhileProcessing() {
    let chain = DSPChain(sampleRate: rate)
    let stop = NSLock()
    nonisolated(unsafe) var done = false
    let writer = Thread {
      var i = 0
      while true {
        stop.lock()
        let finished = done
        stop.unlock()
        if finished { break }
        chain.updateSettings {
          $0.speed = [1, 1.5, 0.75][i % 3]
          $0.volumePercent = Double(i % 150)
          $0.remap = ChannelRemap.Mode.allCases[i % 3]
          $0.equalizerGainsDB[i % 10] = Double(i % 25 - 12)
          $0.nightMode = i % 2 == 0
        }
        i += 1
        usleep(200)
      }
    }
    writer.start()
    let block = Signals.sine(hz: 440, amplitude: 0.5, seconds: 0.02, channels: 6, onChannel: 0)
    var frames = 0
    for _ in 0..<100 {
      let output = chain.process(block, channels: 6)
      // Whatever settings a block meets: no NaN, no blow-up. The bound is the chain's own worst case for this 0.5
      // sine (EQ bands at +12 dB overlapping, volume 150%, night mode off); which settings meet which block is the
      // scheduler's to decide, so a tighter bound would test the timing, not the chain.
      let peak = output.map { abs($0) }.max() ?? 0
      XCTAssertTrue(output.allSatisfy(\.isFinite), "not a number in the output")
      XCTAssertLessThanOrEqual(peak, 8, "the output blew up")
      frames += output.count / 2
      _ = (chain.speed, chain.latency)
    }
    stop.lock()
    done = true
    stop.unlock()
    chain.settings = DSPSettings()
    _ = chain.process(block, channels: 6)
    XCTAssertEqual(chain.speed, 1)
    XCTAssertGreaterThan(frames, 0)
  }

  func testRemapChangeCrossFadesAndResetStartsOver() {
    let chain = DSPChain(sampleRate: rate)
    let input = Signals.sine(hz: 440, amplitude: 0.5, seconds: 0.1, channels: 2, onChannel: 0)
    let before = chain.process(input, channels: 2)
    chain.updateSettings { $0.remap = .mono }
    let after = chain.process(input, channels: 2)
    let left = Signals.channel(before + after, 0, of: 2)
    XCTAssertLessThan(Signals.maxJump(left), 1.1 * Signals.sineStep(hz: 440))
    XCTAssertEqual(after.last ?? 0, (input[input.count - 2]) / 2, accuracy: 1e-6)

    chain.updateSettings { $0.speed = 1.5 }
    _ = chain.process(input, channels: 2)
    chain.reset()
    XCTAssertEqual(chain.consumedInputFrames, 0)
    XCTAssertEqual(chain.producedOutputFrames, 0)
    XCTAssertEqual(chain.latency, 0)
  }

  func testAChangeOfChannelCountKeepsGoing() {
    let chain = DSPChain(sampleRate: rate)
    let stereo = Signals.sine(hz: 440, amplitude: 0.5, seconds: 0.1)
    XCTAssertEqual(chain.process(stereo, channels: 2), stereo)
    let surround = Signals.sine(hz: 440, amplitude: 0.5, seconds: 0.1, channels: 8, onChannel: 0)
    let output = chain.process(surround, channels: 8)
    XCTAssertEqual(output.count, 4800 * 2)
    XCTAssertEqual(chain.consumedInputFrames, 9600)
    XCTAssertEqual(chain.producedOutputFrames, 9600)
    XCTAssertEqual((output.map(abs).max() ?? 0) / 0.5, 1 / (1 + 3 * ChannelRemap.minus3dB), accuracy: 1e-3)
  }

  func testFullChainRunsFasterThanRealTime() {
    var gains = [Double](repeating: 0, count: 10)
    for band in gains.indices { gains[band] = Double(band % 5) - 2 + 0.5 }
    let chain = DSPChain(
      sampleRate: rate,
      settings: DSPSettings(speed: 1.5, equalizerGainsDB: gains, nightMode: true, remap: .mono, volumePercent: 80))
    let seconds = 4.0
    let input = Signals.noise(frames: Int(seconds) * rate, channels: 2, amplitude: 0.3)
    var output: [Float] = []
    output.reserveCapacity(input.count)
    let start = Date()
    input.withUnsafeBufferPointer { all in
      for offset in stride(from: 0, to: all.count, by: 2048) {
        let end = min(all.count, offset + 2048)
        chain.process(
          UnsafeBufferPointer(rebasing: all[offset..<end]), inputChannels: 2, frames: (end - offset) / 2,
          into: &output)
      }
    }
    let elapsed = Date().timeIntervalSince(start)
    let outputSeconds = Double(output.count / 2) / Double(rate)
    let timesRealTime = outputSeconds / elapsed
    print("DSPChain: \(outputSeconds) s of output in \(elapsed) s: \(timesRealTime)× real time (this build)")
    // Debug builds are some ten times slower than release; even so the chain must keep up.
    XCTAssertGreaterThan(timesRealTime, 1)
  }
}
