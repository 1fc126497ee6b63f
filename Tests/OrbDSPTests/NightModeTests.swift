import OrbDSP
import XCTest

final class NightModeTests: XCTestCase {
  private let loud = Float(pow(10, -6.0 / 20))  // −6 dBFS peak
  private let quiet = Float(pow(10, -36.0 / 20))  // −36 dBFS peak

  func testNarrowsTheGapBetweenALoudAndAQuietPassageByTenDecibels() {
    let loudPart = Signals.sine(hz: 1000, amplitude: loud, seconds: 3)
    let quietPart = Signals.sine(hz: 1000, amplitude: quiet, seconds: 3)
    let night = NightMode(sampleRate: Signals.rate, channels: 2)
    let output = night.process(loudPart + quietPart + loudPart)
    let second = 48_000 * 2
    // The last second of each passage: after the attack (10 ms) or release (300 ms) has settled.
    let loudOut = Signals.rms(output[(2 * second)..<(3 * second)])
    let quietOut = Signals.rms(output[(5 * second)..<(6 * second)])
    let loudAgain = Signals.rms(output[(8 * second)..<(9 * second)])
    let gapIn = Signals.dB(Double(loud) / Double(quiet))
    let gapOut = Signals.dB(loudOut / quietOut)
    XCTAssertEqual(gapIn, 30, accuracy: 0.01)
    XCTAssertLessThanOrEqual(gapOut, gapIn - 10, "gap went from \(gapIn) dB to only \(gapOut) dB")
    XCTAssertEqual(Signals.dB(loudAgain / loudOut), 0, accuracy: 0.5, "the loud passage came back at another level")
    XCTAssertGreaterThan(quietOut, Double(quiet) / 2.0.squareRoot(), "the quiet passage did not come up")
    XCTAssertLessThanOrEqual(output.map(abs).max() ?? 0, 1)
  }

  func testOutputNeverExceedsFullScale() {
    // Silence, then sudden full-scale bursts and loud noise: the attack lets the first milliseconds through with the
    // quiet passage's makeup gain (+10 dB), which only the limiter can hold.
    let silence = [Float](repeating: 0, count: 48_000 * 2)
    let burst = Signals.sine(hz: 100, amplitude: 1, seconds: 0.3)
    let square = Signals.sine(hz: 50, amplitude: 1, seconds: 0.3).map { $0 >= 0 ? Float(1) : -1 }
    let noise = Signals.noise(frames: 24_000, channels: 2, amplitude: 1)
    let night = NightMode(sampleRate: Signals.rate, channels: 2)
    let output = night.process(silence + burst + silence + square + silence + noise)
    let peak = output.map(abs).max() ?? 0
    XCTAssertLessThanOrEqual(peak, 1)
    XCTAssertGreaterThan(peak, 0.9, "the limiter should only bend the top, not squash everything")
  }

  func testOffAndSettledIsABitExactPassThroughAndSwitchingIsSmooth() {
    let night = NightMode(sampleRate: Signals.rate, channels: 2, isEnabled: false)
    let input = Signals.sine(hz: 440, amplitude: 0.5, seconds: 1)
    XCTAssertEqual(night.process(input), input)

    night.isEnabled = true
    let on = night.process(input)
    night.isEnabled = false
    let off = night.process(input + input + input)
    XCTAssertEqual(night.currentGainDB, 0)
    XCTAssertEqual(Array(night.process(input)), input, "not a pass-through once settled")
    // Turning it on or off moves the gain with the attack/release times: no step.
    let all = Signals.channel(input + on + off, 0, of: 2)
    XCTAssertLessThan(Signals.maxJump(all), 1.1 * Signals.sineStep(hz: 440))
  }

  func testCompressionCurve() {
    let night = NightMode(sampleRate: Signals.rate, channels: 1)
    XCTAssertEqual(night.compressionGainDB(forLevelDB: -50), 0)
    XCTAssertEqual(night.compressionGainDB(forLevelDB: -10), -15, accuracy: 1e-9)  // 20 dB over at 4:1
    // The knee is continuous at both ends.
    XCTAssertEqual(night.compressionGainDB(forLevelDB: -33), 0, accuracy: 1e-9)
    XCTAssertEqual(night.compressionGainDB(forLevelDB: -27), -2.25, accuracy: 1e-9)
  }
}
