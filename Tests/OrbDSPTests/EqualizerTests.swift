import OrbDSP
import XCTest

final class EqualizerTests: XCTestCase {
  /// Gain (dB) the equaliser gives a 0.25-amplitude tone at `hz` (mono), over a whole number of periods after the
  /// filters have settled.
  private func toneGainDB(_ equalizer: Equalizer, hz: Double, rate: Int = Signals.rate) -> Double {
    let input = Signals.sine(hz: hz, amplitude: 0.25, seconds: 1.5, channels: 1, rate: rate)
    equalizer.reset()
    let output = equalizer.process(input)
    let period = Double(rate) / hz
    let periods = (Double(rate) * 0.5 / period).rounded(.down)
    let window = max(1, Int((periods * period).rounded()))
    let tail = output.count - window
    return Signals.dB(Signals.rms(output[tail...]) / Signals.rms(input[tail...]))
  }

  func testFlatIsABitExactPassThrough() {
    let equalizer = Equalizer(sampleRate: Signals.rate, channels: 2)
    let input = Signals.noise(frames: 4800, channels: 2)
    XCTAssertEqual(equalizer.process(input), input)
    equalizer.setGain(3, band: 4)
    equalizer.setGain(0, band: 4)
    XCTAssertEqual(equalizer.process(input), input, "a band back at 0 dB still filtered")
  }

  func testSixDecibelsAtOneCentreRaisesItAndBarelyTouchesTwoOctavesAway() {
    let centres = Equalizer.bandCentersHz
    for band in [2, 5, 8] {  // 125 Hz, 1 kHz, 8 kHz
      let equalizer = Equalizer(sampleRate: Signals.rate, channels: 1)
      equalizer.setGain(6, band: band)
      XCTAssertEqual(toneGainDB(equalizer, hz: centres[band]), 6, accuracy: 0.5, "at \(centres[band]) Hz")
      for other in [band - 2, band + 2] where other < centres.count {
        let gain = toneGainDB(equalizer, hz: centres[other])
        XCTAssertLessThan(abs(gain), 1, "boosting \(centres[band]) Hz moved \(centres[other]) Hz by \(gain) dB")
      }
    }
  }

  func testCutsAndEveryBandReachItsCentre() {
    let centres = Equalizer.bandCentersHz
    for band in centres.indices {
      let equalizer = Equalizer(sampleRate: Signals.rate, channels: 1)
      equalizer.setGain(-6, band: band)
      XCTAssertEqual(toneGainDB(equalizer, hz: centres[band]), -6, accuracy: 0.5, "cut at \(centres[band]) Hz")
    }
  }

  func testChannelsAreFilteredIndependently() {
    let equalizer = Equalizer(sampleRate: Signals.rate, channels: 2)
    equalizer.setGain(12, band: 5)
    let input = Signals.sine(hz: 1000, amplitude: 0.1, seconds: 0.5, channels: 2, onChannel: 0)
    let output = equalizer.process(input)
    XCTAssertTrue(Signals.channel(output, 1, of: 2).allSatisfy { $0 == 0 }, "left leaked into right")
    XCTAssertEqual(
      Signals.dB(Signals.rms(Signals.channel(output, 0, of: 2).suffix(4800)) / (0.1 / 2.0.squareRoot())), 12,
      accuracy: 0.5)
  }

  func testBandsNearNyquistAreSkippedAndGainsAreClamped() {
    let equalizer = Equalizer(sampleRate: 32_000, channels: 1)
    equalizer.setGain(12, band: 9)  // 16 kHz = Nyquist at 32 kHz
    XCTAssertFalse(equalizer.isActive(9))
    let input = Signals.noise(frames: 3200, channels: 1)
    XCTAssertEqual(equalizer.process(input), input)
    equalizer.setGain(40, band: 0)
    XCTAssertEqual(equalizer.gainsDB[0], 12)
    equalizer.setGain(-40, band: 0)
    XCTAssertEqual(equalizer.gainsDB[0], -12)
    XCTAssertTrue(Equalizer(sampleRate: 48_000, channels: 1).isActive(9) == false, "0 dB bands are skipped")
  }
}
