import CFFmpeg
import Foundation
import XCTest

@testable import OrbDecode

/// A pipe is copied only so far ahead of where it is read: a fast writer waits on the pipe as playback goes, and the
/// temporary copy does not take the whole stream's room at once.
final class SpoolTests: XCTestCase {
  private var directory = ""

  override func setUpWithError() throws {
    directory = NSTemporaryDirectory() + "orb-spool-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  }

  override func tearDown() {
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// The byte at `offset` of what the writer sends.
  private static func byte(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 7 &+ offset >> 12) }

  /// Writes `total` bytes into the pipe at `path` as fast as it takes them, keeping `sent` up to date.
  private static func send(_ total: Int, to path: String, sent: Locked<Int>) {
    let fd = open(path, O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var offset = 0
    while offset < total {
      for i in 0..<chunk.count { chunk[i] = byte(offset + i) }
      let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      guard n > 0 else { break }
      offset += n
      sent.change { $0 = offset }
    }
    close(fd)
  }

  /// The spool's copied bytes once some have come and they, and what the writer sent, have stopped growing for a
  /// while (a loaded machine may not run the writer or the copy for a moment).
  private func settledLength(_ spool: Spool, sent: Locked<Int>) -> Int64 {
    let start = Date()
    while spool.state.withLock({ $0.written }) == 0 && Date().timeIntervalSince(start) < 10 { usleep(20_000) }
    var last = (written: Int64(-1), sent: -1)
    var still = 0
    while Date().timeIntervalSince(start) < 20 {
      let now = (written: spool.state.withLock { $0.written }, sent: sent.withLock { $0 })
      still = now == last ? still + 1 : 0
      if still == 3 { return now.written }
      last = now
      usleep(100_000)
    }
    return last.written
  }

  /// A named pipe that a writer fills with `total` bytes as fast as it takes them (`sent`: how far it got), its spool,
  /// and a cancellation that ends every wait after a minute (should the copy wait for the wrong reader, the reads end
  /// instead of waiting for good).
  private func pipe(
    sending total: Int, readAhead: Int64, kept: Spool.Kept = .standard
  ) throws -> (Spool, Locked<Int>, Cancellation) {
    let fifo = directory + "/fifo-\(UUID().uuidString.prefix(8))"
    XCTAssertEqual(mkfifo(fifo, 0o600), 0)
    let sent = Locked(0)
    Thread { SpoolTests.send(total, to: fifo, sent: sent) }.start()
    let spool = try Spool.of(
      fifo, key: "test:\(UUID().uuidString)", path: Array(fifo.utf8CString), readAhead: readAhead, kept: kept)
    let watchdog = Cancellation()
    DispatchQueue.global().asyncAfter(deadline: .now() + 60) { watchdog.cancel() }
    return (spool, sent, watchdog)
  }

  func testTheCopyRunsOnlyItsReadAheadPastTheFurthestReader() throws {
    let total = 12 << 20
    let ahead: Int64 = 2 << 20
    let (spool, sent, watchdog) = try pipe(sending: total, readAhead: ahead)
    let reader = try XCTUnwrap(SpoolReader(spool, cancellation: watchdog))
    let context = try XCTUnwrap(reader.context)
    // Another opening that stays at the start (the probe's, say): the copy follows the furthest reader, not it.
    let idle = try XCTUnwrap(SpoolReader(spool, cancellation: watchdog))

    // Nobody has read yet: the copy stops at its read-ahead (give or take one of its 1 MB reads), and the writer waits.
    let first = settledLength(spool, sent: sent)
    XCTAssertGreaterThan(first, 0)
    XCTAssertLessThanOrEqual(first, ahead + (1 << 20))
    XCTAssertLessThan(sent.withLock { $0 }, total)

    // Reading moves it on; everything comes through in order, to the end.
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var offset = 0
    var wrong = 0
    var checkedHalfWay = false
    while true {
      let n = buffer.withUnsafeMutableBufferPointer { avio_read(context, $0.baseAddress, Int32($0.count)) }
      if n <= 0 { break }
      for i in 0..<Int(n) where buffer[i] != Self.byte(offset + i) { wrong += 1 }
      offset += Int(n)
      if !checkedHalfWay && offset >= 6 << 20 {
        checkedHalfWay = true
        // Half way: the copy is past the reader, but still within its read-ahead of it.
        let now = settledLength(spool, sent: sent)
        XCTAssertGreaterThan(now, Int64(offset))
        XCTAssertLessThanOrEqual(now, Int64(offset) + ahead + (1 << 20) + (1 << 16))
      }
    }
    XCTAssertTrue(checkedHalfWay)
    XCTAssertEqual(offset, total)
    XCTAssertEqual(wrong, 0)
    XCTAssertEqual(spool.size, Int64(total))
    XCTAssertEqual(spool.state.withLock { $0.readers.count }, 2)
    reader.free()
    idle.free()
    XCTAssertTrue(spool.state.withLock { $0.readers.isEmpty })
    // The copy is on disk where the system's temporary directory may be memory (tmpfs): TMPDIR, else /var/tmp (else
    // /tmp, where /var/tmp cannot take it).
    let tried = Spool.directories(environment: ProcessInfo.processInfo.environment).map {
      URL(fileURLWithPath: $0).resolvingSymlinksInPath().path
    }
    let copy = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(spool.file)")
    let folder = (copy as NSString).deletingLastPathComponent
    XCTAssertTrue(tried.contains(folder) && copy.contains("/orb-player-pipe-") && copy.hasSuffix(" (deleted)"), copy)
  }

  /// What lies well behind the reader is given back to the file system as it reads (a film piped in whole took its
  /// whole size of disk), once its container is one read straight through: the copy's room stays near what is kept,
  /// the head and what is behind still read back as they came, and a seek past them is refused, as is a later
  /// opening's read past the head, rather than reading the hole's zeros.
  func testWhatLiesFarBehindTheReaderIsGivenBack() throws {
    let total = 24 << 20
    let kept = Spool.Kept(head: 1 << 20, behind: 4 << 20, step: 1 << 20)
    // On a file system known to make holes (tmpfs), wherever the machine's temporary folder is.
    let before = getenv("TMPDIR").map { String(cString: $0) }
    setenv("TMPDIR", "/dev/shm", 1)
    defer { if let before { setenv("TMPDIR", before, 1) } else { unsetenv("TMPDIR") } }
    let (spool, _, watchdog) = try pipe(sending: total, readAhead: 2 << 20, kept: kept)
    let reader = try XCTUnwrap(SpoolReader(spool, cancellation: watchdog))
    let context = try XCTUnwrap(reader.context)
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var offset = 0
    var wrong = 0
    var mostRoom: Int64 = 0
    func room() -> Int64 {
      var st = stat()
      return fstat(spool.file, &st) == 0 ? Int64(st.st_blocks) * 512 : 0
    }
    while true {
      let n = buffer.withUnsafeMutableBufferPointer { avio_read(context, $0.baseAddress, Int32($0.count)) }
      if n <= 0 { break }
      for i in 0..<Int(n) where buffer[i] != Self.byte(offset + i) { wrong += 1 }
      offset += Int(n)
      if offset >= 16 << 20 { mostRoom = max(mostRoom, room()) }  // once it has caught up
      if offset == 12 << 20 {
        // Until then (its header read, as an MP4's runs to its end), everything is kept.
        XCTAssertEqual(spool.state.withLock { $0.discarded }, 0)
        reader.readsStraightThrough()
      }
    }
    XCTAssertEqual(offset, total)
    XCTAssertEqual(wrong, 0)
    // Head, what is kept behind, the read-ahead, and a step and a read of the copy's in between.
    XCTAssertLessThanOrEqual(mostRoom, kept.head + kept.behind + (2 << 20) + kept.step + (2 << 20), "\(mostRoom)")
    XCTAssertGreaterThan(spool.state.withLock { $0.discarded }, Int64(total / 2))

    func readBack(at position: Int) -> Bool {
      guard avio_seek(context, Int64(position), SEEK_SET) == Int64(position) else { return false }
      let n = buffer.withUnsafeMutableBufferPointer { avio_read(context, $0.baseAddress, 4096) }
      return n == 4096 && (0..<4096).allSatisfy { buffer[$0] == Self.byte(position + $0) }
    }
    XCTAssertTrue(readBack(at: 1000), "the head is kept")
    XCTAssertTrue(readBack(at: total - (3 << 20)), "what lies behind is kept")
    XCTAssertFalse(readBack(at: 16 << 20), "a seek into what was given back is refused")
    // A later opening reads the head, and no further.
    let late = try XCTUnwrap(SpoolReader(spool, cancellation: watchdog))
    var lateOffset = 0
    while true {
      let n = buffer.withUnsafeMutableBufferPointer { avio_read(late.context, $0.baseAddress, 3000) }
      if n <= 0 { break }
      for i in 0..<Int(n) where buffer[i] != Self.byte(lateOffset + i) { wrong += 1 }
      lateOffset += Int(n)
    }
    XCTAssertEqual(lateOffset, Int(kept.head))
    XCTAssertEqual(wrong, 0, "the hole's zeros were read as what came")
    late.free()
    reader.free()
  }

  /// A reader sent near Int64's limit (a position from a damaged file) lets the copy run on, without trapping.
  func testAPositionNearTheLimitDoesNotOverflow() {
    var state = Spool.State()
    state.readers[0] = .max - 10
    XCTAssertEqual(state.allowed(readAhead: Spool.defaultReadAhead), .max)
    state.readers[0] = 5
    XCTAssertEqual(state.allowed(readAhead: 7), 12)
  }

  func testTheCopyGoesToTMPDIRElseVarTmp() {
    XCTAssertEqual(Spool.directories(environment: ["TMPDIR": "/scratch"]), ["/scratch"])
    XCTAssertEqual(Spool.directories(environment: ["TMPDIR": ""]), ["/var/tmp", "/tmp"])
    XCTAssertEqual(Spool.directories(environment: [:]), ["/var/tmp", "/tmp"])
  }

  /// A read waiting for more of a pipe whose writer is silent ends when a seek interrupts it (it is woken, it does
  /// not look now and then), reads on once resumed, and sees the end once the writer closes; the wait for a first
  /// byte ends when the opening is cancelled.
  func testAWaitForThePipeEndsAtAnInterruptAndACancel() throws {
    let fifo = directory + "/silent"
    XCTAssertEqual(mkfifo(fifo, 0o600), 0)
    let key = "test:\(UUID().uuidString)"
    let quiet = try Spool.of(fifo, key: key, path: Array(fifo.utf8CString))
    let opening = Cancellation()
    let gaveUp = expectation(description: "the wait for a first byte ended")
    Thread {
      let outcome = Result { try quiet.waitForData(source: fifo, cancellation: opening) }
      if case .failure(let error) = outcome, "\(error)".contains("cancelled") { gaveUp.fulfill() }
    }.start()
    usleep(200_000)
    opening.cancel()
    wait(for: [gaveUp], timeout: 10)

    // The spool's thread waits for a writer: one comes, writes 1000 bytes and falls silent.
    let writer = open(fifo, O_WRONLY | O_CLOEXEC)
    XCTAssertGreaterThanOrEqual(writer, 0)
    let bytes = [UInt8](repeating: 42, count: 1000)
    XCTAssertEqual(bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }, 1000)
    let cancellation = Cancellation()
    try quiet.waitForData(source: fifo, cancellation: cancellation)
    let reads = Locked<[Spool.Read]>([])
    let interrupted = expectation(description: "the waiting read ended")
    Thread {
      let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
      defer { buffer.deallocate() }
      var offset: Int64 = 0
      while true {
        let read = quiet.read(at: offset, into: buffer, count: 4096, cancellation: cancellation)
        reads.change { $0.append(read) }
        guard case .bytes(let n) = read else { break }
        offset += Int64(n)
      }
      interrupted.fulfill()
    }.start()
    // The read waits with a waker of its own (not looking every so often), and takes it away once woken.
    let start = Date()
    while cancellation.wakerCount == 0 && Date().timeIntervalSince(start) < 10 { usleep(10_000) }
    XCTAssertEqual(cancellation.wakerCount, 1)
    cancellation.interrupt()
    wait(for: [interrupted], timeout: 10)
    XCTAssertEqual(reads.withLock { $0.last }, .interrupted)
    XCTAssertEqual(reads.withLock { $0.reduce(0) { if case .bytes(let n) = $1 { $0 + n } else { $0 } } }, 1000)
    XCTAssertEqual(cancellation.wakerCount, 0)

    cancellation.resume()
    close(writer)
    let ended = expectation(description: "the read after the writer closed ended")
    Thread {
      let buffer = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
      defer { buffer.deallocate() }
      if quiet.read(at: 1000, into: buffer, count: 16, cancellation: cancellation) == .end { ended.fulfill() }
    }.start()
    wait(for: [ended], timeout: 10)
  }
}
