import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// The sound placed later or earlier than its pictures (`setAudioDelay`, Ctrl+plus/minus): where a sound of the file
/// lands on the timeline the clock follows.
final class AudioDelayTests: XCTestCase {
  /// 4 s of a grey picture, and sound silent until 2 s, a tone from there (10 ms audio frames, so it starts at 2 s).
  private func clip() throws -> String {
    try TestMedia.path(
      "tone-from-2s.mkv",
      [
        "-f", "lavfi", "-i", "color=c=gray:size=160x90:rate=25:duration=4", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=4:samples_per_frame=480,volume='if(lt(t,2),0,1)':eval=frame",
        "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le",
      ])
  }

  /// The media time of the first sound louder than silence the pipeline gives from here on.
  private func toneStart(_ pipeline: MediaPipeline) -> Double? {
    let deadline = Date(timeIntervalSinceNow: 10)
    while Date() < deadline, let chunk = pipeline.nextAudio(timeout: 5) {
      for frame in 0..<chunk.frames where abs(chunk.samples[frame * chunk.channels]) > 0.05 {
        return chunk.time + Double(frame) / Double(chunk.sampleRate)
      }
    }
    return nil
  }

  func testTheSoundIsPlacedLaterOrEarlierByTheDelay() throws {
    let pipeline = try MediaPipeline(source: try clip(), audio: MediaPipeline.AudioRequest())
    defer { pipeline.close() }
    for delay in [0.0, 0.3, -0.3, 0.0] {
      pipeline.setAudioDelay(delay, at: 1.0)
      let heard = try XCTUnwrap(toneStart(pipeline), "no tone with a delay of \(delay) s")
      XCTAssertEqual(heard, 2 + delay, accuracy: 0.011, "delay \(delay) s")
    }
    // After a seek the sound starts where the picture does, with the file's sound from half a second before the
    // target (the demuxer goes back by the delay): the tone of 2 s is heard at 2.5 s, not cut.
    pipeline.setAudioDelay(0.5, at: 2.2)
    let first = try XCTUnwrap(pipeline.nextAudio(timeout: 5))
    XCTAssertEqual(first.time, 2.2, accuracy: 0.001)
    XCTAssertEqual(first.samples.map(abs).max() ?? 1, 0, "the file's silence of 1.7 s first")
    XCTAssertEqual(try XCTUnwrap(toneStart(pipeline)), 2.5, accuracy: 0.011)
    // A quick seek (the slider dragged) shows the key frame before the target (0 s, this clip's only one): the sound
    // starts there too, the delay after its own place, not the delay away from the picture.
    pipeline.seek(to: 1.0, exact: false)
    XCTAssertEqual(try XCTUnwrap(pipeline.nextAudio(timeout: 5)).time, 0, accuracy: 0.011)
    XCTAssertEqual(try XCTUnwrap(toneStart(pipeline)), 2.5, accuracy: 0.011)
  }

  /// With the sound later than its pictures, a seek's first sound is the file's from the delay before the target,
  /// though that lies before the key frame the seek's picture is decoded from (the demuxer goes back by the delay, as
  /// mpv's does): a key frame every 0.2 s and a tone all along, the sound at the target is the tone, not silence.
  func testAfterASeekTheSoundFromBeforeTheKeyFrameIsHeard() throws {
    let clip = try TestMedia.path(
      "tone-all-along-g5.mkv",
      [
        "-f", "lavfi", "-i", "color=c=gray:size=160x90:rate=25:duration=4", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=4:samples_per_frame=480", "-c:v", "libx264", "-preset",
        "ultrafast", "-g", "5", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le",
      ])
    let pipeline = try MediaPipeline(source: clip, audio: MediaPipeline.AudioRequest(delay: 0.5))
    defer { pipeline.close() }
    for target in [2.2, 1.0, 3.0] {
      pipeline.seek(to: target)
      let first = try XCTUnwrap(pipeline.nextAudio(timeout: 5))
      XCTAssertEqual(first.time, target, accuracy: 0.001)
      // The sine is 1/8 of full scale.
      let start = first.samples.prefix(480 * first.channels).map(abs).max() ?? 0
      XCTAssertGreaterThan(start, 0.1, "seek to \(target) s: the tone at once, not the silence of a missing 0.5 s")
      let picture = try XCTUnwrap(pipeline.nextPicture(timeout: 5))
      XCTAssertEqual(picture.time, target, accuracy: 0.001, "the picture of the target still")
    }
  }

  /// A delay asked for from the start (`--audio-delay`, or the last entry's) places the sound so from the first.
  func testADelayFromTheStart() throws {
    let pipeline = try MediaPipeline(source: try clip(), audio: MediaPipeline.AudioRequest(delay: -0.4))
    defer { pipeline.close() }
    XCTAssertEqual(try XCTUnwrap(pipeline.nextAudio(timeout: 5)).time, 0, accuracy: 0.001)
    XCTAssertEqual(try XCTUnwrap(toneStart(pipeline)), 1.6, accuracy: 0.011)
  }
}
