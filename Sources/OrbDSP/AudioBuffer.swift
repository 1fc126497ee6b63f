/// Placeholder until the DSP module lands: interleaved Float32 audio.
public struct AudioFormat: Sendable, Equatable {
  public var sampleRate: Int
  public var channels: Int
  public init(sampleRate: Int, channels: Int) {
    self.sampleRate = sampleRate
    self.channels = channels
  }
}
