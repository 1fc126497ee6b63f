import Foundation

/// Starts a named thread running `body`. `body` is `sending`: what it captures (a decoder, a packet) now belongs to
/// the new thread alone, and the compiler checks that the caller keeps no use of it. Foundation's `Thread` takes
/// only `@Sendable` closures, which a closure owning a non-`Sendable` value is not; a `sending` closure is
/// disconnected from everything else, so handing it over whole is safe.
/// - Parameter stackSize: bytes of stack, where the default (512 KiB) is too little.
public func startThread(named name: String, stackSize: Int? = nil, _ body: sending @escaping () -> Void) {
  let handed = Unshared(body)
  let thread = Thread {
    nameForSystem(name)
    handed.value()
  }
  thread.name = name
  if let stackSize { thread.stackSize = stackSize }
  thread.start()
}

/// `work`'s answer, run on a thread of its own (`name`), if it comes within `seconds`; else nil, and the thread is
/// left to finish (or to wait for ever) alone. For what must not wait on a lock that may never be let go: the last
/// word to the host at a signal, when a thread may hang holding the player's.
public func answer<T: Sendable>(within seconds: Double, named name: String, _ work: @escaping @Sendable () -> T) -> T? {
  let slot = Locked<T?>(nil)
  startThread(named: name) {
    let result = work()
    slot.change { $0 = result }
  }
  return slot.wait(until: { $0 != nil }, deadline: Date(timeIntervalSinceNow: seconds), then: { s, _ in s.take() })
}

/// Gives the calling thread `name` where the system shows it (`top -H`, `perf`, a debugger: the thread's comm, 15
/// bytes at most), which Foundation's `Thread.name` does not set on Linux: every thread showed as "orb-player".
func nameForSystem(_ name: String) {
  let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
  guard fd >= 0 else { return }
  let bytes = Array(name.utf8.prefix(15))
  _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
  close(fd)
}
