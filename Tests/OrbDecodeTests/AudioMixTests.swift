import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// Sound of a layout the player mixes to stereo itself comes out as loud as the same sound in 5.1 does, never
/// louder than its loudest channel (swresample leaves a float mix unscaled: 5.0 was 4.7 dB louder and clipped); a
/// mono track whose layout the file does not name plays at its own level (it was mixed to both sides at -3 dB).
final class AudioMixTests: XCTestCase {
  /// The peak of the first second of decoded sound of `path`, and its channel count.
  private func peak(_ path: String) throws -> (peak: Float, channels: Int) {
    let pipeline = try MediaPipeline(source: path, audio: MediaPipeline.AudioRequest())
    defer { pipeline.close() }
    var peak: Float = 0
    var channels = 0
    var heard = 0.0
    while heard < 1, let chunk = pipeline.nextAudio(timeout: 5) {
      peak = max(peak, chunk.samples.map(abs).max() ?? 0)
      channels = chunk.channels
      heard += chunk.duration
    }
    XCTAssertGreaterThan(heard, 0.5, "no sound from \(path)")
    return (peak, channels)
  }

  /// A 440 Hz tone of amplitude 0.7 in every channel of `layout`, as FLAC, or as 16-bit PCM in Matroska, which
  /// names no layout.
  private func tone(_ layout: String, codec: String = "flac") throws -> String {
    try TestMedia.path(
      "mix-\(layout)-\(codec).mka",
      ["-f", "lavfi", "-i", "aevalsrc=0.7*sin(2*PI*440*t):s=48000:c=\(layout):d=2", "-c:a", codec])
  }

  func testLayoutsMixedToStereoAreNoLouderThanTheirChannels() throws {
    for layout in ["3.0", "quad", "5.0", "6.1"] {
      let (peak, channels) = try peak(try tone(layout))
      XCTAssertEqual(channels, 2, layout)
      XCTAssertEqual(peak, 0.7, accuracy: 0.03, "\(layout) mixed to stereo peaks at \(peak)")
    }
  }

  func testAMonoTrackOfNoNamedLayoutPlaysAtItsOwnLevel() throws {
    let (peak, channels) = try peak(try tone("mono", codec: "pcm_s16le"))
    XCTAssertEqual(channels, 1)
    XCTAssertEqual(peak, 0.7, accuracy: 0.01, "mono peaks at \(peak)")
  }
}
