import COrbSignals
import Foundation
import OrbDecode

/// SIGTERM, SIGINT and SIGHUP (a host stopping the player, Ctrl-C, a session logging out), taken on a thread of
/// their own, so that the host hears where playback was even when the main thread cannot answer: an X server or
/// compositor that stopped answering leaves GTK waiting for its reply for ever (the main loop, which took these
/// signals through GLib before, never ran again, and the host got neither an `ended` nor a position), as would a
/// driver or a lock that hangs.
///
/// The handler (C, `orb_signals_to_pipe`: async-signal-safe) only writes the signal's number to a pipe. The watch's
/// thread reads it and asks the main thread to close as usual (`onMain`); if the run's last word has not gone to the
/// host `grace` seconds later, or the same signal comes again `secondSignalAfter` seconds or more after the first (Ctrl-C
/// pressed twice; a session's SIGHUP after its SIGTERM is not that), `speak` says it for the main thread and the
/// process exits (status 1). Once the last word is out, a process still there `deadline` seconds after the signal
/// (a close that hangs) exits with the status the close chose. Before each exit, what the writer holds is sent.
/// Thread-safety: the handler and the thread share only the pipe, set up in `start` before any handler is
/// installed; the thread owns the rest.
nonisolated enum SignalWatch {
  static let grace = 3.0
  static let deadline = 10.0
  static let secondSignalAfter = 0.25
  static let signals = [SIGTERM, SIGINT, SIGHUP]

  /// What the watch needs of the window, callable from its thread.
  struct Hooks: Sendable {
    /// On the main thread: close as the signal asks.
    let onMain: @Sendable @MainActor (Int32) -> Void
    /// On the watch's thread: tell the host where playback was unless the run's last word went already; true when
    /// this told it.
    let speak: @Sendable () -> Bool
    /// The exit status a close chose (read once the last word is out).
    let status: @Sendable () -> Int32
    /// Sends the events queued (bounded), before the process exits.
    let flush: @Sendable () -> Void
  }

  /// Installs the handlers and starts the thread. Once per process, before the signals may come.
  static func start(_ hooks: Hooks) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return }
    for end in ends {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    guard orb_signals_to_pipe(ends[1], signals, Int32(signals.count)) == 0 else { return }
    let read = ends[0]
    startThread(named: "orb-signals") { watch(read, hooks) }
  }

  private static func watch(_ fd: Int32, _ hooks: Hooks) {
    var first: (number: Int32, at: Date)?
    while true {
      let waited = first.map { Date().timeIntervalSince($0.at) } ?? 0
      let left = first == nil ? -1 : Int32(max(0, ((waited < grace ? grace : deadline) - waited) * 1000))
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, left)
      if ready < 0 && errno == EINTR { continue }
      var byte: UInt8 = 0
      if ready > 0 && Foundation.read(fd, &byte, 1) == 1 {
        let number = Int32(byte)
        if let first {
          // Asked again: no more waiting. Another signal (a session's SIGHUP after its SIGTERM) waits on.
          if number == first.number && Date().timeIntervalSince(first.at) >= secondSignalAfter {
            leave(hooks, signal: first.number, again: true)
          }
          continue
        }
        first = (number, Date())
        MainLoop.post { hooks.onMain(number) }
        continue
      }
      guard let first else { continue }
      if Date().timeIntervalSince(first.at) < deadline {
        if hooks.speak() { leave(hooks, signal: first.number, again: false, spoke: true) }
        continue  // the close told the host; it has until the deadline to end
      }
      say("orb-player: still closing \(Int(deadline)) s after \(name(first.number)); exiting")
      hooks.flush()
      _exit(hooks.status())
    }
  }

  /// Exits now: the host has heard where playback was (from the close, or from `speak` here).
  private static func leave(_ hooks: Hooks, signal: Int32, again: Bool, spoke: Bool = false) -> Never {
    let told = spoke || hooks.speak()
    hooks.flush()
    if told {
      say(
        "orb-player: the window did not close "
          + (again ? "before \(name(signal)) came again" : "within \(Int(grace)) s of \(name(signal))")
          + " (the display does not answer?); exiting")
      _exit(1)
    }
    _exit(hooks.status())
  }

  private static func name(_ number: Int32) -> String {
    switch number {
    case SIGTERM: "SIGTERM"
    case SIGINT: "SIGINT"
    case SIGHUP: "SIGHUP"
    default: "signal \(number)"
    }
  }

  private static func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
  }
}
