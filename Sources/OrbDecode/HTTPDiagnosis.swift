import CFFmpeg
import Foundation

/// Explains an HTTP(S) failure FFmpeg reports only as "input/output error": it asks the server for the first two
/// bytes itself, over FFmpeg's tcp/tls protocols, following no redirect on its own, and says what it saw (a
/// redirect loop, a server that ignores range requests). Request headers (the bearer token) go only to the origin
/// the user named, never to a host a redirect points at.
/// Thread-safety: stateless; safe from any thread.
enum HTTPDiagnosis {
  struct Answer {
    var status: Int
    /// Header names in lower case.
    var headers: [String: String]
    /// Each `Set-Cookie` line's value (the one header that may come more than once).
    var setCookies: [String] = []
    /// The first bytes of the body's content (of a `text/html` answer: `request` reads them only there).
    var body: [UInt8] = []
    /// Its body comes in chunks, each after a line with its size.
    var isChunked: Bool { headers["transfer-encoding"]?.lowercased().contains("chunked") == true }

    /// Its Content-Type, in lower case.
    var contentType: String? { headers["content-type"]?.lowercased() }
    /// Seconds the server asks to be left before it is asked again (`Retry-After`: a number of seconds, or a date),
    /// nil when it asks nothing.
    func retryAfter(now: Date = Date()) -> Double? {
      guard let value = headers["retry-after"]?.trimmingCharacters(in: .whitespaces) else { return nil }
      if let seconds = Double(value), seconds.isFinite { return max(0, seconds) }
      let format = DateFormatter()
      format.locale = Locale(identifier: "en_US_POSIX")
      format.timeZone = TimeZone(identifier: "GMT")
      format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
      return format.date(from: value).map { max(0, $0.timeIntervalSince(now)) }
    }
    /// Its Content-Type says it is a web page (`text/html`); its first bytes tell whether it is (`isWebPage`).
    var isLabelledPage: Bool { contentType?.hasPrefix("text/html") == true }
    /// A web page (`text/html`) where media was expected. Not media a server labels so by mistake (a folder of
    /// films on a web server that has no type for .mkv), which mpv and VLC play: its first byte, after white space
    /// or a byte-order mark, is not markup's "<". A body that says nothing either way is taken for a page.
    var isWebPage: Bool {
      guard isLabelledPage else { return false }
      let blank: Set<UInt8> = [0x09, 0x0A, 0x0D, 0x20, 0xEF, 0xBB, 0xBF, 0xFE, 0xFF]
      guard let first = body.first(where: { !blank.contains($0) }) else { return true }
      return first == UInt8(ascii: "<")
    }
    /// The whole length of the file its Content-Range gives ("bytes 0-1/N", "bytes */N"), when it gives one.
    var totalLength: Int64? { headers["content-range"].flatMap { $0.split(separator: "/").last }.flatMap { Int64($0) } }
  }

  /// What a web page (`text/html`) where media was expected is called.
  static let webPageReason = "the server sent a web page, not a video"
  /// Hops followed before a chain of redirects is called a loop.
  static let maxRedirects = 10
  /// The whole diagnosis gives up after this many seconds (a server that trickles its answer cannot hold it).
  static let deadlineSeconds = 10.0

  /// What `explain` found: the kind of failure the family's rules give it and the reason in words.
  struct Finding {
    var kind: MediaError.Kind
    var reason: String
    /// Where the media is now: the end of redirects that answers with the part asked for. A connection that carries
    /// credentials follows no redirect by itself (the player resolves them, so that the credentials stay at their
    /// origin), so one that broke off and is now sent elsewhere cannot reconnect until it is told where.
    var movedTo: URL? = nil
    /// The whole length of what is there (its answer's Content-Range), when it said.
    var movedSize: Int64? = nil
  }

  /// What went wrong with `url`, or nil when the server looks fine at `url` itself (the failure lies elsewhere) or
  /// `url` is not HTTP(S). `stoppedAt`: the byte a read of it broke off at, before the `size` it was first served
  /// with: a server that no longer has that byte (416) has a copy cut short.
  /// `cookies`: those the servers set while the open followed the redirects (more may be set on the way again).
  static func explain(
    _ url: String, credentials: Credentials, cookies: [RedirectCheck.ServerCookie] = [], cancellation: Cancellation,
    stoppedAt: Int64? = nil, size: Int64? = nil
  ) -> Finding? {
    guard let start = URL(string: url), ["http", "https"].contains(start.scheme?.lowercased() ?? "") else {
      return nil
    }
    let origin = Self.origin(start)
    let deadline = Date(timeIntervalSinceNow: deadlineSeconds)
    var current = url
    var cookies = cookies
    for _ in 0...maxRedirects {
      guard let target = URL(string: current), !cancellation.isCancelled, Date() < deadline else { return nil }
      let sameOrigin = Self.origin(target) == origin
      let headers = RedirectCheck.ServerCookie.headers(
        sameOrigin ? credentials.lines(for: current) : [], for: target, set: cookies)
      guard let answer = ask(target, headers: headers, cancellation: cancellation, deadline: deadline) else {
        return nil
      }
      RedirectCheck.ServerCookie.keep(answer, from: target, in: &cookies)
      switch answer.status {
      case 301, 302, 303, 307, 308:
        guard let location = answer.headers["location"], let next = URL(string: location, relativeTo: target)
        else { return Finding(kind: .unplayable, reason: "the server redirects without saying where") }
        // The rule of the open (`RedirectCheck`): with a token, another origin is a sign-in service turning it away.
        if credentials.hasToken && Self.origin(next.absoluteURL) != origin {
          return Finding(kind: .signIn, reason: Self.sentOnReason(next.absoluteURL, from: target))
        }
        current = next.absoluteString
      case 200:
        if answer.isWebPage {
          return Finding(kind: .unplayable, reason: webPageReason)
        }
        // Asked for two bytes and sent all of them: it cannot serve the parts a seek needs.
        return Finding(
          kind: .unplayable,
          reason: "the server cannot seek in it (it ignores range requests), and this file needs that")
      case 401, 403: return Finding(kind: .signIn, reason: "the server refused access (\(answer.status))")
      case 404, 410: return Finding(kind: .missing, reason: "the server no longer has it (\(answer.status))")
      case 500...599, 429:  // as RedirectCheck says it
        return Finding(kind: .network, reason: "server returned \(answer.status)")
      case 206:
        // Where the media is (here, or at the end of redirects), a reading that broke off before the length first
        // served is asked for its byte: the server's copy may no longer reach it.
        if let stoppedAt, let size, stoppedAt < size,
          let there = ask(
            target, headers: sameOrigin ? credentials.lines(for: current) : [], cancellation: cancellation,
            deadline: deadline, range: "bytes=\(stoppedAt)-\(stoppedAt + 1)"),
          there.status == 416
        {
          return Finding(
            kind: .unplayable, reason: Self.cutShortReason(has: there.totalLength ?? stoppedAt, said: size))
        }
        if current == url { return nil }
        // The media is there, at the end of redirects the connection could not take (unless it is a page).
        if answer.isWebPage {
          return Finding(kind: .unplayable, reason: webPageReason)
        }
        return Finding(
          kind: .network, reason: "the server now sends it from \(hostAndPort(target) ?? "another address")",
          movedTo: target, movedSize: answer.totalLength)
      default:
        return nil
      }
    }
    return Finding(kind: .unplayable, reason: "too many redirects (more than \(maxRedirects))")
  }

  /// Why a redirect from `from` to `next`, another origin, is not followed with a token: the host, and the port when
  /// the address names one (127.0.0.1:8080 is another origin than 127.0.0.1); with the scheme when only that
  /// changed (http://h:8080 to https://h:8080).
  static func sentOnReason(_ next: URL, from: URL) -> String {
    var host = hostAndPort(next) ?? "another host"
    if hostAndPort(next)?.lowercased() == hostAndPort(from)?.lowercased(), let scheme = next.scheme?.lowercased() {
      host = "\(scheme)://\(host)"
    }
    return "the server sent the request on to \(host), as a sign-in page does; it is not followed with the credentials"
  }

  /// The host of `url`, with the port when the address names one.
  private static func hostAndPort(_ url: URL) -> String? { url.host.map { h in url.port.map { "\(h):\($0)" } ?? h } }

  /// "scheme://host:port", what credentials belong to.
  static func origin(_ url: URL) -> String {
    "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(port(url))"
  }

  private static func port(_ url: URL) -> Int { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }

  /// The server's copy of a file ends at `has` bytes, before the `said` it was served with.
  static func cutShortReason(has: Int64, said: Int64) -> String {
    "the server now has \(has) bytes of it, not the \(said) it first said: it seems cut short"
  }

  /// One `GET` of `range` (two bytes by default); the status and headers of the answer, or nil past `deadline`.
  static func ask(
    _ url: URL, headers: [String], cancellation: Cancellation, deadline: Date, range: String = "bytes=0-1"
  ) -> Answer? {
    if case .answer(let answer) = request(
      url, headers: headers, cancellation: cancellation, deadline: deadline, range: range)
    {
      return answer
    }
    return nil
  }

  /// What one request came to.
  enum Reply {
    case answer(Answer)
    /// Connected, but no answer that could be read (a reset, not HTTP).
    case noAnswer
    /// Connected and asked, but nothing came back in time: a server that takes connections and hangs.
    case silent
    /// No connection: FFmpeg's code (refused, a name that does not resolve, a timeout).
    case cannotConnect(Int32)
  }

  /// An IPv6 literal in brackets, as it goes in a transport URL and a Host header; any other host as it is.
  private static func bracketed(_ host: String) -> String {
    host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
  }

  /// Connects to `url`'s server over FFmpeg's tcp protocol (tls for https, its certificate checked as `TLSTrust`
  /// says, or not at all when not `checked`) into `opened`, sending nothing; each read waits at most `within`
  /// seconds. FFmpeg's code (0 when connected).
  static func connect(
    _ url: URL, into opened: inout UnsafeMutablePointer<AVIOContext>?, cancellation: Cancellation, within: Double,
    checked: Bool = true
  ) -> Int32 {
    guard let scheme = url.scheme?.lowercased(), let host = url.host else { return orb_averror(EINVAL) }
    let transport = "\(scheme == "https" ? "tls" : "tcp")://\(bracketed(host)):\(port(url))"
    var interrupt = AVIOInterruptCB()
    cancellation.fill(&interrupt)
    var options: OpaquePointer? = nil
    // (tcp's `timeout` is its connect and read timeout both.)
    av_dict_set(&options, "rw_timeout", "\(Int64(within * 1e6))", 0)
    av_dict_set(&options, "timeout", "\(Int64(within * 1e6))", 0)
    if scheme == "https" {
      TLSTrust.apply(to: &options)
      if !checked { av_dict_set(&options, "tls_verify", "0", 0) }
    }
    defer { av_dict_free(&options) }
    return avio_open2(&opened, transport, AVIO_FLAG_READ_WRITE, &interrupt, &options)
  }

  /// One `GET` of `range` of `url` (two bytes by default), credentials as given in `headers`; each read waits at
  /// most `answerWithin` seconds.
  static func request(
    _ url: URL, headers: [String], cancellation: Cancellation, deadline: Date, answerWithin: Double = 5,
    range: String = "bytes=0-1"
  ) -> Reply {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host,
      let parts = URLComponents(url: url, resolvingAgainstBaseURL: true)
    else {
      return .noAnswer
    }
    let hostName = bracketed(host)
    let hostHeader = url.port.map { "\(hostName):\($0)" } ?? hostName
    var opened: UnsafeMutablePointer<AVIOContext>?
    let connected = connect(url, into: &opened, cancellation: cancellation, within: answerWithin)
    guard connected >= 0, let io = opened else { return .cannotConnect(connected < 0 ? connected : orb_averror(EIO)) }
    defer { avio_closep(&opened) }
    // As the URL spells it: escapes kept, a trailing slash kept.
    let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
    let query = parts.percentEncodedQuery.map { "?\($0)" } ?? ""
    var request = "GET \(path)\(query) HTTP/1.1\r\nHost: \(hostHeader)\r\nRange: \(range)\r\nConnection: close\r\n"
    request += "User-Agent: orb-player\r\n"
    for header in headers { request += header + "\r\n" }
    request += "\r\n"
    let bytes = Array(request.utf8)
    avio_write(io, bytes, Int32(bytes.count))
    avio_flush(io)
    var response = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    var head: (answer: Answer, end: Int)?
    while response.count < 32768 && Date() < deadline {
      // Once the head has come, only a web page's first bytes are waited for (`Answer.isWebPage`).
      if let (answer, end) = head {
        let sent = answer.headers["content-length"].flatMap { Int($0) }
        let wanted = min(Self.sniffedBytes, sent ?? Self.sniffedBytes)
        let body = Self.content(response[end...], chunked: answer.isChunked)
        if !answer.isLabelledPage || body.count >= wanted { break }
      }
      let n = avio_read_partial(io, &buffer, Int32(buffer.count))
      if n <= 0 {
        if response.isEmpty && (n == orb_averror(ETIMEDOUT) || Date() >= deadline) { return .silent }
        break
      }
      response += buffer[0..<Int(n)]
      if head == nil,
        let end = response.indices.dropLast(3).first(where: { i in
          response[i] == 13 && response[i + 1] == 10 && response[i + 2] == 13 && response[i + 3] == 10
        })
      {
        guard let answer = Self.parseHead(response[..<end]) else { return .noAnswer }
        head = (answer, end + 4)
      }
    }
    guard let (parsed, end) = head ?? Self.parseHead(response[...]).map({ ($0, response.count) }) else {
      return .noAnswer
    }
    var answer = parsed
    answer.body = Array(Self.content(response[end...], chunked: answer.isChunked).prefix(Self.sniffedBytes))
    return .answer(answer)
  }

  /// The first bytes of content in `body` as it came: in a chunked answer (a page an application server writes as it
  /// goes), after the first chunk's size line.
  static func content(_ body: ArraySlice<UInt8>, chunked: Bool) -> ArraySlice<UInt8> {
    guard chunked else { return body }
    guard let line = body.indices.dropLast().first(where: { body[$0] == 13 && body[$0 + 1] == 10 }) else {
      return []
    }
    return body[(line + 2)...]
  }

  /// How many bytes of a web page's body `request` reads to tell it from media.
  static let sniffedBytes = 2

  /// The status line and header fields of an answer's head (without the blank line that ends it).
  private static func parseHead(_ bytes: ArraySlice<UInt8>) -> Answer? {
    let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = lines.first?.split(separator: " ") ?? []
    guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
      return nil
    }
    var fields: [String: String] = [:]
    var cookies: [String] = []
    for line in lines.dropFirst() {
      if line.isEmpty { break }
      guard let colon = line.firstIndex(of: ":") else { continue }
      let name = line[..<colon].lowercased()
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      fields[name] = value
      if name == "set-cookie" { cookies.append(value) }
    }
    return Answer(status: status, headers: fields, setCookies: cookies)
  }
}
