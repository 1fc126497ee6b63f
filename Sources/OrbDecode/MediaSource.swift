import CFFmpeg
import Foundation
import Synchronization

/// Owns one opened AVFormatContext and closes it exactly once, when the last reference goes, on every path.
/// It keeps the `Cancellation` whose flag FFmpeg polls through the context's interrupt callback alive until the
/// context is closed (closing a TLS connection still polls it).
/// Thread-safety: not `Sendable`; only its `MediaSource` holds it, and says how the context is shared.
final class FormatContext {
  let pointer: UnsafeMutablePointer<AVFormatContext>
  private let cancellation: Cancellation
  /// The context's interrupt callback, in the cancellation's place (it answers it first); nil for a pipe.
  private let watch: StallWatch?
  /// What the origin guard's callbacks are given (a network source's); it must live as long as the context.
  private let guardContext: OriginGuardContext?
  /// The demuxer's requests that failed so far, in words (`OriginGuardContext.failures`).
  var requestFailures: [String] { guardContext?.failures.withLock { $0 } ?? [] }
  /// Adds `failure` to them (once): a reading of the demuxer's that came to nothing.
  func noteFailure(_ failure: String) {
    guardContext?.failures.withLock { if !$0.contains(failure) { $0.append(failure) } }
  }
  /// The cookies the servers set while the open followed the redirects (a sign-in's session).
  var serverCookies: [RedirectCheck.ServerCookie] { guardContext?.serverCookies.withLock { $0 } ?? [] }
  /// The reading of a spooled pipe the context reads through (`AVFMT_FLAG_CUSTOM_IO`): freed after it. Nil for
  /// everything that is not a pipe.
  let spoolReader: SpoolReader?
  /// The connection of a network file read with credentials (`AVFMT_FLAG_CUSTOM_IO`): freed after it.
  let movable: MovableConnection?
  init(
    _ pointer: UnsafeMutablePointer<AVFormatContext>, cancellation: Cancellation,
    guardContext: OriginGuardContext? = nil, spoolReader: SpoolReader? = nil, movable: MovableConnection? = nil,
    watch: StallWatch? = nil
  ) {
    self.pointer = pointer
    self.cancellation = cancellation
    self.watch = watch
    self.guardContext = guardContext
    self.spoolReader = spoolReader
    self.movable = movable
  }
  deinit {
    orb_origin_guard_free(pointer)
    var c: UnsafeMutablePointer<AVFormatContext>? = pointer
    avformat_close_input(&c)
    spoolReader?.free()
    movable?.free()
  }
}

/// An opened container: the AVFormatContext and what is known of its streams.
/// Thread-safety: Unsafe; after opening, one thread (the demux thread) reads from the context (and moves a movable
/// connection, `prepareSeek`). `info`, `parameters` and `limit` are immutable and may be read from any thread;
/// `address` (where the connection reads, and where it is to move: `relocate`, from the thread explaining a failure)
/// is behind its Mutex, as is `failuresTold` (how many of the demuxer's failed requests the host has heard of).
public final class MediaSource: @unchecked Sendable {
  public let source: String
  /// A file on this machine (a path or a file:// URL), not a network stream.
  public var isLocal: Bool { Self.isLocal(source) }
  public static func isLocal(_ source: String) -> Bool { !source.contains("://") || source.hasPrefix("file://") }

  /// A file:// URL as the path it names, escapes decoded (file managers and launchers pass them); anything else, or
  /// a URL whose escapes are not UTF-8 (no path to give: it was opened as '', naming nothing), as it is.
  public static func filePath(_ source: String) -> String {
    guard source.hasPrefix("file://"), let path = URL(string: source)?.path, !path.isEmpty else { return source }
    return path
  }

  /// A local source's path as the file system has it, byte for byte (NUL-terminated): a path as it is, a file://
  /// URL's path with its escapes decoded to bytes, so that a name that is not UTF-8 (an old archive's Latin-1,
  /// which the command line passes as such a URL: `LocalName`) is opened and not lost. Nil for other URLs.
  public static func pathBytes(_ source: String) -> [CChar]? {
    guard source.hasPrefix("file://") else { return isURL(source) ? nil : Array(source.utf8CString) }
    var rest = Substring(source.dropFirst("file://".count))
    if rest.hasPrefix("localhost/") { rest = rest.dropFirst("localhost".count) }
    guard rest.hasPrefix("/") else { return nil }
    var bytes: [UInt8] = []
    var utf8 = Array(rest.utf8)[...]
    while let byte = utf8.popFirst() {
      if byte == UInt8(ascii: "%"), utf8.count >= 2,
        let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
      {
        bytes.append(value)
        utf8 = utf8.dropFirst(2)
      } else {
        bytes.append(byte)
      }
    }
    guard !bytes.contains(0) else { return nil }
    return bytes.map { CChar(bitPattern: $0) } + [0]
  }

  /// Query parameters that carry a sign-in in the URLs media servers hand out (Jellyfin's and Emby's `api_key`,
  /// Plex's `X-Plex-Token`, signed links' `token`, OAuth's `access_token`), compared in lower case.
  static let secretParameters: Set<String> = [
    "api_key", "apikey", "access_token", "token", "auth", "x-plex-token", "x-emby-token", "x-mediabrowser-token",
  ]

  /// `source` as it may be shown or told (messages, stderr, the desktop's media controls): a URL without the
  /// user name and password of its `user:password@host`, and with the values of the query's sign-in parameters
  /// (`secretParameters`) as "***"; anything else, and the rest of the URL, byte for byte.
  public static func withoutSecrets(_ source: String) -> String {
    guard isURL(source), let scheme = source.range(of: "://") else { return source }
    var shown = source
    let rest = shown[scheme.upperBound...]
    let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
    if let at = rest[..<authorityEnd].lastIndex(of: "@") {
      shown.removeSubrange(scheme.upperBound...at)
    }
    guard let question = shown.firstIndex(of: "?") else { return shown }
    let fragment = shown[question...].firstIndex(of: "#") ?? shown.endIndex
    let pairs = shown[shown.index(after: question)..<fragment].split(separator: "&", omittingEmptySubsequences: false)
    let query = pairs.map { pair -> String in
      guard let equals = pair.firstIndex(of: "="),
        secretParameters.contains(String(pair[..<equals]).removingPercentEncoding?.lowercased() ?? "")
      else { return String(pair) }
      return pair[...equals] + "***"
    }
    return shown[...question] + query.joined(separator: "&") + shown[fragment...]
  }

  /// The bytes of the local file `path` names, for the file system: `pathBytes`'s, and the text as it is for what
  /// names no local file (a network URL, which the file system then does not find).
  static func localBytes(_ path: String) -> [CChar] { pathBytes(path) ?? Array(path.utf8CString) }

  /// A file:// URL of the absolute path `bytes`, every byte but the plain ones escaped: how a name that is not UTF-8
  /// travels as a String (`pathBytes` gives the bytes back).
  public static func fileURL(absolute bytes: [UInt8]) -> String {
    let plain = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/".utf8)
    let escaped = bytes.map { plain.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }
    return "file://" + escaped.joined()
  }

  /// The last part of a source's path for people to read: a local one's with escapes decoded and bytes that are not
  /// UTF-8 shown as U+FFFD; a URL's decoded once, without its query.
  public static func displayName(_ source: String) -> String {
    if source == "-" { return "standard input" }
    // Bash's <(…) names a pipe by its number.
    if source.hasPrefix("/dev/fd/") || source.hasPrefix("/proc/self/fd/") { return "pipe (\(source))" }
    guard let bytes = pathBytes(source) else {
      return URL(string: source).flatMap { $0.scheme != nil ? $0.lastPathComponent : nil }
        ?? (withoutSecrets(source) as NSString).lastPathComponent
    }
    let name = bytes.dropLast().split(separator: CChar(bitPattern: UInt8(ascii: "/"))).last.map(Array.init) ?? []
    return String(decoding: name.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
  public let info: MediaInfo
  /// Read from a pipe (standard input, a named pipe) through its spool: what comes later has not come yet.
  var isPipe: Bool { format.spoolReader != nil }

  /// Demuxers that read a stream from its start to its end once its header is read (the ones a pipe usually carries).
  static let readStraightThrough: Set<String> = [
    "matroska", "webm", "mpegts", "ogg", "flv", "mpeg", "h264", "hevc", "mp3", "aac", "flac", "wav",
  ]
  /// Cancels the source's blocking I/O (quit while connecting, a seek while a read waits on the network).
  public let cancellation: Cancellation
  /// The largest picture decoded.
  public let limit: PictureLimit
  /// A copy of each video, audio and subtitle stream's codec parameters, by stream index, for the decoders.
  let parameters: [Int: StreamParameters]
  /// What its requests carry to the origin (asked again when explaining a network failure).
  let credentials: Credentials
  private let format: FormatContext
  var context: UnsafeMutablePointer<AVFormatContext> { format.pointer }
  /// Breaks the demux thread's reads that go nowhere (`StallWatch`); nil for a playlist or a pipe.
  private let stallWatch: StallWatch?
  /// The demuxer reads one stream of bytes (not a playlist's parts) and steps over damage to the next place it can
  /// read (Matroska, MPEG-TS and -PS, FLV): a jump in its packets' byte positions is what it stepped over.
  let stepsOverDamage: Bool

  /// Runs `body`, a read or a `seek` of the demux thread's, broken should it go nowhere (`StallWatch`). `afresh`: a
  /// seek asked for, which forgets a stall before it.
  func watching<T>(seek: Bool = false, afresh: Bool = false, _ body: () -> T) -> T {
    guard let stallWatch else { return body() }
    // A seek in a file may rightly read far (Matroska without an index reads its clusters up to the target).
    var armed = true
    if seek, case .scan = stallWatch.rule { armed = false }
    return stallWatch.watching(afresh: afresh, armed: armed, body)
  }

  /// Whether a watched call since the last seek was broken for bringing nothing (`StallWatch.stalledAt`).
  var stalled: Bool { stallWatch?.stalledAt != nil }

  /// The demuxer gave a packet (`StallWatch.delivered`).
  func delivered() { stallWatch?.delivered() }

  /// Whether the connection hangs (`StallWatch.connectionHangs`): read before a seek, which forgets the stall.
  var connectionHangs: Bool { stallWatch?.connectionHangs ?? false }

  /// Lets go of the connection, for the seek that follows to open a new one (one that hangs: FFmpeg reads on over it
  /// to any place less than its socket's receive buffer ahead, hundreds of kilobytes on a fast link, and waits as
  /// long again). FFmpeg's http protocol has no call for it, and `avio_seek` takes no `SEEK_END`: with the I/O
  /// buffer emptied, a seek to byte 0 lies behind it, which always opens a new connection (the old one is closed);
  /// the seek that follows, forward from there, reads over the new one. Returns where reading stood, for a seek that
  /// then fails to go back to (nil when nothing was done). On the demux thread, watched as a seek.
  func leaveTheConnection() -> Int64? {
    guard let pb = context.pointee.pb, pb.pointee.seekable != 0, pb.pointee.pos > 0 else { return nil }
    let at = avio_tell(pb)
    // Emptied, the buffer holds nothing to seek within: its end (`pos`) is where reading stands.
    pb.pointee.pos = at
    pb.pointee.buf_ptr = pb.pointee.buffer
    pb.pointee.buf_end = pb.pointee.buffer
    return avio_seek(pb, 0, SEEK_SET) >= 0 ? at : nil
  }

  /// What a stalled read means: a network failure (FFmpeg's timeout code, explained as the server sending nothing),
  /// or, for a file on this machine, its end: what follows holds nothing playable, which the host hears in a
  /// warning (once for each place).
  func stallEnd() -> Int32 {
    guard case .scan = stallWatch?.rule, let from = stallWatch?.stalledAt else {
      return orb_averror(ETIMEDOUT)
    }
    let notice =
      "nothing but an empty space from byte \(from) to the end of the file (a download not yet finished?); "
      + "playback ends there"
    format.noteFailure(notice)
    return FFmpegError.eof
  }
  /// Tells the host, once, of something wrong with the file that playback goes on past (`newNotices`).
  func warn(_ notice: String) { format.noteFailure(notice) }

  /// A request of the demuxer's (an HLS playlist, key or segment) was redirected off the origin while it carried a
  /// token, and was turned away as a sign-in (the origin guard). Read after the reading has failed.
  var refusedRedirect: Bool { orb_origin_guard_refused(format.pointer.pointee.opaque) != 0 }

  /// The picture a file of sound alone carries (its cover), decoded; nil for video, or without one.
  public let coverArt: CoverArt?
  /// How many of the demuxer's failed requests have been told (at the open, in `info.warnings`; then `newFailures`).
  private let failuresTold = Mutex(0)

  /// The demuxer's requests that failed since the last call (an HLS segment skipped, a rendition left out), in
  /// words, for the host; the open's are in `info.warnings`.
  func newFailures() -> [String] {
    let all = format.requestFailures  // only grows
    return failuresTold.withLock { told in
      defer { told = max(told, all.count) }
      return told < all.count ? Array(all[told...]) : []
    }
  }
  /// The size of the resource the server sent at the open (HTTP's length), nil when it did not say or is not a server.
  let servedSize: Int64?
  /// Where the connection reads from (where the open's redirects ended, or where it was moved), and where it is to
  /// move at the next seek (`relocate`); nil for a file.
  private let address: Mutex<(current: String, next: String?)>?
  /// The cookies the servers set while the open followed the redirects (a sign-in's session).
  var serverCookies: [RedirectCheck.ServerCookie] { format.serverCookies }

  /// Whether the server's resource is no longer the one opened: FFmpeg's reconnect in the middle of a stream takes
  /// an answer that is not the rest of the file (a redirect it may not follow, which carries credentials) for an
  /// empty body, and the demuxer then reports a clean end half way through. Its length changed; read on the
  /// demuxer's thread at an end.
  var answerChanged: Bool {
    guard let servedSize, let pb = context.pointee.pb else { return false }
    return avio_size(pb) != servedSize
  }

  /// Opens `source` (a path or URL) and reads enough to describe its streams.
  /// - Throws: `MediaError` naming the source and the reason.
  /// - Parameters:
  ///   - reconnect: for HTTP(S), retry resets, network errors and 5xx with backoff (playback); off for quick
  ///     answers (`--probe`, `--frame-at`).
  ///   - cancellation: `cancel()` makes a blocked open or read return at once.
  ///   - limit: pictures larger than this are not decoded, not even to probe them.
  ///   - keepsFonts: the fonts it carries for ASS subtitles are copied into `info` (`MediaInfo.attachedFonts`).
  public init(
    _ source: String, credentials: Credentials = .none, reconnect: Bool = true,
    cancellation: Cancellation = Cancellation(),
    limit: PictureLimit = .standard, keepsFonts: Bool = true
  ) throws {
    orb_av_log_quiet()
    // File managers and launchers may pass file:// URLs; FFmpeg wants the path, with escapes decoded.
    let source = Self.filePath(source)
    self.source = source
    self.credentials = credentials
    self.cancellation = cancellation
    self.limit = limit
    // A file:// URL still here has escapes that are not UTF-8 (`filePath`): a local file too.
    let isURL = Self.isURL(source) && !source.hasPrefix("file://")
    // A local file is opened by its bytes (`pathBytes`).
    var localPath = isURL ? nil : Self.pathBytes(source)
    // Standard input and named pipes are read through a spool (the player opens a source more than once).
    var spool: Spool?
    if let path = localPath {
      switch Spool.kind(of: source, path: path) {
      case .refused(let reason): throw MediaError(.unplayable, source: source, reason: reason)
      case .pipe(let key):
        let opened = try Spool.of(source, key: key, path: path)
        try opened.waitForData(source: source, cancellation: cancellation)
        spool = opened
      case .standardInputFile:
        localPath = Array("/proc/self/fd/0".utf8CString)
      case .file:
        if let problem = MediaError.checkLocalFile(path, name: source) { throw problem }
      }
    }

    guard let allocated = avformat_alloc_context() else {
      throw MediaError(.unplayable, source: source, reason: "out of memory")
    }
    // The demuxer's reads are watched for stalls (`StallWatch`); it answers the cancellation first. A pipe's reads
    // wait on its writer (`Spool`).
    let watch =
      spool == nil
      ? StallWatch(
        cancellation, context: allocated,
        rule: localPath.map { .scan(StallWatch.scan, path: $0) } ?? .silence(StallWatch.silence))
      : nil
    if let watch { watch.install() } else { cancellation.install(on: allocated) }
    // Freed (with its context) when this scope ends, unless the format context takes it.
    var spoolReader: SpoolReader?
    if let spool {
      guard let reader = SpoolReader(spool, cancellation: cancellation) else {
        avformat_free_context(allocated)
        throw MediaError(.unplayable, source: source, reason: "out of memory")
      }
      allocated.pointee.pb = reader.context
      allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
      // Read as a stream while the header is read (seekable again below): a demuxer that may seek reads on to the end
      // of a source of unknown length (MP4: past its media data for more boxes), which a pipe gives only once all of
      // it has come.
      reader.context?.pointee.seekable = 0
      spoolReader = reader
    }
    // Credentials go to the media's origin only: redirects are resolved first (`RedirectCheck`), and what the
    // demuxer opens beside the first resource loses them when it lies elsewhere (the origin guard).
    var target = source
    var playlist = false
    var sendHeaders = !credentials.headers.isEmpty
    var serverCookies: [RedirectCheck.ServerCookie] = []
    let guardContext = OriginGuardContext(source: source, cancellation: cancellation, credentials: credentials)
    if isURL {
      do {
        let resolved = try RedirectCheck.resolve(source, credentials: credentials, cancellation: cancellation)
        target = resolved.url
        playlist = resolved.isPlaylist
        // Those set by the servers while the redirects were followed (FFmpeg, following them itself, would have
        // kept them) go with the media's requests at its origin, through the guard, beside the jar's.
        serverCookies = resolved.sameOrigin ? resolved.cookies : []
        guardContext.serverCookies.withLock { [serverCookies] in $0 = serverCookies }
        // A file resolved elsewhere keeps them in its options all the same: the origin guard leaves them out of
        // each request off the origin, and a connection sent back to the origin mid-way has them there. A playlist
        // resolved elsewhere goes without its `--header` lines, as it always has (cookies still go by the jar).
        sendHeaders = sendHeaders && (resolved.sameOrigin || !playlist)
      } catch {
        avformat_free_context(allocated)
        throw error
      }
      orb_install_origin_guard(
        allocated, source, credentials.hasToken ? 1 : 0,
        !credentials.headers.isEmpty || credentials.cookies != nil || !serverCookies.isEmpty ? 1 : 0,
        resolveForOriginGuard,
        credentials.cookies == nil && serverCookies.isEmpty ? nil : cookieForOriginGuard, failedForOriginGuard,
        Unmanaged.passUnretained(guardContext).toOpaque())
      let trust = TLSTrust.setting
      orb_origin_guard_trust(allocated, trust.verify ? 1 : 0, trust.caFile)
      // Without its guard (out of memory) the demuxer's own requests could carry the credentials anywhere.
      if allocated.pointee.opaque == nil { sendHeaders = false }
    }
    let guardCopy = allocated.pointee.opaque
    var ctx: UnsafeMutablePointer<AVFormatContext>? = allocated
    var options: OpaquePointer? = nil
    if sendHeaders {
      av_dict_set(&options, "headers", credentials.headers.map { $0 + "\r\n" }.joined(), 0)
    }
    // The guard adds each request's own cookie line (`cookieForOriginGuard`).
    let sendsCookies = guardCopy != nil && (credentials.cookies != nil || !serverCookies.isEmpty)
    if sendHeaders || sendsCookies {
      // HLS keeps connections alive and sends the next segment on one with its copied options, headers included,
      // around the origin guard: with credentials, each request opens afresh.
      av_dict_set(&options, "http_persistent", "0", 0)
    }
    if isURL {
      // A stalled connection becomes an error after 15 s instead of a read that never returns (microseconds).
      av_dict_set(&options, "rw_timeout", "15000000", 0)
      TLSTrust.apply(to: &options)
      // A live HLS playlist that stops changing (a stream that ended without its end mark, a stuck packager) ends
      // after 24 reloads that brought nothing new, half a target duration apart: 12 target durations (72 s for
      // 6 s segments), where FFmpeg's own 1,000 kept the player buffering for hours.
      av_dict_set(&options, "m3u8_hold_counters", "24", 0)
    }
    if reconnect && (source.hasPrefix("http://") || source.hasPrefix("https://")) {
      // Resets, network errors and 5xx in the middle of a stream: FFmpeg reconnects at once and resumes at the byte
      // it had reached, and once more a second later; then the read fails, and the player's own retry rule takes
      // over (tries the host hears of, 1, 2, 4 … s apart, each resuming at the position).
      for (key, value) in [
        ("reconnect", "1"), ("reconnect_streamed", "1"), ("reconnect_on_network_error", "1"),
        ("reconnect_on_http_error", "5xx"), ("reconnect_delay_max", "1"),
      ] {
        av_dict_set(&options, key, value, 0)
      }
    }
    defer { av_dict_free(&options) }
    // A file whose connection carries credentials follows no redirect by itself: it is read through a connection
    // that can be moved where the server sends it later (`MovableConnection`). Not a playlist, whose parts the
    // demuxer asks for with the connection's own options.
    var movable: MovableConnection?
    var openCode: Int32 = 0
    var probed: UnsafePointer<AVInputFormat>?
    if isURL && (sendHeaders || sendsCookies) && !playlist {
      let (connection, code) = MovableConnection.open(format: allocated, url: target, options: options)
      if let connection, let pb = connection.context {
        // What the bytes are, as FFmpeg's open would find out (and rewind). A playlist served under another type or
        // name goes the usual way after all: its demuxer copies the connection's options for the parts.
        let score = av_probe_input_buffer2(pb, &probed, target, nil, 0, 0)
        if score >= 0, let name = probed.map({ String(cString: $0.pointee.name) }),
          name.split(separator: ",").contains(where: { $0 == "hls" || $0 == "dash" })
        {
          connection.discard()
          probed = nil
        } else {
          allocated.pointee.pb = pb
          allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
          movable = connection
        }
      } else {
        avformat_free_context(allocated)
        ctx = nil
        openCode = code < 0 ? code : orb_averror(ENOMEM)
      }
    }
    // On failure FFmpeg frees the context it was given; on success `FormatContext` owns it from the next line.
    if openCode >= 0 {
      openCode =
        localPath.map { path in
          path.withUnsafeBufferPointer { avformat_open_input(&ctx, $0.baseAddress, nil, &options) }
        }
        ?? avformat_open_input(&ctx, target, probed, &options)
    }
    guard openCode >= 0, let opened = ctx else {
      let refused = orb_origin_guard_refused(guardCopy) != 0
      av_free(guardCopy)  // FFmpeg freed the context, not what it pointed at
      if refused { throw MediaError.refusedRedirect(source) }
      if cancellation.isCancelled { throw MediaError(.unplayable, source: source, reason: "cancelled") }
      if let localPath, spool == nil, let problem = MediaError.headerProblem(localPath) {
        throw MediaError(.unplayable, source: source, reason: problem)
      }
      if let refused = guardContext.refusedAccess(source: source) { throw refused }
      throw Self.explained(
        MediaError.fromOpen(openCode, source: source), code: openCode, credentials: credentials,
        cookies: serverCookies, cancellation: cancellation)
    }
    let format = FormatContext(
      opened, cancellation: cancellation, guardContext: guardContext, spoolReader: spoolReader, movable: movable,
      watch: watch)
    // Probing decodes a few frames: a picture over the limit must fail there too, before its memory is taken.
    let streamCount = Int(opened.pointee.nb_streams)
    var streamOptions = [OpaquePointer?](repeating: nil, count: max(1, streamCount))
    for i in 0..<streamCount { av_dict_set(&streamOptions[i], "max_pixels", "\(limit.maxPixels)", 0) }
    // The sizes the container's header gives: a decoder refused by that limit leaves a size of 0 (MJPEG, FFV1, whose
    // size only decoding tells), and the stream was passed over as no video, where it is one too large to show.
    let headerSizes = (0..<streamCount).map { i -> (Int32, Int32) in
      let par = opened.pointee.streams[i]?.pointee.codecpar?.pointee
      return (par?.width ?? 0, par?.height ?? 0)
    }
    let findCode =
      streamCount > 0 ? avformat_find_stream_info(opened, &streamOptions) : avformat_find_stream_info(opened, nil)
    for i in 0..<streamCount { av_dict_free(&streamOptions[i]) }
    for (i, size) in headerSizes.enumerated() where i < Int(opened.pointee.nb_streams) {
      guard let par = opened.pointee.streams[i]?.pointee.codecpar else { continue }
      if par.pointee.codec_type == AVMEDIA_TYPE_VIDEO && (par.pointee.width <= 0 || par.pointee.height <= 0) {
        (par.pointee.width, par.pointee.height) = size
      }
    }
    if findCode < 0 {
      if orb_origin_guard_refused(opened.pointee.opaque) != 0 { throw MediaError.refusedRedirect(source) }
      if let refused = guardContext.refusedAccess(source: source) { throw refused }
      throw Self.explained(
        MediaError.fromOpen(findCode, source: source), code: findCode, credentials: credentials,
        cookies: serverCookies, cancellation: cancellation)
    }
    if let spoolReader {
      opened.pointee.pb.pointee.seekable = AVIO_SEEKABLE_NORMAL
      // Read on from here, not back to an index (an MP4's comes at the end, and each picture is fetched from where
      // the index says): the spool may give back what lies far behind.
      let name = opened.pointee.iformat.map { String(cString: $0.pointee.name) } ?? ""
      if name.split(separator: ",").contains(where: { Self.readStraightThrough.contains(String($0)) }) {
        spoolReader.readsStraightThrough()
      }
      // A length guessed from the bit rate and the bytes seen so far (Ogg, whose length is its last page's time) is
      // wrong for a pipe, of which only the start had come: unknown instead (the host's bar would overflow).
      if opened.pointee.duration_estimation_method == AVFMT_DURATION_FROM_BITRATE {
        opened.pointee.duration = orb_nopts_value()
      }
    }
    var copies: [Int: StreamParameters] = [:]
    for i in 0..<Int(opened.pointee.nb_streams) {
      let st = opened.pointee.streams[i]!
      let type = st.pointee.codecpar.pointee.codec_type
      guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_SUBTITLE,
        let copy = StreamParameters(st)
      else { continue }
      copies[i] = copy
    }
    var described = Self.describe(
      opened, source: source, parameters: copies, limit: limit, keepsFonts: keepsFonts)
    if isURL {
      var elapsed: Int64 = 0
      let bytes = orb_origin_guard_bytes(opened, &elapsed)
      // Below 64 KB, or in under 10 ms, the time is the requests' round trips, not what the network can carry.
      if bytes >= 65536 && elapsed >= 10_000 { described.throughput = bytes * 8 * 1_000_000 / elapsed }
      described.warnings = guardContext.failures.withLock { $0 } + described.warnings
    }
    if described.video.isEmpty && described.audio.isEmpty {
      let sizeless = described.warnings.first { $0.hasPrefix("its video (") }
      throw MediaError(
        .unplayable, source: source,
        reason: sizeless
          ?? (described.subtitles.isEmpty ? "no video or audio stream in it" : "it holds only subtitles"))
    }
    // Sound alone: the picture it carries, if any, for the window (decoded here, before the demuxer reads on).
    coverArt = described.video.isEmpty ? CoverArt.first(in: opened, parameters: copies, limit: limit) : nil
    failuresTold.withLock { $0 = format.requestFailures.count }
    described.cover = coverArt.map { PictureSize(width: $0.width, height: $0.height) }
    info = described
    parameters = copies
    self.format = format
    // A playlist's parts are read through I/O contexts of their own, which the watch does not see.
    let name = opened.pointee.iformat.map { String(cString: $0.pointee.name) } ?? ""
    let parted = playlist || name.split(separator: ",").contains { $0 == "hls" || $0 == "dash" }
    stallWatch = parted ? nil : watch
    // Demuxers that step over what they cannot read to the next place they can (a cluster, a sync byte, a pack).
    let skipping = ["matroska", "webm", "mpegts", "mpeg", "flv"]
    stepsOverDamage = !parted && name.split(separator: ",").contains { skipping.contains(String($0)) }
    let size = isURL ? opened.pointee.pb.map { avio_size($0) } ?? -1 : -1
    servedSize = size > 0 ? size : nil
    address = isURL ? Mutex((target, nil)) : nil
  }

  /// `error` in better words where FFmpeg's code says little: an HTTP(S) "input/output error", or any read of a
  /// network stream that broke off, is asked of the server again (a redirect loop, a server that cannot seek, a
  /// 503 while it restarts, a sign-in that expired). What the server says decides the kind.
  /// `moved`: told where the server now sends the media from, when that is not `connectedAt` (where the connection
  /// reads from) and is a file of the `size` first served; the finding is then the error only if it is told.
  /// `stoppedAt`: the byte the reading broke off at (a server whose copy no longer reaches it has one cut short).
  static func explained(
    _ error: MediaError, code: Int32, credentials: Credentials, cookies: [RedirectCheck.ServerCookie] = [],
    cancellation: Cancellation, connectedAt: String? = nil, size: Int64? = nil, stoppedAt: Int64? = nil,
    moved: ((URL) -> Void)? = nil
  ) -> MediaError {
    let source = error.source
    guard code == orb_averror(EIO) || error.kind == .network else { return error }
    // FFmpeg's "input/output error" for a reading that broke off, where the server looks well: where it broke.
    var unexplained = error
    if code == orb_averror(EIO), let stoppedAt, let size, stoppedAt < size {
      unexplained = MediaError(
        error.kind, source: source, reason: "the server stopped sending it at byte \(stoppedAt) of \(size)")
    } else if code == orb_averror(ETIMEDOUT) {
      // A read that brought nothing for as long as a read may wait (`StallWatch`, FFmpeg's `rw_timeout`).
      let at = stoppedAt.map { byte in " at byte \(byte)" + (size.map { " of \($0)" } ?? "") } ?? ""
      unexplained = MediaError(
        error.kind, source: source, reason: "the server sent nothing for \(Int(StallWatch.silence)) s\(at)")
    }
    guard
      let finding = HTTPDiagnosis.explain(
        source, credentials: credentials, cookies: cookies, cancellation: cancellation, stoppedAt: stoppedAt,
        size: size)
    else { return unexplained }
    if let to = finding.movedTo {
      // Redirects the open had followed already, to where the connection is: the failure lies elsewhere.
      guard let moved, to.absoluteString != connectedAt else { return unexplained }
      if let size, let now = finding.movedSize, now != size {
        return MediaError(
          .unplayable, source: source,
          reason: "the server now sends another file (of \(now) bytes, not \(size)) from \(to.host ?? "elsewhere")")
      }
      moved(to)
    }
    return MediaError(finding.kind, source: source, reason: finding.reason)
  }

  /// Where the connection reads from now; nil for a file.
  var connectedAt: String? { address?.withLock { $0.current } }
  /// Whether the connection can be moved (`MovableConnection`: a network file read with credentials).
  var canMove: Bool { format.movable != nil }

  /// The server now sends the media from `url` (`HTTPDiagnosis.Finding.movedTo`): a connection that can move
  /// (`MovableConnection`, one with credentials) goes there at the next seek (a reconnect is one). One without
  /// credentials follows the redirects itself.
  func relocate(to url: URL) {
    guard format.movable != nil else { return }
    address?.withLock { $0.next = url.absoluteString }
  }

  /// Readies a movable connection for a seek, on the demux thread: clears what failed on it, and moves it where
  /// `relocate` said (once it could; a move that failed is tried again at the next seek).
  func prepareSeek() {
    guard let movable = format.movable else { return }
    movable.clearFailure()
    guard let url = address?.withLock({ $0.next }), movable.move(to: url) else { return }
    address?.withLock { a in
      a.current = url
      if a.next == url { a.next = nil }
    }
  }

  /// The AVStream at `index`.
  func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[index]! }

  /// The video stream to play: the default one, else the first with a known size.
  public var bestVideoStream: VideoStreamInfo? { videoStream(for: .highest) }

  /// The video stream to decode: for an HLS master playlist the variant `choice` asks for (only its segments are then
  /// read: the demuxer skips playlists whose streams are all discarded), else the default stream, else the first.
  public func videoStream(for choice: VariantChoice) -> VideoStreamInfo? {
    let variants = info.video.filter { $0.variantBitrate != nil }
    guard variants.count > 1 else { return info.video.first(where: { $0.isDefault }) ?? info.video.first }
    let sorted = variants.sorted { ($0.variantBitrate!, $0.width) < ($1.variantBitrate!, $1.width) }
    switch choice {
    case .lowest: return sorted.first
    case .highest: return sorted.last
    case .fitting(let width, let height):
      let fits = sorted.first { $0.width >= width || $0.height >= height } ?? sorted.last!
      // No more than the network carried while opening, with a quarter to spare (bit rates vary from segment to
      // segment): a variant it cannot keep up with stalls every few seconds.
      guard let throughput = info.throughput else { return fits }
      let affordable = sorted.last { $0.variantBitrate! <= min(fits.variantBitrate!, throughput * 3 / 4) }
      return affordable ?? sorted.first
    case .atMost(let bits): return sorted.last { $0.variantBitrate! <= bits } ?? sorted.first
    }
  }

  /// The length the streams themselves give, from the container's start to the end of the last, where the
  /// container's own counts from zero instead: an MP4 whose timeline begins late (`-output_ts_offset`, an edit list
  /// that starts with a wait) states the wait in its length, and a 3 s clip read as 16:43 long, then "cut short".
  /// Nil where the container's length stands (it agrees, or a stream does not say its own).
  private static func streamsLength(_ context: UnsafeMutablePointer<AVFormatContext>) -> Double? {
    let ctx = context.pointee
    guard ctx.start_time != orb_nopts_value(), ctx.start_time > 0, ctx.nb_streams > 0 else { return nil }
    let start = Double(ctx.start_time) / Double(AV_TIME_BASE)
    var end = -Double.infinity
    for i in 0..<Int(ctx.nb_streams) {
      let st = ctx.streams[i]!.pointee
      let type = st.codecpar.pointee.codec_type
      guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO,
        (st.disposition & AV_DISPOSITION_ATTACHED_PIC) == 0
      else { continue }
      guard st.start_time != orb_nopts_value(), st.duration > 0, st.duration != orb_nopts_value() else { return nil }
      end = max(end, (Double(st.start_time) + Double(st.duration)) * av_q2d(st.time_base))
    }
    let stated = Double(ctx.duration) / Double(AV_TIME_BASE)
    // Only when the stated length reaches from zero to the streams' end (within a second), not from the start.
    guard end > start, abs(stated - end) < 1, stated - (end - start) > 1 else { return nil }
    return end - start
  }

  private static func describe(
    _ context: UnsafeMutablePointer<AVFormatContext>, source: String, parameters: [Int: StreamParameters],
    limit: PictureLimit, keepsFonts: Bool
  ) -> MediaInfo {
    let ctx = context.pointee
    var result = MediaInfo(source: source, container: String(cString: ctx.iformat.pointee.name))
    if ctx.duration > 0 && ctx.duration != orb_nopts_value() {
      result.durationMs = streamsLength(context).map { Int64($0 * 1000) } ?? ctx.duration / 1000
    }
    if ctx.bit_rate > 0 { result.bitRate = ctx.bit_rate }
    result.title = tag(ctx.metadata, "title")
    result.artist = tag(ctx.metadata, "artist")
    result.chapters = chapters(context)
    // Video streams probing found no picture size in: none of their pictures can be decoded (a recording whose
    // start, with the parameters, is damaged), or they carry none (a broadcast's idle stream).
    var sizeless: [String] = []
    var fonts: [(name: String, bytes: UnsafeBufferPointer<UInt8>)] = []
    for i in 0..<Int(ctx.nb_streams) {
      let st = ctx.streams[i]!
      let par = st.pointee.codecpar.pointee
      let codec = StreamParameters.codecDescription(par)
      let profile = avcodec_profile_name(par.codec_id, par.profile).map { String(cString: $0) }
      let isDefault = (st.pointee.disposition & AV_DISPOSITION_DEFAULT) != 0
      switch par.codec_type {
      case AVMEDIA_TYPE_VIDEO:
        if (st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0 { continue }
        guard par.width > 0 && par.height > 0 else {
          if par.codec_id != AV_CODEC_ID_NONE { sizeless.append(codec) }
          continue
        }
        result.video.append(
          videoInfo(
            context, index: i, st: st, codec: codec, profile: profile, isDefault: isDefault,
            parameters: parameters[i], limit: limit))
      case AVMEDIA_TYPE_AUDIO:
        var layout = [CChar](repeating: 0, count: 64)
        var chLayout = par.ch_layout
        let describeCode = av_channel_layout_describe(&chLayout, &layout, layout.count)
        result.audio.append(
          AudioStreamInfo(
            index: i, codec: codec, profile: profile, channels: Int(par.ch_layout.nb_channels),
            channelLayout: describeCode > 0 ? cString(layout) : nil, sampleRate: Int(par.sample_rate),
            language: tag(st, "language"), title: tag(st, "title"), isDefault: isDefault,
            variantBitrate: tag(st, "variant_bitrate").flatMap { Int64($0) }))
      case AVMEDIA_TYPE_SUBTITLE:
        let descriptor = avcodec_descriptor_get(par.codec_id)
        let isText = descriptor.map { ($0.pointee.props & AV_CODEC_PROP_TEXT_SUB) != 0 } ?? false
        result.subtitles.append(
          SubtitleStreamInfo(
            index: i, codec: codec, language: tag(st, "language"), title: tag(st, "title"), isDefault: isDefault,
            isForced: (st.pointee.disposition & AV_DISPOSITION_FORCED) != 0, isText: isText))
      case AVMEDIA_TYPE_ATTACHMENT:
        // By type, else by name (some muxers write application/octet-stream).
        let mime = tag(st, "mimetype")?.lowercased()
        let ext = tag(st, "filename").map { ($0 as NSString).pathExtension.lowercased() } ?? ""
        guard keepsFonts,
          par.codec_id == AV_CODEC_ID_TTF || par.codec_id == AV_CODEC_ID_OTF
            || mime.map(EmbeddedFont.mimeTypes.contains) == true || ["ttf", "otf", "ttc"].contains(ext),
          let bytes = par.extradata, par.extradata_size > 0
        else { continue }
        fonts.append(
          (tag(st, "filename") ?? "font \(i)", UnsafeBufferPointer(start: bytes, count: Int(par.extradata_size))))
      default:
        continue
      }
    }
    // Fonts are copied only for subtitles that name fonts: ASS and SSA.
    let scripted = result.subtitles.contains { ["ass", "ssa"].contains($0.codec.lowercased()) }
    var left = EmbeddedFont.mostBytes
    for (name, bytes) in fonts where scripted && bytes.count <= left {
      result.attachedFonts.append(EmbeddedFont(name: name, data: Array(bytes)))
      left -= bytes.count
    }
    // A picture alone (a photo, a screenshot: FFmpeg's image demuxers, one file, one picture) lasts
    // `stillSeconds` instead of one 25th of a second, so its window is not gone as soon as it is shown.
    let format = result.container
    if format == "image2" || format.hasSuffix("_pipe"), result.video.count == 1, result.audio.isEmpty {
      result.video[0].frameRate = 1 / stillSeconds
      result.durationMs = Int64(stillSeconds * 1000)
      result.isStill = true
    }
    if result.video.isEmpty, let codec = sizeless.first {
      result.warnings.append("its video (\(codec)) gives no picture size: it cannot be shown (damaged?)")
    }
    return result
  }

  /// How long a still picture is shown: mpv shows one for 1 s, VLC for 10.
  public static let stillSeconds = 5.0

  /// The container's chapters, times from the media's start (the container's start time taken off, as for every
  /// other time), in order; chapters that start past the end or are empty are left out.
  private static func chapters(_ context: UnsafeMutablePointer<AVFormatContext>) -> [ChapterInfo] {
    let ctx = context.pointee
    let origin = ctx.start_time == orb_nopts_value() ? 0 : Double(ctx.start_time) / Double(AV_TIME_BASE)
    let length =
      ctx.duration > 0 && ctx.duration != orb_nopts_value() ? Double(ctx.duration) / Double(AV_TIME_BASE) : nil
    var found: [ChapterInfo] = []
    for i in 0..<Int(ctx.nb_chapters) {
      guard let chapter = ctx.chapters[i]?.pointee else { continue }
      let base = av_q2d(chapter.time_base)
      let start = max(0, Double(chapter.start) * base - origin)
      let end = Double(chapter.end) * base - origin
      guard end > start, length.map({ start < $0 }) ?? true else { continue }
      found.append(
        ChapterInfo(
          startMs: start.wholeMilliseconds, endMs: end.wholeMilliseconds,
          title: tag(chapter.metadata, "title")))
    }
    return found.sorted { $0.startMs < $1.startMs }
  }

  private static func tag(_ st: UnsafeMutablePointer<AVStream>, _ key: String) -> String? {
    tag(st.pointee.metadata, key)
  }

  /// The tag `key` of `metadata` (any case), nil when missing, empty, blank or "und".
  private static func tag(_ metadata: OpaquePointer?, _ key: String) -> String? {
    guard let entry = av_dict_get(metadata, key, nil, 0) else { return nil }
    let value = String(cString: entry.pointee.value).trimmingCharacters(in: .whitespacesAndNewlines)
    return value.isEmpty || value == "und" ? nil : value
  }

  private static func videoInfo(
    _ context: UnsafeMutablePointer<AVFormatContext>, index: Int, st: UnsafeMutablePointer<AVStream>,
    codec: String, profile: String?, isDefault: Bool, parameters: StreamParameters?, limit: PictureLimit
  ) -> VideoStreamInfo {
    let par = st.pointee.codecpar.pointee
    let format = AVPixelFormat(par.format)
    let sar = av_guess_sample_aspect_ratio(context, st, nil)
    let sarValue = sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1
    let rotation = Self.clockwiseRotation(orb_stream_rotation(st))
    // HEVC coded in fields: each decoded picture is a field, two of which make one frame of twice the height
    // (`FieldWeaver`); the stream is described by its frames.
    let fields =
      par.codec_id == AV_CODEC_ID_HEVC ? Self.hevcFields(context, par: par, sar: sar, parameters: parameters) : nil
    let frameHeight = Int(par.height) * (fields != nil ? 2 : 1)
    var displayW = Int((Double(par.width) * sarValue).rounded())
    var displayH = frameHeight
    if rotation % 180 != 0 { swap(&displayW, &displayH) }
    var rate = st.pointee.avg_frame_rate.num > 0 ? st.pointee.avg_frame_rate : st.pointee.r_frame_rate
    if fields != nil { rate = av_mul_q(rate, AVRational(num: 1, den: 2)) }
    let color = ColorMapping.resolve(
      space: par.color_space, range: par.color_range, primaries: par.color_primaries, transfer: par.color_trc,
      format: format, width: Int(par.width), height: frameHeight)
    var mastering = orb_stream_mastering(st).flatMap(ColorMapping.mastering)
    var light = orb_stream_content_light(st).map { (Int($0.pointee.MaxCLL), Int($0.pointee.MaxFALL)) }
    if color.isHDR && (mastering == nil || light == nil), let parameters,
      limit.refusal(width: Int(par.width), height: Int(par.height)) == nil
    {
      // x265 and most HEVC encoders carry HDR10 metadata in SEI messages, which FFmpeg attaches to frames: HEVC's
      // are read from its first packets, other codecs' from a first picture decoded for it.
      let fromStream =
        par.codec_id == AV_CODEC_ID_HEVC
        ? HEVCStaticMetadata.read(context: context, stream: parameters)
        : FirstFrameMetadata.read(context: context, stream: parameters, limit: limit)
      mastering = mastering ?? fromStream?.mastering
      if light == nil, let hdr = fromStream, hdr.maxCLL > 0 || hdr.maxFALL > 0 { light = (hdr.maxCLL, hdr.maxFALL) }
    }
    let depth = av_pix_fmt_desc_get(format).map { Int($0.pointee.comp.0.depth) } ?? 8
    let variant = tag(st, "variant_bitrate").flatMap { Int64($0) }
    return VideoStreamInfo(
      index: index, codec: codec, profile: profile, width: Int(par.width), height: frameHeight,
      frameRate: rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : nil,
      sampleAspectRatio: sar.num > 0 && sar.den > 0 ? "\(sar.num):\(sar.den)" : "1:1",
      rotation: rotation, displayWidth: displayW, displayHeight: displayH,
      pixelFormat: av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "unknown", bitDepth: depth,
      colorPrimaries: String(cString: av_color_primaries_name(par.color_primaries)),
      colorTransfer: String(cString: av_color_transfer_name(par.color_trc)),
      colorMatrix: String(cString: av_color_space_name(par.color_space)),
      colorRange: String(cString: av_color_range_name(par.color_range)),
      effectiveColor: .init(
        matrix: color.matrix.rawValue, range: color.range.rawValue, primaries: color.primaries.rawValue,
        transfer: color.transfer.rawValue),
      mastering: mastering, maxCll: light?.0, maxFall: light?.1,
      frameCount: st.pointee.nb_frames > 0 ? st.pointee.nb_frames / (fields != nil ? 2 : 1) : nil,
      isDefault: isDefault, variantBitrate: variant, fieldOrder: fields ?? Self.fieldOrder(par.field_order),
      codedAsFields: fields != nil)
  }

  /// For an HEVC stream coded in fields (`HEVCFields`), its field order ("tt": top field first, "bb", or "unknown"
  /// when its first picture does not say), from its first packets; nil for one coded in frames. (FFmpeg's own word for
  /// such a stream is "progressive": its parser puts the first picture's structure, top field being 1, where the
  /// field order goes, which has progressive at 1.)
  private static func hevcFields(
    _ context: UnsafeMutablePointer<AVFormatContext>, par: AVCodecParameters, sar: AVRational,
    parameters: StreamParameters?
  ) -> String? {
    guard let parameters, HEVCFields.areFields(width: Int(par.width), height: Int(par.height), sar: sar),
      par.extradata != nil && par.extradata_size > 0,
      HEVCFields.fieldSequence(
        in: HEVCBitstream.nalUnits(Array(UnsafeBufferPointer(start: par.extradata, count: Int(par.extradata_size)))))
    else { return nil }
    var top: Bool?
    HEVCBitstream.firstUnits(context: context, stream: parameters) { units in
      top = HEVCFields.topFieldFirst(in: units)
      return top != nil
    }
    return top.map { $0 ? "tt" : "bb" } ?? "unknown"
  }

  /// FFmpeg's field order in `VideoStreamInfo.fieldOrder`'s words.
  static func fieldOrder(_ order: AVFieldOrder) -> String {
    switch order {
    case AV_FIELD_PROGRESSIVE: return "progressive"
    case AV_FIELD_TT: return "tt"
    case AV_FIELD_BB: return "bb"
    case AV_FIELD_TB: return "tb"
    case AV_FIELD_BT: return "bt"
    default: return "unknown"
    }
  }

  /// FFmpeg's counter-clockwise display-matrix angle as degrees clockwise, snapped to a quarter turn.
  static func clockwiseRotation(_ counterClockwise: Double) -> Int {
    let quarter = Int((-counterClockwise / 90).rounded())
    return ((quarter % 4) + 4) % 4 * 90
  }
}

extension MediaSource {
  /// Whether `source` is read from a pipe (standard input piped in, a named pipe) through which nothing has come
  /// yet: its writer has not begun, or there is none yet, and its opening waits for as long as nothing comes.
  public static func isEmptyPipe(_ source: String) -> Bool {
    guard let path = pathBytes(source), case .pipe(let key) = Spool.kind(of: source, path: path) else { return false }
    return !Spool.hasData(key: key)
  }

  /// Whether `source` names a URL (a scheme, RFC 3986's letters, then `://`) rather than a local path. By hand, not
  /// with a regular expression: NSRegularExpression loads ICU's character data, milliseconds of a launch.
  public static func isURL(_ source: String) -> Bool {
    let bytes = source.utf8
    guard let first = bytes.first, (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) else {
      return false
    }
    for (i, byte) in bytes.enumerated().dropFirst() {
      switch byte {
      case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2B, 0x2E, 0x2D: continue
      case 0x3A: return bytes.dropFirst(i + 1).starts(with: "//".utf8)
      default: return false
      }
    }
    return false
  }
}

extension MediaSource {
  /// Back to the start of `context` after reading its first packets while it opens. A raw elementary stream (.hevc,
  /// .h264: no start time) has no timestamps to seek by: a seek to time 0 read it to its end looking for one, and
  /// nothing played.
  static func rewind(_ context: UnsafeMutablePointer<AVFormatContext>) {
    let untimed = orb_format_has_no_timestamps(context) != 0 || context.pointee.start_time == orb_nopts_value()
    // (A demuxer that cannot seek by bytes refuses, and seeks by time.)
    if !untimed || avformat_seek_file(context, -1, 0, 0, 0, AVSEEK_FLAG_BYTE) < 0 {
      avformat_seek_file(context, -1, Int64.min, 0, 0, 0)
    }
  }
}

/// Decodes the first frame of a stream to read metadata that only frames carry (HDR10 SEI).
enum FirstFrameMetadata {
  static func read(context: UnsafeMutablePointer<AVFormatContext>, stream: StreamParameters, limit: PictureLimit)
    -> HDRMetadata?
  {
    guard let decoder = try? Decoder(stream, threads: 1, limit: limit) else { return nil }
    defer { MediaSource.rewind(context) }
    var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    defer { av_packet_free(&packet) }
    var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
    defer { av_frame_free(&frame) }
    for _ in 0..<200 {
      guard av_read_frame(context, packet) >= 0 else { return nil }
      defer { av_packet_unref(packet) }
      guard packet!.pointee.stream_index == stream.index else { continue }
      _ = avcodec_send_packet(decoder.context, packet)
      if avcodec_receive_frame(decoder.context, frame) >= 0 {
        var hdr = HDRMetadata()
        hdr.mastering = orb_frame_mastering(frame).flatMap(ColorMapping.mastering)
        if let light = orb_frame_content_light(frame) {
          hdr.maxCLL = Int(light.pointee.MaxCLL)
          hdr.maxFALL = Int(light.pointee.MaxFALL)
        }
        return hdr
      }
    }
    return nil
  }
}

/// What the origin guard's callbacks (`orb_install_origin_guard`) work with: the source's cancellation (a quit
/// stops a resolve) and its credentials. Held by the format context, so it outlives every request.
/// Thread-safety: Safe; immutable but for `failures` and `refused`, each behind its Mutex.
final class OriginGuardContext: Sendable {
  /// The media's address: the credentials belong to its origin.
  let source: String
  let cancellation: Cancellation
  let credentials: Credentials
  /// The requests that failed (`failedForOriginGuard`), in words, oldest first; the first 32.
  let failures = Mutex<[String]>([])
  /// The first request the server refused (401, 403): its name and FFmpeg's words for the answer (an HLS key that
  /// needs a sign-in the player does not have).
  let refused = Mutex<(name: String, answer: String)?>(nil)
  /// The cookies the servers set while the media's redirects were followed, for the requests at its origin.
  let serverCookies = Mutex<[RedirectCheck.ServerCookie]>([])
  init(source: String, cancellation: Cancellation, credentials: Credentials) {
    self.source = source
    self.cancellation = cancellation
    self.credentials = credentials
  }

  /// Why an open failed when a part it needed was refused (`refused`): a sign-in, naming the part; nil when none was.
  func refusedAccess(source: String) -> MediaError? {
    guard let (name, answer) = refused.withLock({ $0 }) else { return nil }
    return MediaError(.signIn, source: source, reason: "the server refused access to \(name) (\(answer))")
  }
}

/// Writes `text` and a NUL into `out` (`size` bytes); false when it does not fit.
private func copy(_ text: String, to out: UnsafeMutablePointer<CChar>, size: Int32) -> Bool {
  let bytes = Array(text.utf8)
  guard bytes.count < Int(size) else { return false }
  out.withMemoryRebound(to: UInt8.self, capacity: Int(size)) { o in
    o.update(from: bytes, count: bytes.count)
    o[bytes.count] = 0
  }
  return true
}

/// The origin guard's resolver: `RedirectCheck`'s walk, for a request of the demuxer's with credentials (at the
/// origin, or kept aside elsewhere) that met a redirect. Runs on the demuxer's thread. Returns 1 when the redirects end at the origin, 0 elsewhere, 2 when
/// a token would have gone elsewhere (sign-in), an AVERROR when they cannot be followed.
private let resolveForOriginGuard:
  @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = {
    user, url, out, size in
    guard let user, let url, let out, size > 0 else { return orb_averror(EINVAL) }
    let context = Unmanaged<OriginGuardContext>.fromOpaque(user).takeUnretainedValue()
    do {
      let resolved = try RedirectCheck.resolve(
        String(cString: url), media: context.source, credentials: context.credentials,
        cancellation: context.cancellation)
      guard copy(resolved.url, to: out, size: size) else { return orb_averror(EINVAL) }
      return resolved.sameOrigin ? 1 : 0
    } catch let error as MediaError where error.kind == .signIn {
      return 2
    } catch {
      return orb_averror(EIO)
    }
  }

/// The origin guard hears that a request of the demuxer's failed: an HLS playlist (a rendition or variant, which
/// the demuxer then leaves out) or a segment (skipped). Runs on the thread reading the source.
private let failedForOriginGuard: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int32) -> Void = {
  user, url, code in
  guard let user, let url else { return }
  let context = Unmanaged<OriginGuardContext>.fromOpaque(user).takeUnretainedValue()
  let link = String(cString: url)
  let path = URL(string: link)?.path ?? link
  let name = path.split(separator: "/").last.map(String.init) ?? link
  let why = FFmpegError.message(code)
  // A variant's playlist by its folder too: packagers name every variant's "index.m3u8" (or "prog_index.m3u8").
  let playlist = path.split(separator: "/").suffix(2).joined(separator: "/")
  let words =
    path.lowercased().hasSuffix(".m3u8")
    ? "the stream of \(playlist) could not be loaded (\(why)); playing without it"
    : "\(name) could not be loaded (\(why)); skipped"
  // The demuxer may ask twice for one playlist (an audio-only variant that is also a rendition): said once.
  context.failures.withLock { if $0.count < 32 && !$0.contains(words) { $0.append(words) } }
  if code == orb_averror_http_unauthorized() || code == orb_averror_http_forbidden() {
    context.refused.withLock { if $0 == nil { $0 = (name, why) } }
  }
}

/// The origin guard's cookie line for a request of `url` at the origin: the jar's cookies that match its domain and
/// path. Returns the line's length, 0 when none match.
private let cookieForOriginGuard:
  @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = {
    user, url, out, size in
    guard let user, let url, let out else { return 0 }
    let context = Unmanaged<OriginGuardContext>.fromOpaque(user).takeUnretainedValue()
    let address = String(cString: url)
    guard let parsed = URL(string: address),
      let line = RedirectCheck.ServerCookie.line(
        for: parsed, jar: context.credentials.cookies?.header(for: address),
        set: context.serverCookies.withLock { $0 }),
      copy(line, to: out, size: size)
    else { return 0 }
    return Int32(line.utf8.count)
  }
