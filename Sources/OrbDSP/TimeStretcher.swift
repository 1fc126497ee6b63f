import Foundation

/// Pitch-preserving time-stretch by WSOLA (waveform-similarity overlap-add) of interleaved Float32 audio.
///
/// Output is built from input segments of `windowFrames` (30 ms) laid down every `hopFrames` (15 ms) of output with a
/// Hann window at 50% overlap, whose two halves add up to exactly one. Segment k is taken near input position
/// k·hop·speed, within ±`searchRadiusFrames` (15 ms), where its first half best matches (normalised
/// cross-correlation of the channel sum, first on a 4× decimated copy, then refined sample by sample) the natural
/// continuation of the segment before it. So every join is a cross-fade between two stretches of audio that are in
/// phase, and a change of speed takes effect at the next join without a click.
///
/// At speed 1 the stretcher is a bit-exact pass-through with no latency. When the speed leaves 1 it starts from the
/// last frame it passed through (cross-fading out of it); when it comes back to 1 it makes one last in-phase join
/// and then copies input again. While stretching it holds back about `hopFrames·speed + searchRadiusFrames +
/// hopFrames` input frames (`latencyInputFrames`).
///
/// Time: `consumedInputFrames` is the input position (frames since `reset`) that the end of the output produced so
/// far stands for; it advances by exactly hop·speed per hop of output, so media time = start + consumed / rate. The
/// audio actually heard there may lie up to `searchRadiusFrames` away from it (that is how WSOLA finds its joins);
/// on the return to speed 1 the position snaps to the audio by at most that much (15 ms).
///
/// Cost at 48 kHz stereo: about 80 k multiply-adds per 15 ms hop plus the cross-fade, far below real time.
/// Thread-safety: Unsafe; use from one thread (the audio decode thread). Buffers are reused between calls.
public final class TimeStretcher {
  /// The speeds it accepts; others are clamped into it.
  public static let speedRange: ClosedRange<Double> = 0.25...4

  /// Frames per second (Hz).
  public let sampleRate: Int
  /// Samples per frame.
  public let channels: Int
  /// Output frames per hop: half the window (15 ms).
  public let hopFrames: Int
  /// Frames in one analysis/synthesis window (30 ms).
  public var windowFrames: Int { hopFrames * 2 }
  /// How far (frames, either way) from its nominal position a segment may be taken (15 ms).
  public let searchRadiusFrames: Int
  /// The decimation of the coarse similarity search.
  private let decimation: Int

  private var currentSpeed: Double = 1
  /// Playback speed: 1 = unchanged, 2 = twice as fast (half as many output frames); clamped to `speedRange`.
  /// A change takes effect at the next hop (within 15 ms of output).
  public var speed: Double {
    get { currentSpeed }
    set {
      let range = Self.speedRange
      currentSpeed = min(max(newValue.isFinite ? newValue : 1, range.lowerBound), range.upperBound)
    }
  }

  private enum Mode {
    /// Everything received has been copied out; nothing is held.
    case passThrough
    /// Input from `storeStart` is held in `store`; output ends with the second half of the last segment pending.
    case stretching
  }

  private var mode = Mode.passThrough
  /// Interleaved input frames, the first being input frame `storeStart`.
  private var store: [Float] = []
  private var storeStart = 0
  /// Nominal input position of the last segment taken (frames, fractional).
  private var nominal: Double = 0
  /// Input position of the last segment's second half, which fades out under the next segment.
  private var tailStart = 0
  /// The rising half of the Hann window; the falling half is 1 minus it, so the halves add up to exactly 1.
  private let fadeIn: [Float]
  // Scratch for the similarity search, sized once.
  private var monoRegion: [Float]
  private var monoTail: [Float]
  private var coarseRegion: [Float]
  private var coarseTail: [Float]

  /// Input frames received since `reset`.
  public private(set) var inputFramesReceived = 0
  /// Output frames produced since `reset`.
  public private(set) var outputFramesProduced = 0

  /// The input position (frames since `reset`, fractional) that the end of the output so far stands for.
  public var consumedInputFrames: Double {
    switch mode {
    case .passThrough: return Double(inputFramesReceived)
    case .stretching: return nominal + Double(hopFrames)
    }
  }

  /// Input frames received but not yet represented in the output (0 at speed 1 in steady state). Divide by the
  /// speed for the output time they will take.
  public var latencyInputFrames: Double { Double(inputFramesReceived) - consumedInputFrames }

  /// - Parameters:
  ///   - sampleRate: frames per second (Hz), at least 8000.
  ///   - channels: samples per interleaved frame, at least 1.
  public init(sampleRate: Int, channels: Int) {
    precondition(sampleRate >= 8000 && channels >= 1, "time-stretch needs a rate of 8 kHz or more and a channel")
    self.sampleRate = sampleRate
    self.channels = channels
    hopFrames = sampleRate * 15 / 1000
    searchRadiusFrames = sampleRate * 15 / 1000
    decimation = max(1, sampleRate / 12_000)
    let hop = hopFrames
    fadeIn = (0..<hop).map { i in
      let phase = Double.pi * Double(i) / Double(hop)
      return Float(0.5 - 0.5 * cos(phase))
    }
    let regionFrames = 2 * searchRadiusFrames + 1 + hop
    monoRegion = [Float](repeating: 0, count: regionFrames)
    monoTail = [Float](repeating: 0, count: hopFrames)
    coarseRegion = [Float](repeating: 0, count: regionFrames / decimation + 1)
    coarseTail = [Float](repeating: 0, count: hopFrames / decimation + 1)
  }

  /// Forgets all held audio and restarts the positions at 0 (a seek). The speed is kept.
  public func reset() {
    mode = .passThrough
    store.removeAll(keepingCapacity: true)
    storeStart = 0
    nominal = 0
    tailStart = 0
    inputFramesReceived = 0
    outputFramesProduced = 0
  }

  /// Stretches `frames` interleaved frames of `input` and appends the output frames that are ready to `output`.
  public func process(_ input: UnsafeBufferPointer<Float>, frames: Int, into output: inout [Float]) {
    precondition(frames >= 0 && input.count >= frames * channels, "input holds fewer than \(frames) frames")
    guard frames > 0 else { return }
    let samples = UnsafeBufferPointer(rebasing: input[0..<(frames * channels)])
    if mode == .passThrough {
      if currentSpeed == 1 {
        output.append(contentsOf: samples)
        inputFramesReceived += frames
        outputFramesProduced += frames
        return
      }
      // Start from the last frame passed through: the pending half-segment is the natural continuation from there.
      mode = .stretching
      store.removeAll(keepingCapacity: true)
      storeStart = inputFramesReceived
      tailStart = inputFramesReceived
      nominal = Double(inputFramesReceived - hopFrames)
    }
    store.append(contentsOf: samples)
    inputFramesReceived += frames
    runHops(into: &output)
    discardUsedInput()
  }

  /// Convenience: stretches interleaved `input` and returns the output frames that are ready.
  public func process(_ input: [Float]) -> [Float] {
    var output: [Float] = []
    input.withUnsafeBufferPointer { process($0, frames: $0.count / channels, into: &output) }
    return output
  }

  /// End of stream: appends the rest of the held input, stretched at the current speed (the input is padded with
  /// silence to finish the last windows), so the total output is input / speed. Afterwards nothing is held.
  public func flush(into output: inout [Float]) {
    guard mode == .stretching else { return }
    let end = inputFramesReceived
    let remaining = max(0, Double(end) - consumedInputFrames)
    let wanted = Int((remaining / currentSpeed).rounded())
    let outputStart = output.count
    let producedBefore = outputFramesProduced
    let padding = [Float](repeating: 0, count: (windowFrames + searchRadiusFrames) * channels)
    while outputFramesProduced - producedBefore < wanted && mode == .stretching {
      store.append(contentsOf: padding)
      runHops(into: &output)
    }
    output.removeSubrange(min(output.count, outputStart + wanted * channels)..<output.count)
    outputFramesProduced = producedBefore + (output.count - outputStart) / channels
    mode = .passThrough
    store.removeAll(keepingCapacity: true)
    inputFramesReceived = end
  }

  private var storeEnd: Int { storeStart + store.count / channels }

  /// Lays down as many hops as the held input allows.
  private func runHops(into output: inout [Float]) {
    while mode == .stretching {
      let speedNow = currentSpeed
      let nextNominal = nominal + Double(hopFrames) * speedNow
      let centre = Int(nextNominal.rounded(.down))
      let low = max(storeStart, centre - searchRadiusFrames)
      let high = max(low, centre + searchRadiusFrames)
      guard max(high, tailStart) + hopFrames <= storeEnd else { return }
      let start = bestSegmentStart(low: low, high: high, preferred: min(max(centre, low), high))
      crossFade(from: tailStart, to: start, into: &output)
      outputFramesProduced += hopFrames
      nominal = nextNominal
      tailStart = start + hopFrames
      if speedNow == 1 {
        // Back to speed 1: the join above was in phase, so from here on the input is copied as it is.
        let rest = (tailStart - storeStart) * channels
        output.append(contentsOf: store[rest...])
        outputFramesProduced += storeEnd - tailStart
        mode = .passThrough
        store.removeAll(keepingCapacity: true)
      }
    }
  }

  /// Appends one hop: the held tail fading out under the segment at `start` fading in.
  private func crossFade(from tail: Int, to start: Int, into output: inout [Float]) {
    let channels = self.channels
    let count = hopFrames * channels
    let outputStart = output.count
    output.append(contentsOf: repeatElement(0, count: count))
    let tailOffset = (tail - storeStart) * channels
    let startOffset = (start - storeStart) * channels
    store.withUnsafeBufferPointer { held in
      fadeIn.withUnsafeBufferPointer { fade in
        output.withUnsafeMutableBufferPointer { out in
          var index = 0
          for frame in 0..<hopFrames {
            let w = fade[frame]
            for _ in 0..<channels {
              let a = held[tailOffset + index]
              let b = held[startOffset + index]
              out[outputStart + index] = a + w * (b - a)
              index += 1
            }
          }
        }
      }
    }
  }

  /// The start in `low...high` whose first hop best matches the held tail (normalised cross-correlation of the
  /// channel sum): a coarse pass on a box-filtered, decimated copy, then a sample-exact pass around its best.
  /// Ties (silence) keep `preferred`, the nominal position.
  private func bestSegmentStart(low: Int, high: Int, preferred: Int) -> Int {
    guard high > low else { return low }
    let overlap = hopFrames
    let regionFrames = high - low + overlap
    let d = decimation
    let coarseOverlap = overlap / d
    let coarseCandidates = (high - low) / d + 1
    let channels = self.channels
    let regionOffset = (low - storeStart) * channels
    let tailOffset = (tailStart - storeStart) * channels
    var best = preferred
    store.withUnsafeBufferPointer { held in
      monoRegion.withUnsafeMutableBufferPointer { region in
        monoTail.withUnsafeMutableBufferPointer { tail in
          coarseRegion.withUnsafeMutableBufferPointer { coarse in
            coarseTail.withUnsafeMutableBufferPointer { coarseT in
              Self.channelSum(held, from: regionOffset, frames: regionFrames, channels: channels, into: region)
              Self.channelSum(held, from: tailOffset, frames: overlap, channels: channels, into: tail)
              let coarseCount = coarseCandidates - 1 + coarseOverlap
              Self.decimate(region, count: coarseCount, factor: d, into: coarse)
              Self.decimate(tail, count: coarseOverlap, factor: d, into: coarseT)

              // Coarse pass: normalised correlation with a sliding energy.
              var energy = 0.0
              for j in 0..<coarseOverlap { energy += Double(coarse[j]) * Double(coarse[j]) }
              let preferredCoarse = min((preferred - low) / d, coarseCandidates - 1)
              var bestCoarse = preferredCoarse
              var bestScore = -Double.infinity
              var preferredScore = -Double.infinity
              for k in 0..<coarseCandidates {
                var dot: Float = 0
                for j in 0..<coarseOverlap { dot += coarse[k + j] * coarseT[j] }
                let score = Double(dot) / (energy + 1e-9).squareRoot()
                if k == preferredCoarse { preferredScore = score }
                if score > bestScore {
                  bestScore = score
                  bestCoarse = k
                }
                if k + 1 < coarseCandidates {
                  let leaving = Double(coarse[k])
                  let entering = Double(coarse[k + coarseOverlap])
                  energy = max(0, energy - leaving * leaving + entering * entering)
                }
              }
              if !(bestScore > preferredScore) { bestCoarse = preferredCoarse }

              // Fine pass around the coarse best, sample by sample.
              let centre = bestCoarse == preferredCoarse ? preferred : low + bestCoarse * d
              best = centre
              var bestFine = Self.similarity(region, at: centre - low, tail: tail, count: overlap)
              let from = max(low, centre - d + 1)
              let to = min(high, centre + d - 1)
              if from <= to {
                for candidate in from...to where candidate != centre {
                  let score = Self.similarity(region, at: candidate - low, tail: tail, count: overlap)
                  if score > bestFine {
                    bestFine = score
                    best = candidate
                  }
                }
              }
            }
          }
        }
      }
    }
    return best
  }

  private static func channelSum(
    _ held: UnsafeBufferPointer<Float>, from offset: Int, frames: Int, channels: Int,
    into mono: UnsafeMutableBufferPointer<Float>
  ) {
    if channels == 1 {
      for i in 0..<frames { mono[i] = held[offset + i] }
      return
    }
    var index = offset
    for i in 0..<frames {
      var sum: Float = 0
      for _ in 0..<channels {
        sum += held[index]
        index += 1
      }
      mono[i] = sum
    }
  }

  private static func decimate(
    _ mono: UnsafeMutableBufferPointer<Float>, count: Int, factor: Int, into coarse: UnsafeMutableBufferPointer<Float>
  ) {
    var index = 0
    for i in 0..<count {
      var sum: Float = 0
      for _ in 0..<factor {
        sum += mono[index]
        index += 1
      }
      coarse[i] = sum
    }
  }

  private static func similarity(
    _ region: UnsafeMutableBufferPointer<Float>, at offset: Int, tail: UnsafeMutableBufferPointer<Float>, count: Int
  ) -> Double {
    var dot: Float = 0
    var energy: Float = 0
    for j in 0..<count {
      let x = region[offset + j]
      dot += x * tail[j]
      energy += x * x
    }
    return Double(dot) / (Double(energy) + 1e-9).squareRoot()
  }

  /// Drops held input that no later hop can reach.
  private func discardUsedInput() {
    guard mode == .stretching else { return }
    let keepFrom = max(storeStart, min(tailStart, Int(nominal.rounded(.down)) - searchRadiusFrames))
    let drop = keepFrom - storeStart
    // Move memory only now and then: at least a window's worth at a time.
    guard drop >= windowFrames * 2 else { return }
    store.removeFirst(drop * channels)
    storeStart = keepFrom
  }
}
