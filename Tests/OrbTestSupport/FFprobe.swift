import Foundation

/// ffprobe as the reference for what a file holds.
/// Thread-safety: Safe.
public enum FFprobe {
  /// Video frames in the first video stream, counted by decoding it (`-count_frames`); -1 when ffprobe fails.
  public static func frameCount(_ path: String) -> Int {
    let result = Tool.run(
      "ffprobe",
      [
        "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of",
        "csv=p=0", path,
      ], timeout: 120)
    // Containers with programs (MPEG-TS) print the stream once per program and once alone, as "50,".
    let counts = result.stdout.split(separator: "\n").compactMap { line in
      Int(line.split(separator: ",").first?.trimmingCharacters(in: .whitespaces) ?? "")
    }
    guard result.succeeded, let count = counts.first else { return -1 }
    return count
  }

  /// `ffprobe -show_streams -show_format` as parsed JSON (keys "streams" and "format").
  /// - Throws: `TestMediaError` with ffprobe's standard error when it fails.
  public static func json(_ path: String, extra: [String] = []) throws -> [String: Any] {
    let result = Tool.run(
      "ffprobe", ["-v", "error", "-show_streams", "-show_format", "-of", "json"] + extra + [path], timeout: 120)
    guard result.succeeded else { throw TestMediaError("ffprobe \(path): \(result.stderr)") }
    guard let object = try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any] else {
      throw TestMediaError("ffprobe \(path): not a JSON object: \(result.stdout)")
    }
    return object
  }

  /// The streams of `json(path)`, in file order.
  public static func streams(_ path: String) throws -> [[String: Any]] {
    try json(path)["streams"] as? [[String: Any]] ?? []
  }

  /// The display-matrix rotation of the first video stream as ffprobe prints it: degrees counter-clockwise
  /// (FFmpeg's convention), nil when the stream has no display matrix.
  public static func rotation(_ path: String) -> Int? {
    let result = Tool.run(
      "ffprobe",
      ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data=rotation", "-of", "csv=p=0", path])
    let text = result.stdout.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    return Double(text).map { Int($0.rounded()) }
  }
}
