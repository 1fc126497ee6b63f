import Foundation

/// Why a test could not make its media.
public struct TestMediaError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// Test media generated with ffmpeg (lavfi sources), made once per machine and kept in a cache folder:
/// `$ORB_TEST_MEDIA_DIR`, else `/tmp/orb-test-media`. Nothing binary is committed.
/// Thread-safety: Safe; files appear by atomic rename, so racing processes both end with a whole file.
public enum TestMedia {
  /// The cache folder, created on first use.
  public static var directory: String {
    let env = ProcessInfo.processInfo.environment["ORB_TEST_MEDIA_DIR"] ?? ""
    let dir = env.isEmpty ? "/tmp/orb-test-media" : env
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
  }

  /// The path of `name` (e.g. "sdr-h264.mp4") made by `ffmpeg -hide_banner -loglevel error -y <arguments> <file>`.
  /// The file name carries a hash of the arguments, so changing a recipe makes a new file.
  /// - Throws: `TestMediaError` with ffmpeg's standard error when it fails.
  public static func path(_ name: String, _ ffmpegArguments: [String]) throws -> String {
    let (stem, ext) = split(name)
    let key = hash(["ffmpeg-recipe-v1", name] + ffmpegArguments)
    let target = "\(directory)/\(stem)-\(key)\(ext)"
    if FileManager.default.fileExists(atPath: target) { return target }
    // The temporary file keeps the extension: ffmpeg picks the container from it.
    let temporary = "\(directory)/.tmp-\(UUID().uuidString)-\(stem)\(ext)"
    let result = Tool.run(
      "ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + ffmpegArguments + [temporary], timeout: 300)
    guard result.succeeded, FileManager.default.fileExists(atPath: temporary) else {
      try? FileManager.default.removeItem(atPath: temporary)
      let why = result.timedOut ? "timed out" : "exit status \(result.status)"
      throw TestMediaError(
        "ffmpeg could not make \(name) (\(why)): \(result.stderr)\nargs: \(ffmpegArguments.joined(separator: " "))")
    }
    try publish(temporary, as: target)
    return target
  }

  /// A small hand-made file (an empty file, text named .mkv, a subtitle to mux) with exactly `contents`.
  /// Written on every call (it is cheap), atomically.
  public static func file(named name: String, contents: Data) throws -> String {
    let target = "\(directory)/hand-\(name)"
    let temporary = "\(directory)/.tmp-\(UUID().uuidString)-\(name)"
    guard FileManager.default.createFile(atPath: temporary, contents: contents) else {
      throw TestMediaError("cannot write \(temporary)")
    }
    try publish(temporary, as: target)
    return target
  }

  /// `file(named:contents:)` with UTF-8 text.
  public static func file(named name: String, contents: String) throws -> String {
    try file(named: name, contents: Data(contents.utf8))
  }

  /// A copy of the first `bytes` bytes of `path` (`head -c`), named after it: a download cut short.
  public static func truncated(_ path: String, bytes: Int) throws -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else { throw TestMediaError("cannot read \(path)") }
    defer { try? handle.close() }
    let head = try handle.read(upToCount: bytes) ?? Data()
    let (stem, ext) = split((path as NSString).lastPathComponent)
    return try file(named: "\(stem)-first\(bytes)\(ext)", contents: head)
  }

  private static func publish(_ temporary: String, as target: String) throws {
    // rename(2) replaces the target atomically: a racing process sees the old whole file or the new one.
    guard rename(temporary, target) == 0 else {
      let why = String(cString: strerror(errno))
      try? FileManager.default.removeItem(atPath: temporary)
      throw TestMediaError("cannot move \(temporary) to \(target): \(why)")
    }
  }

  /// "clip.mp4" → ("clip", ".mp4"); "clip" → ("clip", "").
  private static func split(_ name: String) -> (stem: String, ext: String) {
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
    return (String(name[..<dot]), String(name[dot...]))
  }

  /// 64-bit FNV-1a over the parts (NUL-separated), as 16 hex digits: stable across runs and machines.
  static func hash(_ parts: [String]) -> String {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for part in parts {
      for byte in part.utf8 + [0] {
        h ^= UInt64(byte)
        h = h &* 0x100_0000_01b3
      }
    }
    let hex = String(h, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }
}

/// The orb-player executable the app tests drive.
public enum OrbBinary {
  /// `$ORB_PLAYER_BIN`, else `<package root>/.build/debug/orb-player`.
  public static var path: String {
    if let env = ProcessInfo.processInfo.environment["ORB_PLAYER_BIN"], !env.isEmpty { return env }
    return "\(packageRoot)/.build/debug/orb-player"
  }

  /// The package root, found from this source file's place in it (Tests/OrbTestSupport/TestMedia.swift).
  public static var packageRoot: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().path
  }
}
