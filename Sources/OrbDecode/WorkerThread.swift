import Foundation

/// Starts a named thread running `body`. `body` is `sending`: what it captures (a decoder, a packet) now belongs to
/// the new thread alone, and the compiler checks that the caller keeps no use of it. Foundation's `Thread` takes
/// only `@Sendable` closures, which a closure owning a non-`Sendable` value is not; a `sending` closure is
/// disconnected from everything else, so handing it over whole is safe.
/// - Parameter stackSize: bytes of stack, where the default (512 KiB) is too little.
public func startThread(named name: String, stackSize: Int? = nil, _ body: sending @escaping () -> Void) {
  let handed = Unshared(body)
  let thread = Thread { handed.value() }
  thread.name = name
  if let stackSize { thread.stackSize = stackSize }
  thread.start()
}
