import OrbDSP
import XCTest

final class VolumeTests: XCTestCase {
  func testHalfVolumeHalvesTheAmplitudeAfterAShortRamp() {
    let volume = Volume(sampleRate: Signals.rate, channels: 2)
    let input = Signals.sine(hz: 440, amplitude: 0.5, seconds: 0.2)
    XCTAssertEqual(volume.process(input), input, "100% is not a bit-exact pass-through")
    volume.percent = 50
    let output = volume.process(input)
    let rampFrames = 480  // 10 ms
    for i in (rampFrames * 2)..<output.count {
      XCTAssertEqual(output[i], input[i] * 0.5, accuracy: 1e-7)
    }
    // During the ramp the gain is between the two.
    let midway = abs(output[rampFrames]) / max(abs(input[rampFrames]), 1e-6)
    XCTAssertTrue(midway > 0.5 && midway < 1, "no ramp: gain \(midway) halfway")
    let left = Signals.channel(input + output, 0, of: 2)
    XCTAssertLessThan(Signals.maxJump(left), 1.1 * Signals.sineStep(hz: 440))
  }

  func testMuteSilencesWithoutAClickAndUnmuteComesBack() {
    let volume = Volume(sampleRate: Signals.rate, channels: 2, percent: 80)
    let input = Signals.sine(hz: 440, amplitude: 0.5, seconds: 0.1)
    let before = volume.process(input)
    volume.isMuted = true
    let muted = volume.process(input)
    XCTAssertTrue(muted[(480 * 2)...].allSatisfy { $0 == 0 })
    volume.isMuted = false
    let after = volume.process(input)
    XCTAssertEqual(after.last ?? 0, (input.last ?? 0) * 0.8, accuracy: 1e-7)
    // The largest step a full-scale (1.0) square wave could make under a 10 ms ramp is 1/480; a sine only adds its
    // own slope.
    let left = Signals.channel(before + muted + after, 0, of: 2)
    XCTAssertLessThan(Signals.maxJump(left), Signals.sineStep(hz: 440) + 1 / 480)
  }

  func testPercentIsClampedAndAbove100Amplifies() {
    let volume = Volume(sampleRate: Signals.rate, channels: 1, percent: 500)
    XCTAssertEqual(volume.percent, 150)
    XCTAssertEqual(volume.process([0.5]), [0.75])
    volume.percent = -3
    XCTAssertEqual(volume.percent, 0)
    volume.reset()
    XCTAssertEqual(volume.process([0.5]), [0])
  }
}
