import Foundation

/// What a finished (or killed) child process left behind.
/// Thread-safety: a value type.
public struct ToolResult: Sendable {
  /// The exit status, or the signal number when it was killed (see `timedOut`).
  public let status: Int32
  /// Standard output as bytes, for tools that write binary data (raw video).
  public let stdoutData: Data
  /// Standard error as bytes.
  public let stderrData: Data
  /// True when the tool ran past its timeout and was killed.
  public let timedOut: Bool

  /// Standard output as UTF-8 text.
  public var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
  /// Standard error as UTF-8 text.
  public var stderr: String { String(decoding: stderrData, as: UTF8.self) }
  /// Exited with status 0 in time.
  public var succeeded: Bool { status == 0 && !timedOut }
}

/// Runs command-line tools (ffmpeg, ffprobe, the built player) from tests.
/// Thread-safety: Safe; every call has its own process and pipes.
public enum Tool {
  /// Runs `executable` (a path, or a name looked up on PATH) with `arguments` and waits for it.
  /// Both pipes are drained on their own threads, so a tool that writes megabytes never blocks.
  /// - Parameters:
  ///   - environment: the child's whole environment; nil inherits this process's.
  ///   - timeout: seconds before the tool is sent SIGTERM, then SIGKILL a second later.
  public static func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 60
  ) -> ToolResult {
    guard let path = find(executable, environment: environment) else {
      let message = "\(executable): not found on PATH\n"
      return ToolResult(status: 127, stdoutData: Data(), stderrData: Data(message.utf8), timedOut: false)
    }
    let process = Child()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let outPipe = Pipe()
    let errPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    do {
      try process.run()
    } catch {
      let message = "\(path): \(error)\n"
      return ToolResult(status: 126, stdoutData: Data(), stderrData: Data(message.utf8), timedOut: false)
    }
    let stdout = PipeReader(outPipe.fileHandleForReading)
    let stderr = PipeReader(errPipe.fileHandleForReading)

    var timedOut = false
    if exited.wait(timeout: .now() + timeout) == .timedOut {
      timedOut = true
      process.terminate()
      if exited.wait(timeout: .now() + 1) == .timedOut {
        process.signal(SIGKILL)
        exited.wait()
      }
    }
    // The pipes reach end of file once the child (and anything it left holding them) is gone.
    let outData = stdout.wait(timeout: timedOut ? 2 : 30)
    let errData = stderr.wait(timeout: timedOut ? 2 : 30)
    return ToolResult(
      status: process.terminationStatus, stdoutData: outData, stderrData: errData, timedOut: timedOut)
  }

  /// The full path of `executable`: itself when it names a path, else the first match on PATH.
  public static func find(_ executable: String, environment: [String: String]? = nil) -> String? {
    if executable.contains("/") {
      return FileManager.default.isExecutableFile(atPath: executable) ? executable : nil
    }
    let searchPath =
      environment?["PATH"] ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in searchPath.split(separator: ":") where !directory.isEmpty {
      let candidate = "\(directory)/\(executable)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }
}

/// Reads a pipe to its end on a thread of its own.
/// Thread-safety: Safe; the data is handed over under a lock.
private final class PipeReader: @unchecked Sendable {
  private let condition = NSCondition()
  private var data = Data()
  private var done = false

  init(_ handle: FileHandle) {
    let thread = Thread { [self] in
      let all = handle.readDataToEndOfFile()
      condition.lock()
      data = all
      done = true
      condition.broadcast()
      condition.unlock()
    }
    thread.name = "orb-test-pipe-reader"
    thread.start()
  }

  /// What was read, once the pipe ended or `timeout` seconds passed (then possibly nothing).
  func wait(timeout: Double) -> Data {
    condition.lock()
    defer { condition.unlock() }
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !done {
      if !condition.wait(until: deadline) { break }
    }
    return data
  }
}
