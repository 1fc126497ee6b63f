import OrbDSP
import XCTest

final class TimeStretcherTests: XCTestCase {
  /// A 0.5-amplitude 440 Hz sine moves at most 2π·440/48000·0.5 ≈ 0.0288 per sample. A cross-fade of two in-phase
  /// copies of it moves no faster (measured: 1.0005 × that); a splice 5° out of phase already adds 2·0.5·sin(2.5°)
  /// ≈ 0.044 on top. So 1.1 × the sine's own step (0.0317) passes smooth joins and fails any audible click.
  private let clickBound = 1.1 * Signals.sineStep(hz: 440)

  private func stretch(_ input: [Float], speed: Double, chunk: Int = 1024, channels: Int = 2) -> [Float] {
    let stretcher = TimeStretcher(sampleRate: Signals.rate, channels: channels)
    stretcher.speed = speed
    var output: [Float] = []
    input.withUnsafeBufferPointer { all in
      var offset = 0
      while offset < all.count {
        let n = min(chunk * channels, all.count - offset)
        stretcher.process(
          UnsafeBufferPointer(rebasing: all[offset..<(offset + n)]), frames: n / channels, into: &output)
        offset += n
      }
    }
    stretcher.flush(into: &output)
    return output
  }

  func testSpeedOneIsABitExactPassThroughWithNoLatency() {
    let input = Signals.noise(frames: 20_000, channels: 2)
    let stretcher = TimeStretcher(sampleRate: Signals.rate, channels: 2)
    var output: [Float] = []
    input.withUnsafeBufferPointer { all in
      for range in [0..<1000, 1000..<1002, 1002..<30_000, 30_000..<40_000] {
        stretcher.process(UnsafeBufferPointer(rebasing: all[range]), frames: range.count / 2, into: &output)
        XCTAssertEqual(stretcher.latencyInputFrames, 0)
      }
    }
    stretcher.flush(into: &output)
    XCTAssertEqual(output, input)
    XCTAssertEqual(stretcher.consumedInputFrames, 20_000)
    XCTAssertEqual(stretcher.outputFramesProduced, 20_000)
  }

  func testToneKeepsItsPitchAndItsLengthScalesWithSpeed() {
    let seconds = 2.0
    let input = Signals.sine(hz: 440, seconds: seconds)
    let inputFrames = input.count / 2
    for speed in [0.25, 0.5, 1.5, 2, 4] {
      let output = stretch(input, speed: speed)
      let frames = output.count / 2
      let expected = Double(inputFrames) / speed
      XCTAssertEqual(Double(frames), expected, accuracy: expected * 0.01, "length at \(speed)×")
      for c in 0..<2 {
        let mono = Signals.channel(output, c, of: 2)
        let steady = mono[(frames / 10)..<(frames * 9 / 10)]
        XCTAssertEqual(Signals.zeroCrossingFrequency(steady), 440, accuracy: 2, "pitch at \(speed)×, channel \(c)")
        XCTAssertLessThan(Signals.maxJump(mono), clickBound, "click at \(speed)×, channel \(c)")
        XCTAssertEqual(Signals.rms(steady), 0.5 / 2.0.squareRoot(), accuracy: 0.03, "level at \(speed)×")
      }
    }
  }

  func testSpeedChangesMidStreamAreSmoothAndKeepPitch() {
    let input = Signals.sine(hz: 440, seconds: 6)
    let stretcher = TimeStretcher(sampleRate: Signals.rate, channels: 2)
    let schedule: [Double] = [1, 1.5, 0.5, 4, 1, 2, 0.25, 1]
    let chunk = 1000
    var output: [Float] = []
    var pieces: [(speed: Double, range: Range<Int>)] = []
    input.withUnsafeBufferPointer { all in
      let perStep = all.count / 2 / schedule.count
      for (step, speed) in schedule.enumerated() {
        stretcher.speed = speed
        let start = output.count / 2
        var frame = step * perStep
        while frame < (step + 1) * perStep {
          let n = min(chunk, (step + 1) * perStep - frame)
          let slice = UnsafeBufferPointer(rebasing: all[(frame * 2)..<((frame + n) * 2)])
          stretcher.process(slice, frames: n, into: &output)
          frame += n
        }
        pieces.append((speed, start..<(output.count / 2)))
      }
    }
    let left = Signals.channel(output, 0, of: 2)
    XCTAssertLessThan(Signals.maxJump(left), clickBound, "a speed change clicked")
    for piece in pieces where piece.range.count > 9600 {
      let steady = left[(piece.range.lowerBound + 2400)..<(piece.range.upperBound - 2400)]
      XCTAssertEqual(Signals.zeroCrossingFrequency(steady), 440, accuracy: 2, "pitch at \(piece.speed)×")
    }
    // Back at speed 1 the input is copied again, bit for bit, with nothing held back.
    XCTAssertEqual(stretcher.latencyInputFrames, 0)
    let tail = 2000 * 2
    XCTAssertEqual(Array(output.suffix(tail)), Array(input.suffix(tail)))
  }

  func testConsumedInputFollowsTheSpeedExactly() {
    let stretcher = TimeStretcher(sampleRate: Signals.rate, channels: 1)
    let input = Signals.sine(hz: 440, seconds: 1, channels: 1)
    for speed in [0.5, 1.5, 3] {
      stretcher.reset()
      stretcher.speed = speed
      var output: [Float] = []
      input.withUnsafeBufferPointer { stretcher.process($0, frames: $0.count, into: &output) }
      XCTAssertEqual(output.count, stretcher.outputFramesProduced)
      XCTAssertEqual(stretcher.consumedInputFrames, Double(stretcher.outputFramesProduced) * speed, accuracy: 1e-6)
      XCTAssertGreaterThan(stretcher.latencyInputFrames, 0)
      // What it holds back is a few windows at most: under 100 ms of input.
      XCTAssertLessThan(stretcher.latencyInputFrames, 4800 * max(1, speed))
      XCTAssertEqual(
        stretcher.consumedInputFrames + stretcher.latencyInputFrames, Double(stretcher.inputFramesReceived),
        accuracy: 1e-6)
    }
  }

  func testResetForgetsHeldAudioAndRestartsPositions() {
    let stretcher = TimeStretcher(sampleRate: Signals.rate, channels: 2)
    stretcher.speed = 2
    _ = stretcher.process(Signals.noise(frames: 10_000, channels: 2))
    stretcher.reset()
    XCTAssertEqual(stretcher.inputFramesReceived, 0)
    XCTAssertEqual(stretcher.outputFramesProduced, 0)
    XCTAssertEqual(stretcher.consumedInputFrames, 0)
    stretcher.speed = 1
    let after = Signals.noise(frames: 500, channels: 2, seed: 7)
    XCTAssertEqual(stretcher.process(after), after, "held audio from before the seek came out")
  }

  func testSpeedIsClampedToTheSupportedRange() {
    let stretcher = TimeStretcher(sampleRate: Signals.rate, channels: 2)
    stretcher.speed = 10
    XCTAssertEqual(stretcher.speed, 4)
    stretcher.speed = 0
    XCTAssertEqual(stretcher.speed, 0.25)
    stretcher.speed = .nan
    XCTAssertEqual(stretcher.speed, 1)
  }

  func testSilenceStaysSilentAndAChordKeepsItsPitch() {
    let silence = [Float](repeating: 0, count: 48_000 * 2)
    let stretcher = TimeStretcher(sampleRate: Signals.rate, channels: 2)
    stretcher.speed = 1.5
    XCTAssertTrue(stretcher.process(silence).allSatisfy { $0 == 0 })

    // Two tones an octave and a fifth apart (220 + 660 Hz): the summed waveform still repeats every 1/220 s.
    let low = Signals.sine(hz: 220, amplitude: 0.3, seconds: 2, channels: 1)
    let high = Signals.sine(hz: 660, amplitude: 0.1, seconds: 2, channels: 1)
    let chord = zip(low, high).map { $0 + $1 }
    let mono = TimeStretcher(sampleRate: Signals.rate, channels: 1)
    mono.speed = 1.5
    var output = mono.process(chord)
    mono.flush(into: &output)
    let steady = output[(output.count / 10)..<(output.count * 9 / 10)]
    XCTAssertEqual(Signals.zeroCrossingFrequency(steady), 220, accuracy: 2)
  }

  func testOutputDoesNotDependOnHowTheInputIsChunked() {
    let input = Signals.noise(frames: 30_000, channels: 2)
    for speed in [0.4, 2.5] {
      let whole = stretch(input, speed: speed, chunk: 30_000)
      XCTAssertEqual(stretch(input, speed: speed, chunk: 7), whole, "at \(speed)×")
      XCTAssertEqual(stretch(input, speed: speed, chunk: 1500), whole, "at \(speed)×")
    }
  }

  func testOtherRatesAndMono() {
    let rate = 44_100
    let input = Signals.sine(hz: 440, seconds: 2, channels: 1, rate: rate)
    for speed in [0.75, 1.25, 3] {
      let stretcher = TimeStretcher(sampleRate: rate, channels: 1)
      stretcher.speed = speed
      var output = stretcher.process(input)
      stretcher.flush(into: &output)
      XCTAssertEqual(Double(output.count), Double(input.count) / speed, accuracy: Double(input.count) / speed * 0.01)
      let steady = output[(output.count / 10)..<(output.count * 9 / 10)]
      XCTAssertEqual(Signals.zeroCrossingFrequency(steady, rate: rate), 440, accuracy: 2, "at \(speed)×")
      XCTAssertLessThan(Signals.maxJump(output), 1.1 * Signals.sineStep(hz: 440, rate: rate))
    }
  }
}
