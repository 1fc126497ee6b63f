import CFFmpeg
import Foundation
import Synchronization

/// Standard input (`-`, mpv's name for it) or a named pipe, kept so that the player can read it more than once and
/// seek back in it, as it does a file: the probe, the demuxer, the reader of its text subtitles and a later visit from
/// the playlist each open it again, and a pipe can be read only once. One thread copies what comes through into a
/// temporary file (deleted as soon as it is made, so nothing is left behind however the player ends); each opening
/// reads that file through an `AVIOContext` of its own (`SpoolReader`), waiting where it reads ahead of the copy.
/// What has come goes to a temporary file (`directories`: on disk, not in memory), as mpv's cache would to memory. The
/// copy runs at most `readAhead` bytes past the furthest place an opening reads: a fast writer (`cat` of a large
/// file) then waits on the pipe as playback goes, instead of filling the disk (or, where /tmp is tmpfs, memory) with
/// the whole stream at once. Behind the slowest reader, only `Kept.behind` bytes are kept (and the first `Kept.head`,
/// which holds a file's header for a later opening): the rest of the copy's room is given back to the file system as
/// playback goes (a hole punched in the file), so a film piped in whole (`yt-dlp -o - URL | orb-player -`) takes about
/// half a gigabyte of disk at most, not its whole size. A seek back past what is kept is refused, as mpv refuses one
/// past its cache. Only while every reader reads its container straight through (`SpoolReader.readsStraightThrough`:
/// Matroska, MPEG-TS, Ogg…): an MP4 reads its index at the end and then goes back for every picture.
/// Thread-safety: Safe. The copying thread is the only writer of the file and of `state.written` and `ended`;
/// readers read the file below `state.written`, which never shrinks, say where they read in `state.readers`, and
/// wait on `state` (a `Locked`) for more.
final class Spool: Sendable {
  struct State {
    /// Bytes in the file so far.
    var written: Int64 = 0
    /// The pipe has ended (or the copy failed): `written` is all there will be.
    var ended = false
    /// Why the copy stopped before the pipe ended, in words.
    var failure: String?
    /// Where each open `SpoolReader` reads next (or waits to), by its number.
    var readers: [Int: Int64] = [:]
    /// Bytes from `Kept.head` up to this were given back (they read as holes): no reader may go there.
    var discarded: Int64 = 0
    /// The readers (by number) whose container is read straight through, once its header has been: the others hold
    /// everything from the start.
    var straight: Set<Int> = []
    var nextReader = 0
    /// How far the copy may run: `readAhead` past the furthest reader (a position FFmpeg took from a damaged file
    /// may be near Int64's limit: the sum stops there).
    func allowed(readAhead: Int64) -> Int64 {
      let (sum, overflow) = (readers.values.max() ?? 0).addingReportingOverflow(readAhead)
      return overflow ? .max : sum
    }
  }

  let state = Locked(State())
  /// The temporary file's descriptor (its name already removed).
  let file: Int32
  /// Bytes the copy may run ahead of the furthest reader: about 35 s of a 60 Mb/s 4K stream, and more than the
  /// demuxer reads ahead (64 MB of packets), so playback never waits on the pace of the copy, only on the pipe's.
  let readAhead: Int64
  static let defaultReadAhead: Int64 = 256 << 20

  /// What is kept of what has been read.
  struct Kept: Sendable {
    /// The first bytes, always (a file's header, which an opening reads first).
    var head: Int64
    /// Bytes behind the slowest reader (what seeks back can reach).
    var behind: Int64
    /// The least worth a hole of its own (one punch per this much played).
    var step: Int64

    static let standard = Kept(head: 16 << 20, behind: 256 << 20, step: 16 << 20)
  }
  let kept: Kept

  /// Whether `offset` lies where the copy was given back: a reader cannot go there.
  func isDiscarded(_ offset: Int64) -> Bool {
    offset >= kept.head && offset < state.withLock { $0.discarded }
  }

  /// One spool a pipe (by its device and inode): standard input and each named pipe are read once, whatever opens
  /// them and by whatever name (`-` and /dev/stdin, `fifo` and `./fifo`).
  private static let open = Mutex<[String: Spool]>([:])

  /// Whether anything has come through the pipe with `key` yet (false too while no opening has started its spool).
  static func hasData(key: String) -> Bool {
    guard let spool = open.withLock({ $0[key] }) else { return false }
    return spool.state.withLock { $0.written > 0 }
  }

  /// How a local source is read.
  enum Kind: Equatable {
    /// By its path, as FFmpeg opens files.
    case file
    /// Standard input redirected from a file (`orb-player - < film.mkv`): that file, opened again by its path under
    /// /proc (no copy).
    case standardInputFile
    /// Through the spool of the pipe with this key (device and inode).
    case pipe(key: String)
    /// Not to be read, for this reason: a terminal, or a device (/dev/zero would fill the disk).
    case refused(String)
  }

  /// How `source` (`-`, or a local path's bytes) is read.
  static func kind(of source: String, path: [CChar]?) -> Kind {
    var st = stat()
    if source == "-" {
      if isatty(STDIN_FILENO) != 0 {
        return .refused("is standard input, a terminal here: pipe the media into it (cat FILE | orb-player -)")
      }
      guard fstat(STDIN_FILENO, &st) == 0 else { return .refused("is standard input, which is closed") }
      switch st.st_mode & S_IFMT {
      case S_IFREG: return .standardInputFile
      case S_IFIFO, S_IFSOCK: return .pipe(key: "\(st.st_dev):\(st.st_ino)")
      case S_IFCHR where isNull(st): return .refused("nothing came through it (empty: /dev/null)")
      default: return .refused("is standard input, a device here, not a pipe or a file")
      }
    }
    guard let path, stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFIFO else { return .file }
    return .pipe(key: "\(st.st_dev):\(st.st_ino)")
  }

  /// Whether `st` is /dev/null's.
  private static func isNull(_ st: stat) -> Bool {
    var null = stat()
    return stat("/dev/null", &null) == 0 && null.st_rdev == st.st_rdev
  }

  /// The spool of the pipe with `key`, started at the first call: standard input for `-`, else the named pipe at
  /// `path`.
  /// - Throws: `MediaError` when no temporary file can be made.
  static func of(
    _ source: String, key: String, path: [CChar]?, readAhead: Int64 = defaultReadAhead, kept: Kept = .standard
  ) throws -> Spool {
    try open.withLock { spools in
      if let spool = spools[key] { return spool }
      let spool = try Spool(source, path: source == "-" ? nil : path, readAhead: readAhead, kept: kept)
      spools[key] = spool
      return spool
    }
  }

  /// Where the copy is made: `TMPDIR` where it is set, else /var/tmp, which is on disk where /tmp is often tmpfs
  /// (memory: Fedora's and Arch's), and then /tmp.
  static func directories(environment: [String: String]) -> [String] {
    if let chosen = environment["TMPDIR"], !chosen.isEmpty { return [chosen] }
    return ["/var/tmp", "/tmp"]
  }

  private init(_ source: String, path: [CChar]?, readAhead: Int64, kept: Kept) throws {
    precondition(readAhead > 0, "a copy that may not run ahead of its reader would wait for it forever")
    self.readAhead = readAhead
    self.kept = kept
    let directories = Self.directories(environment: ProcessInfo.processInfo.environment)
    var made: (fd: Int32, name: [CChar])?
    var problem = ""
    for directory in directories where made == nil {
      var template = Array("\(directory)/orb-player-pipe-XXXXXX".utf8CString)
      let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
      if fd >= 0 { made = (fd, template) } else { problem = String(cString: strerror(errno)) }
    }
    guard let (fd, name) = made else {
      let tried = directories.joined(separator: " or ")
      throw MediaError(
        .unplayable, source: source, reason: "no temporary file in \(tried) to keep what comes through it (\(problem))")
    }
    unlink(name)
    // Not handed on to programs the player starts (they would keep the deleted file's room taken).
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    file = fd
    let state = self.state
    startThread(named: "orb-pipe-spool") {
      // A named pipe is opened here: that waits for its writer, and nothing else should.
      let input =
        path.map { p in p.withUnsafeBufferPointer { Foundation.open($0.baseAddress!, O_RDONLY | O_CLOEXEC) } }
        ?? STDIN_FILENO
      guard input >= 0 else {
        Self.end(state, failure: String(cString: strerror(errno)))
        return
      }
      Self.copy(from: input, to: fd, state: state, readAhead: readAhead, kept: kept)
      if input != STDIN_FILENO { close(input) }
    }
  }

  /// Copies until the pipe ends or the file cannot take more, waiting while it is `readAhead` past every reader.
  private static func copy(from input: Int32, to file: Int32, state: Locked<State>, readAhead: Int64, kept: Kept) {
    let size = 1 << 20
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    defer { buffer.deallocate() }
    var offset: Int64 = 0
    while true {
      // Nothing to wake this wait but a reader moving on or a new one: the pipe is not read meanwhile, so its
      // writer waits too, until the player exits (also when a playlist has gone on to its next entry and left the
      // rest of the pipe unread, as it would leave a file; coming back reads on). Its length stays unknown until the
      // copy reaches its end.
      state.wait(until: { $0.written < $0.allowed(readAhead: readAhead) }, then: { _, _ in })
      let n = Glibc.read(input, buffer, size)
      if n < 0 && errno == EINTR { continue }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        // Standard input left non-blocking by whatever started the player: wait until there is something to read.
        var ready = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        _ = poll(&ready, 1, -1)
        continue
      }
      if n <= 0 {
        end(state, failure: n < 0 ? String(cString: strerror(errno)) : nil)
        return
      }
      var done = 0
      while done < n {
        let w = pwrite(file, buffer + done, n - done, off_t(offset) + off_t(done))
        if w < 0 && errno == EINTR { continue }
        guard w > 0 else {
          end(state, failure: "the temporary copy could not be written (\(String(cString: strerror(errno))))")
          return
        }
        done += w
      }
      offset += Int64(n)
      state.change { $0.written = offset }
      giveBack(file, state: state, kept: kept)
    }
  }

  /// Gives back the room of what lies more than `kept.behind` behind the slowest reader (not the head), a step at a
  /// time. Readers move on while this runs: the slowest only moves forward, except by a seek, which may not go
  /// below `discarded` once it is set (`SpoolReader.seek`); it is set before the hole is made.
  private static func giveBack(_ file: Int32, state: Locked<State>, kept: Kept) {
    let span = state.change { s -> (Int64, Int64)? in
      // Nobody reads: a later opening may want it all.
      guard let slowest = s.readers.map({ s.straight.contains($0.key) ? $0.value : 0 }).min() else { return nil }
      let from = max(s.discarded, kept.head)
      let to = slowest - kept.behind
      guard to - from >= kept.step else { return nil }
      s.discarded = to
      return (from, to)
    }
    guard let (from, to) = span else { return }
    // Where the file system cannot make holes, the copy keeps its room, as before.
    _ = orb_punch_hole(file, from, to - from)
  }

  /// No more will come: the pipe ended, or (with `failure`) the copy stopped.
  private static func end(_ state: Locked<State>, failure: String?) {
    state.change {
      $0.failure = failure
      $0.ended = true
    }
  }

  /// What a read of the spool gives.
  enum Read: Equatable {
    case bytes(Int)
    case end
    /// The temporary file could not be read, or the copy into it failed.
    case failed
    /// The wait was interrupted (a seek, or the player stopping).
    case interrupted
  }

  /// Up to `count` bytes from `offset` into `buffer`, waiting until some are there (or the pipe ends, or
  /// `cancellation` interrupts the wait).
  func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int, cancellation: Cancellation) -> Read {
    if isDiscarded(offset) { return .failed }  // (an opening made later, reading on from the head)
    let now = wait(past: offset, cancellation: cancellation) { $0.interrupts }
    if now.written > offset {
      // A read of the head stops at its end where what follows was given back: the next one is refused (above).
      let headLeft = offset < kept.head && now.discarded > kept.head ? Int(kept.head - offset) : count
      let n = pread(file, buffer, min(count, headLeft, Int(now.written - offset)), off_t(offset))
      // Given back meanwhile (a seek back raced the copy's reckoning): what was read may be the hole's zeros. The
      // mark is set before the hole is made, so a read it does not cover read what was there.
      if isDiscarded(offset) { return .failed }
      return n > 0 ? .bytes(n) : .failed
    }
    if now.ended { return now.failure == nil ? .end : .failed }
    return .interrupted
  }

  /// The state once more than `offset` bytes are in, the pipe has ended, or `stops` says the wait is over; woken by
  /// the copy and by `cancellation`, never polling.
  private func wait(
    past offset: Int64, cancellation: Cancellation, stops: @escaping (Cancellation) -> Bool
  ) -> State {
    let ready: (State) -> Bool = { $0.written > offset || $0.ended || stops(cancellation) }
    if let now = state.withLock({ ready($0) ? $0 : nil }) { return now }
    let state = state
    let waker = cancellation.wakeOnInterrupt { state.change { _ in } }
    defer { cancellation.stopWaking(waker) }
    return state.wait(until: ready) { s, _ in s }
  }

  /// The whole length, once the pipe has ended.
  var size: Int64? { state.withLock { $0.ended ? $0.written : nil } }

  /// Waits for the first bytes (a pipe's writer may take a while to start: a downloader looking up its address).
  /// - Throws: `MediaError` when it ends with nothing, or the wait is cancelled.
  func waitForData(source: String, cancellation: Cancellation) throws {
    let now = wait(past: 0, cancellation: cancellation) { $0.isCancelled }
    if now.written > 0 { return }
    if now.ended {
      throw MediaError(.unplayable, source: source, reason: now.failure ?? "nothing came through it (empty)")
    }
    throw MediaError(.unplayable, source: source, reason: "cancelled")
  }
}

/// One opening's reading of a `Spool`: an `AVIOContext` whose reads and seeks go to the spool, with its own position.
/// Thread-safety: Unsafe; used by the thread that uses its format context (FFmpeg calls it from there).
final class SpoolReader {
  private let spool: Spool
  private let cancellation: Cancellation
  /// Its number in the spool's `readers`.
  private let number: Int
  private var position: Int64 = 0 {
    didSet {
      let (number, position) = (number, position)
      if position != oldValue { spool.state.change { $0.readers[number] = position } }
    }
  }
  /// The context FFmpeg reads through; freed with its buffer by `free`.
  private(set) var context: UnsafeMutablePointer<AVIOContext>?

  init?(_ spool: Spool, cancellation: Cancellation) {
    self.spool = spool
    self.cancellation = cancellation
    number = spool.state.change { s in
      defer { s.nextReader += 1 }
      s.readers[s.nextReader] = 0
      return s.nextReader
    }
    guard
      let context = CustomIO.make(
        size: 1 << 16, opaque: Unmanaged.passUnretained(self).toOpaque(), read: Self.readPacket, seek: Self.seek)
    else {
      leave()
      return nil
    }
    self.context = context
  }

  /// No longer reads: the copy no longer waits for it to move on.
  private func leave() {
    let number = number
    spool.state.change {
      _ = $0.readers.removeValue(forKey: number)
      $0.straight.remove(number)
    }
  }

  /// Its opening has read the header of a container it reads straight through from here (`Spool`, `Kept`): what lies
  /// far behind it may be given back.
  func readsStraightThrough() {
    let number = number
    spool.state.change { _ = $0.straight.insert(number) }
  }

  /// Frees the context and its buffer (FFmpeg does not, for a context of one's own); after the format context.
  func free() {
    guard let context else { return }
    leave()
    CustomIO.free(context)
    self.context = nil
  }

  deinit { free() }

  private static let readPacket:
    @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) ->
      Int32 = { opaque, buffer, size in
        let reader = Unmanaged<SpoolReader>.fromOpaque(opaque!).takeUnretainedValue()
        guard let buffer, size > 0 else { return 0 }
        switch reader.spool.read(
          at: reader.position, into: buffer, count: Int(size), cancellation: reader.cancellation)
        {
        case .bytes(let n):
          reader.position += Int64(n)
          return Int32(n)
        case .end: return FFmpegError.eof
        case .failed: return orb_averror(EIO)
        case .interrupted: return orb_averror_exit()
        }
      }

  private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = {
    opaque, offset, whence in
    let reader = Unmanaged<SpoolReader>.fromOpaque(opaque!).takeUnretainedValue()
    let how = whence & ~Int32(AVSEEK_FORCE)
    if how == Int32(AVSEEK_SIZE) { return reader.spool.size ?? Int64(orb_averror(ENOSYS)) }
    let target: Int64
    switch how {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = reader.position &+ offset
    case SEEK_END:
      guard let size = reader.spool.size else { return Int64(orb_averror(ENOSYS)) }
      target = size &+ offset
    default: return Int64(orb_averror(EINVAL))
    }
    // Both bases are never negative: a sum past Int64's limit (an offset from a damaged file) wraps to a negative
    // target, refused as any negative one is.
    guard target >= 0 else { return Int64(orb_averror(EINVAL)) }
    // Given back to make room (`Spool.Kept`): the seek is refused, and reading goes on where it was.
    if reader.spool.isDiscarded(target) { return Int64(orb_averror(ESPIPE)) }
    reader.position = target
    return target
  }
}
