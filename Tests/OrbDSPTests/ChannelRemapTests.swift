import OrbDSP
import XCTest

final class ChannelRemapTests: XCTestCase {
  /// Stereo levels (peak of L and R) when a 0.5-amplitude tone plays on input channel `channel` only.
  private func levels(_ layout: ChannelLayout, channel: Int, mode: ChannelRemap.Mode = .stereo) -> (Float, Float) {
    let input = Signals.sine(hz: 1000, amplitude: 0.5, seconds: 0.05, channels: layout.count, onChannel: channel)
    let output = ChannelRemap(inputLayout: layout, mode: mode).process(input)
    let left = Signals.channel(output, 0, of: 2).map(abs).max() ?? 0
    let right = Signals.channel(output, 1, of: 2).map(abs).max() ?? 0
    return (left / 0.5, right / 0.5)
  }

  private func checkSurround(_ layout: ChannelLayout, rowSum: Float, leftChannels: [Int], rightChannels: [Int]) {
    let scale = 1 / rowSum
    let front = levels(layout, channel: 0)
    XCTAssertEqual(front.0, scale, accuracy: 1e-4, "FL")
    XCTAssertEqual(front.1, 0, "FL leaked into R")
    let frontRight = levels(layout, channel: 1)
    XCTAssertEqual(frontRight.0, 0, "FR leaked into L")
    XCTAssertEqual(frontRight.1, scale, accuracy: 1e-4)
    // Centre: on both sides at −3 dB relative to a front channel.
    let centre = levels(layout, channel: 2)
    XCTAssertEqual(centre.0, 0.7071 * scale, accuracy: 1e-4)
    XCTAssertEqual(centre.1, 0.7071 * scale, accuracy: 1e-4)
    XCTAssertEqual(Signals.dB(Double(centre.0 / front.0)), -3.01, accuracy: 0.01)
    // LFE is dropped.
    XCTAssertEqual(levels(layout, channel: 3).0, 0)
    XCTAssertEqual(levels(layout, channel: 3).1, 0)
    for c in leftChannels {
      let l = levels(layout, channel: c)
      XCTAssertEqual(l.0, 0.7071 * scale, accuracy: 1e-4, "surround \(c) on L")
      XCTAssertEqual(l.1, 0, "surround \(c) leaked into R")
    }
    for c in rightChannels {
      let r = levels(layout, channel: c)
      XCTAssertEqual(r.0, 0, "surround \(c) leaked into L")
      XCTAssertEqual(r.1, 0.7071 * scale, accuracy: 1e-4, "surround \(c) on R")
    }
    // Full scale on every channel at once, in phase: exactly reaches, never passes, 1.0.
    let everything = [Float](repeating: 1, count: layout.count * 10)
    let mixed = ChannelRemap(inputLayout: layout).process(everything)
    XCTAssertLessThanOrEqual(mixed.max() ?? 0, 1.000_001)
  }

  func testFivePointOneDownMixUsesTheStandardCoefficients() {
    // FL FR FC LFE BL BR: L = FL + 0.7071·FC + 0.7071·BL, normalised by 1 + 2·0.7071.
    checkSurround(.surround51, rowSum: 1 + 2 * 0.707_106_77, leftChannels: [4], rightChannels: [5])
  }

  func testSevenPointOneDownMixUsesTheStandardCoefficients() {
    // FL FR FC LFE BL BR SL SR: both surround pairs at 0.7071, normalised by 1 + 3·0.7071.
    checkSurround(.surround71, rowSum: 1 + 3 * 0.707_106_77, leftChannels: [4, 6], rightChannels: [5, 7])
  }

  func testStereoModes() {
    let input = Signals.noise(frames: 1000, channels: 2)
    XCTAssertEqual(ChannelRemap(inputLayout: .stereo).process(input), input, "stereo is not a bit-exact copy")
    let swapped = ChannelRemap(inputLayout: .stereo, mode: .swapped).process(input)
    XCTAssertEqual(Signals.channel(swapped, 0, of: 2), Signals.channel(input, 1, of: 2))
    XCTAssertEqual(Signals.channel(swapped, 1, of: 2), Signals.channel(input, 0, of: 2))
    let mono = ChannelRemap(inputLayout: .stereo, mode: .mono).process(input)
    for i in 0..<1000 {
      let average = (input[2 * i] + input[2 * i + 1]) / 2
      XCTAssertEqual(mono[2 * i], average, accuracy: 1e-7)
      XCTAssertEqual(mono[2 * i + 1], average, accuracy: 1e-7)
    }
    let left = levels(.stereo, channel: 0, mode: .mono)
    XCTAssertEqual(left.0, 0.5, accuracy: 1e-4)
    XCTAssertEqual(left.1, 0.5, accuracy: 1e-4)
  }

  func testModesApplyAfterTheSurroundDownMix() {
    let scale = 1 / (1 + 2 * ChannelRemap.minus3dB)
    let swapped = levels(.surround51, channel: 4, mode: .swapped)  // BL ends up on the right
    XCTAssertEqual(swapped.0, 0)
    XCTAssertEqual(swapped.1, 0.7071 * scale, accuracy: 1e-4)
    let mono = levels(.surround51, channel: 0, mode: .mono)  // FL on both, halved
    XCTAssertEqual(mono.0, scale / 2, accuracy: 1e-4)
    XCTAssertEqual(mono.1, scale / 2, accuracy: 1e-4)
  }

  func testMonoInputPlaysOnBothSidesAtFullLevel() {
    let input = Signals.noise(frames: 100, channels: 1)
    let output = ChannelRemap(inputLayout: .mono).process(input)
    XCTAssertEqual(Signals.channel(output, 0, of: 2), input)
    XCTAssertEqual(Signals.channel(output, 1, of: 2), input)
  }

  func testDefaultLayouts() {
    XCTAssertEqual(ChannelLayout.default(channels: 6), .surround51)
    XCTAssertEqual(ChannelLayout.default(channels: 8), .surround71)
    XCTAssertEqual(ChannelLayout.default(channels: 8).description, "FL FR FC LFE BL BR SL SR")
  }
}
