/// Decoded audio: interleaved Float32 at the pipeline's output rate, in the source's channel order
/// (FFmpeg's native order: FL FR FC LFE BL BR SL SR as present).
/// Thread-safety: a value type.
public struct AudioChunk: Sendable {
  public var samples: [Float]
  public var channels: Int
  public var sampleRate: Int
  /// Media time of the first frame, seconds.
  public var time: Double
  /// The seek generation it belongs to.
  public var generation: Int

  public var frames: Int { samples.count / max(1, channels) }
  public var duration: Double { Double(frames) / Double(sampleRate) }

  public init(samples: [Float], channels: Int, sampleRate: Int, time: Double, generation: Int) {
    self.samples = samples
    self.channels = channels
    self.sampleRate = sampleRate
    self.time = time
    self.generation = generation
  }
}
