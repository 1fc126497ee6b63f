import Foundation

/// A child process started with posix_spawn, with the part of Foundation's `Process` interface the tests use
/// (`executableURL`, `arguments`, `environment`, the three standard streams, `run`, `terminate`, `waitUntilExit`,
/// the termination status and handler).
///
/// Why not `Process`: swift-corelibs-foundation's `Process.run` crashed the whole test process twice in the suite's
/// history (a bad read in a memmove while the robustness tests' parallel workers started players), even with every
/// `run` serialised. It registers each child with a run loop on a shared manager thread and a socket pair; this type
/// spawns, closes every inherited descriptor above 2 in the child, and reaps on a thread of its own, nothing shared.
///
/// Thread-safety: Safe. Configure before `run()` from one thread; afterwards the state is under `condition`.
public final class Child: @unchecked Sendable {
  /// The program to run (not looked up on PATH).
  public var executableURL: URL?
  public var arguments: [String] = []
  /// The child's whole environment; nil inherits this process's.
  public var environment: [String: String]?
  /// Each a `Pipe` (the child gets the matching end), a `FileHandle` (`FileHandle.nullDevice` is /dev/null), or nil
  /// to inherit this process's.
  public var standardInput: Any?
  public var standardOutput: Any?
  public var standardError: Any?
  /// Called once on the reaping thread when the child has exited.
  public var terminationHandler: (@Sendable (Child) -> Void)?

  private let condition = NSCondition()
  private var pid: pid_t = 0
  private var finished = false
  private var status: Int32 = 0
  private var reason: Process.TerminationReason = .exit

  public init() {}

  public var processIdentifier: Int32 { condition.withLock { pid } }
  public var isRunning: Bool { condition.withLock { pid > 0 && !finished } }
  /// The exit status, or the signal's number when `terminationReason` is `.uncaughtSignal`.
  public var terminationStatus: Int32 {
    condition.withLock {
      precondition(finished, "the child is still running")
      return status
    }
  }
  public var terminationReason: Process.TerminationReason {
    condition.withLock {
      precondition(finished, "the child is still running")
      return reason
    }
  }

  /// Starts the child in a process group of its own, with default signal handling and an empty signal mask.
  public func run() throws {
    guard let path = executableURL?.path else { throw ChildError("no executable") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (target, stream) in [
      (STDIN_FILENO, standardInput), (STDOUT_FILENO, standardOutput), (STDERR_FILENO, standardError),
    ] {
      switch stream {
      case let pipe as Pipe:
        let end = target == STDIN_FILENO ? pipe.fileHandleForReading : pipe.fileHandleForWriting
        posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
      case let handle as FileHandle where handle === FileHandle.nullDevice:
        posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
      case let handle as FileHandle:
        posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
      default:
        break
      }
    }
    // Nothing else this process has open reaches the child: a pipe another test is reading would otherwise stay open
    // for as long as this child runs.
    guard Self.closeFrom(&actions, 3) == 0 else { throw ChildError("posix_spawn_file_actions_addclosefrom_np failed") }

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for string in argv { free(string) } }
    let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer { for string in envp ?? [] { free(string) } }
    var child: pid_t = 0
    let result =
      envp.map { posix_spawn(&child, path, &actions, &attributes, argv, $0) }
      ?? posix_spawn(&child, path, &actions, &attributes, argv, environ)
    guard result == 0 else { throw ChildError("\(path): \(String(cString: strerror(result)))") }

    // This process keeps only its own ends of the pipes, so the reader sees end of file when the child is gone.
    if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
    if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
    if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }
    let started = child
    condition.withLock { pid = started }
    let reaper = Thread { [self] in reap(started) }
    reaper.name = "orb-test-reaper"
    reaper.start()
  }

  private func reap(_ child: pid_t) {
    var waitStatus: Int32 = 0
    while waitpid(child, &waitStatus, 0) == -1 && errno == EINTR {}
    condition.withLock {
      // WIFSIGNALED / WTERMSIG / WEXITSTATUS, spelled out (the macros do not reach Swift).
      let signal = waitStatus & 0x7f
      if signal != 0 && signal != 0x7f {
        reason = .uncaughtSignal
        status = signal
      } else {
        reason = .exit
        status = (waitStatus >> 8) & 0xff
      }
      finished = true
      condition.broadcast()
    }
    terminationHandler?(self)
  }

  /// Sends SIGTERM (nothing when it has exited).
  public func terminate() { signal(SIGTERM) }

  /// Sends `number` to the child while it runs.
  public func signal(_ number: Int32) {
    condition.withLock {
      if pid > 0 && !finished { kill(pid, number) }
    }
  }

  /// Blocks until the child has exited and been reaped.
  public func waitUntilExit() {
    condition.withLock {
      while !finished { condition.wait() }
    }
  }

  /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34 and later), which Swift's Glibc module does not declare.
  private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
    else { fatalError("glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)") }
    return unsafeBitCast(
      symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
  }()
}

/// Why a child could not be started.
/// Thread-safety: a value type.
public struct ChildError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}
