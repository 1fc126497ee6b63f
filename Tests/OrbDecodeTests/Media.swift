import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// The clips these tests decode, generated with lavfi: small (320x240, 1-2 s) and fast presets, so the whole
/// suite stays quick on two cores.
enum Media {
  static let sine = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]

  static func testsrc(rate: Int) -> [String] { ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=\(rate)"] }

  /// H.264 with B-frames and a keyframe every 1.2 s (so a seek to 1.0 decodes from 0), AAC tagged English.
  /// The moov box is left at the end (no +faststart), as ffmpeg writes by default.
  static func h264() throws -> String {
    try TestMedia.path(
      "h264-aac.mp4",
      testsrc(rate: 25) + sine + [
        "-t", "2", "-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "30", "-keyint_min", "30",
        "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2", "-metadata:s:a:0", "language=eng",
      ])
  }

  /// Interlaced H.264 (top field first, coded as fields where x264 sees fit) with B-frames, 1 s, no sound.
  static func interlacedH264() throws -> String {
    try TestMedia.path(
      "h264-interlaced.mp4",
      testsrc(rate: 25) + [
        "-t", "1", "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-flags", "+ildct+ilme", "-top", "1",
        "-pix_fmt", "yuv420p",
      ])
  }

  /// H.264 with AAC in MPEG-TS, with a key frame only every 5 s (0 and 5 of 8 s), as broadcast recordings have: TS
  /// has no index, so FFmpeg's seek lands on any packet, often after the key frame the target needs.
  static func longGOPTransportStream() throws -> String {
    try TestMedia.path(
      "h264-longgop.ts",
      testsrc(rate: 25) + sine + [
        "-t", "8", "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "125", "-keyint_min", "125",
        "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2",
      ])
  }

  /// The same with its moov box first, so a cut-short copy still opens.
  static func h264FastStart() throws -> String {
    try TestMedia.path("h264-faststart.mp4", ["-i", try h264(), "-c", "copy", "-movflags", "+faststart"])
  }

  /// A variable-frame-rate recording, 2 s: 30 fps for the first second, then 10 fps (its average, 15.25 fps, is
  /// wrong for both halves); H.264 without B-frames, in `container` (mp4 or mkv: Matroska gives no frame durations).
  static func variableRate(container: String) throws -> String {
    try TestMedia.path(
      "vfr-30-then-10.\(container)",
      [
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=2", "-vf",
        "setpts='if(lt(N,30),N/30,1+(N-30)/10)/TB'", "-fps_mode", "vfr", "-c:v", "libx264", "-preset", "ultrafast",
        "-bf", "0",
      ])
  }

  static func vp9() throws -> String {
    try TestMedia.path(
      "vp9-opus.webm",
      testsrc(rate: 25) + sine + [
        "-t", "2", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k", "-c:a", "libopus",
      ])
  }

  static func mpeg2() throws -> String {
    try TestMedia.path(
      "mpeg2-mp2.ts", testsrc(rate: 25) + sine + ["-t", "2", "-c:v", "mpeg2video", "-c:a", "mp2"])
  }

  static func mpeg4() throws -> String {
    try TestMedia.path(
      "mpeg4-mp3.avi", testsrc(rate: 25) + sine + ["-t", "2", "-c:v", "mpeg4", "-c:a", "libmp3lame"])
  }

  /// Two Opus tracks (English default, Japanese dub) and a forced English SRT track.
  static func multiTrack() throws -> String {
    let srt = try TestMedia.file(
      named: "multi-en.srt",
      contents: "1\n00:00:00,000 --> 00:00:01,000\nHello\n\n2\n00:00:01,000 --> 00:00:02,000\nWorld\n")
    return try TestMedia.path(
      "multi-track.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2", "-f", "lavfi", "-i", "sine=f=440:d=2",
        "-f", "lavfi", "-i", "sine=f=880:d=2", "-i", srt, "-map", "0:v", "-map", "1:a", "-map", "2:a", "-map", "3:s",
        "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "libopus", "-c:s", "srt",
        "-metadata:s:a:0", "language=eng", "-metadata:s:a:0", "title=English", "-metadata:s:a:1", "language=jpn",
        "-metadata:s:a:1", "title=Japanese dub", "-metadata:s:s:0", "language=eng", "-metadata:s:s:0",
        "title=Signs", "-disposition:v:0", "default", "-disposition:a:0", "default", "-disposition:a:1", "0",
        "-disposition:s:0", "forced",
      ])
  }

  /// Pixels twice as wide as tall: 320x240 stored, 640x240 shown.
  static func anamorphic() throws -> String {
    try TestMedia.path(
      "anamorphic.mp4",
      testsrc(rate: 25) + ["-t", "1", "-vf", "setsar=2", "-c:v", "libx264", "-preset", "ultrafast"])
  }

  /// The H.264 clip with a display matrix from the `rotate` tag (stream copy, as phones' files carry it).
  static func rotated() throws -> String {
    try TestMedia.path("rotated.mp4", ["-i", try h264(), "-c", "copy", "-metadata:s:v:0", "rotate=90"])
  }

  /// The H.264 clip with random bytes written into its video packets.
  static func corrupt() throws -> String {
    try TestMedia.path("corrupt.mp4", ["-i", try h264(), "-c", "copy", "-bsf:v", "noise=amount=200"])
  }

  /// 12 s of H.264 and AAC, longer than the demuxer reads ahead of a local file.
  static func twelveSeconds() throws -> String {
    try TestMedia.path(
      "h264-aac-12s.mp4",
      testsrc(rate: 25) + sine + [
        "-t", "12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-pix_fmt", "yuv420p", "-c:a", "aac",
      ])
  }

  /// The same pictures with their sound starting 6 s into the file (and into the picture), as a recording whose
  /// sound began late: the demuxer reads 6 s of pictures before the first sound.
  static func lateSound() throws -> String {
    try TestMedia.path(
      "h264-late-aac.mkv",
      testsrc(rate: 25) + ["-itsoffset", "6"] + sine + [
        "-map", "0:v", "-map", "1:a", "-t", "12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
        "-pix_fmt", "yuv420p", "-c:a", "aac",
      ])
  }

  static func audioOnly() throws -> String {
    try TestMedia.path("audio-only.m4a", sine + ["-t", "1", "-c:a", "aac"])
  }
}

/// A decoded frame reduced to what the tests compare.
struct DecodedFrame {
  var time: Double
  var duration: Double
  /// Every plane's visible bytes, row after row, without stride padding.
  var pixels: [UInt8]
}

/// The visible bytes of every plane of `frame`.
func planeBytes(_ frame: VideoFrame) -> [UInt8] {
  var out: [UInt8] = []
  for plane in frame.planes {
    let rowBytes = plane.width * plane.components * frame.bytesPerComponent
    for row in 0..<plane.height {
      out.append(contentsOf: UnsafeRawBufferPointer(start: plane.base + row * plane.stride, count: rowBytes))
    }
  }
  return out
}

/// Results handed from a decoding thread to the test, under a lock.
private final class DecodeBox: @unchecked Sendable {
  let lock = NSLock()
  var frames: [DecodedFrame] = []
}

/// Pulls frames from `pipeline` until it ends (or `limit` frames), on a thread of its own so that a hang fails
/// the test after `timeout` seconds instead of stopping the suite.
/// - Returns: the frames, and whether the pipeline reached its end (nil) in time.
func decodeAll(
  _ pipeline: MediaPipeline, limit: Int = .max, keepPixels: Bool = false, timeout: Double = 60
) -> (frames: [DecodedFrame], finished: Bool) {
  let box = DecodeBox()
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    var count = 0
    while count < limit, let frame = pipeline.nextFrame() {
      let decoded = DecodedFrame(
        time: frame.time, duration: frame.duration, pixels: keepPixels ? planeBytes(frame) : [])
      box.lock.withLock { box.frames.append(decoded) }
      count += 1
    }
    done.signal()
  }
  thread.start()
  let finished = done.wait(timeout: .now() + timeout) == .success
  if !finished {
    pipeline.close()  // wakes the reader, so the thread ends
    _ = done.wait(timeout: .now() + 5)
  }
  return (box.lock.withLock { box.frames }, finished)
}

/// The first frame `pipeline` gives, with its pixels, waiting at most `timeout` seconds.
func firstFrame(_ pipeline: MediaPipeline, timeout: Double = 10) -> DecodedFrame? {
  decodeAll(pipeline, limit: 1, keepPixels: true, timeout: timeout).frames.first
}

/// Fails unless opening `path` throws a `MediaError` of `kind` whose reason contains `reason`.
func assertOpenFails(
  _ path: String, kind: MediaError.Kind, reasonContains reason: String? = nil, file: StaticString = #filePath,
  line: UInt = #line
) {
  do {
    let source = try MediaSource(path)
    XCTFail("'\(path)' opened as \(source.info.container), expected a \(kind.rawValue) error", file: file, line: line)
  } catch let error as MediaError {
    XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
    XCTAssertEqual(error.source, path, file: file, line: line)
    XCTAssertTrue(error.description.contains(path), "'\(error)' should name the file", file: file, line: line)
    if let reason {
      XCTAssertTrue(
        error.reason.contains(reason), "reason '\(error.reason)' should say '\(reason)'", file: file, line: line)
    }
  } catch {
    XCTFail("expected a MediaError, got \(type(of: error)): \(error)", file: file, line: line)
  }
}

/// The stream of ffprobe's JSON at `index`.
func probedStream(_ path: String, _ index: Int) throws -> [String: Any] {
  let streams = try FFprobe.streams(path)
  guard index < streams.count else { throw TestMediaError("\(path) has no stream \(index)") }
  return streams[index]
}
