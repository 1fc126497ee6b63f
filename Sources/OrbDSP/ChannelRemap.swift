/// Turns interleaved audio of any supported layout into interleaved stereo: down-mix, then the remap mode.
///
/// Down-mix (ITU-R BS.775, as libswresample does it): L = FL + 0.7071·FC + 0.7071·BL + 0.7071·SL (+ 0.5·BC),
/// R likewise with the right channels. For 7.1 both the back and the side pair go to their side at 0.7071, as
/// FFmpeg's 7.1 → stereo matrix does. LFE is dropped unless `lfeGain` says otherwise. Mono is copied to both sides
/// at full level (a mono track should sound as loud as it is, not 3 dB down).
///
/// Normalisation: each output row is divided by the sum of its coefficients when that sum exceeds 1 (5.1: 2.414, so
/// every coefficient is scaled by 0.414; 7.1: 3.121, scaled by 0.320), which is libswresample's default. So a
/// full-scale signal on every channel at once cannot clip, and the ratios between channels stay the standard ones
/// (centre 3 dB below a front channel). Stereo and mono rows sum to 1 and are left alone, so stereo in `.stereo`
/// mode is a bit-exact copy.
///
/// Modes then act on the stereo pair: `.stereo` keeps it, `.mono` puts the average (L + R) / 2 on both, `.swapped`
/// exchanges L and R.
/// Thread-safety: a value type; `process` only reads it.
public struct ChannelRemap: Sendable, Equatable {
  /// What to do with the stereo pair after the down-mix.
  /// Thread-safety: a value type.
  public enum Mode: String, Sendable, CaseIterable {
    /// Left stays left, right stays right (down-mixed to stereo as needed).
    case stereo
    /// Both sides carry (L + R) / 2.
    case mono
    /// Left and right exchanged.
    case swapped
  }

  /// √½: the BS.775 level of the centre and surround channels in a stereo down-mix (−3 dB).
  public static let minus3dB: Float = 0.707_106_77

  /// The layout of the input.
  public let inputLayout: ChannelLayout
  /// The mode applied after the down-mix.
  public let mode: Mode
  /// Weight of each input channel in the output's left channel (normalised, mode applied).
  public let leftCoefficients: [Float]
  /// Weight of each input channel in the output's right channel (normalised, mode applied).
  public let rightCoefficients: [Float]

  /// - Parameters:
  ///   - inputLayout: the layout of the interleaved input.
  ///   - mode: what to do with the stereo pair.
  ///   - lfeGain: the weight of the LFE channel on both sides before normalisation (0: dropped).
  public init(inputLayout: ChannelLayout, mode: Mode = .stereo, lfeGain: Float = 0) {
    self.inputLayout = inputLayout
    self.mode = mode
    let s = Self.minus3dB
    var left = [Float](repeating: 0, count: inputLayout.count)
    var right = left
    if inputLayout.count == 1 {
      left[0] = 1
      right[0] = 1
    } else {
      for (i, position) in inputLayout.positions.enumerated() {
        switch position {
        case .frontLeft: left[i] = 1
        case .frontRight: right[i] = 1
        case .frontCenter:
          left[i] = s
          right[i] = s
        case .lowFrequency:
          left[i] = lfeGain
          right[i] = lfeGain
        case .backLeft, .sideLeft: left[i] = s
        case .backRight, .sideRight: right[i] = s
        case .backCenter:
          left[i] = s * s
          right[i] = s * s
        case .unknown: break
        }
      }
    }
    let scale = 1 / max(1, left.reduce(0) { $0 + abs($1) }, right.reduce(0) { $0 + abs($1) })
    if scale != 1 {
      left = left.map { $0 * scale }
      right = right.map { $0 * scale }
    }
    switch mode {
    case .stereo: break
    case .swapped: swap(&left, &right)
    case .mono:
      let both = zip(left, right).map { ($0 + $1) / 2 }
      left = both
      right = both
    }
    leftCoefficients = left
    rightCoefficients = right
  }

  /// Mixes `frames` interleaved frames of `input` (in `inputLayout`) into `output` as interleaved stereo
  /// (2 × `frames` samples).
  public func process(
    _ input: UnsafeBufferPointer<Float>, frames: Int, into output: UnsafeMutableBufferPointer<Float>
  ) {
    let channels = inputLayout.count
    precondition(frames >= 0 && input.count >= frames * channels, "input holds fewer than \(frames) frames")
    precondition(output.count >= frames * 2, "output has room for fewer than \(frames) stereo frames")
    if channels == 2 && mode == .stereo {
      for i in 0..<(frames * 2) { output[i] = input[i] }
      return
    }
    if channels == 2 && mode == .swapped {
      for i in 0..<frames {
        output[2 * i] = input[2 * i + 1]
        output[2 * i + 1] = input[2 * i]
      }
      return
    }
    leftCoefficients.withUnsafeBufferPointer { left in
      rightCoefficients.withUnsafeBufferPointer { right in
        var index = 0
        for i in 0..<frames {
          var l: Float = 0
          var r: Float = 0
          for c in 0..<channels {
            let x = input[index + c]
            l += left[c] * x
            r += right[c] * x
          }
          output[2 * i] = l
          output[2 * i + 1] = r
          index += channels
        }
      }
    }
  }

  /// Convenience: returns interleaved stereo for interleaved `input`.
  public func process(_ input: [Float]) -> [Float] {
    let frames = input.count / inputLayout.count
    var output = [Float](repeating: 0, count: frames * 2)
    input.withUnsafeBufferPointer { source in
      output.withUnsafeMutableBufferPointer { process(source, frames: frames, into: $0) }
    }
    return output
  }
}
