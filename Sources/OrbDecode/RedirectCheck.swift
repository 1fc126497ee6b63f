import CFFmpeg
import Foundation

/// Keeps credentials with their origin before FFmpeg opens an HTTP(S) source. FFmpeg's http protocol follows
/// redirects itself and sends its `headers` option (the bearer token, `--header` lines) to wherever a redirect
/// points; so the player first asks the server itself (two bytes, following no redirect on its own, credentials only
/// to the origin the user named) and opens the address the redirects end at:
/// - with a token (a launch by the media server), a redirect to another origin is `sign-in` and is not followed: it is
///   how a sign-in service turns a request away, and the family's other players treat it so;
/// - without one, redirects are followed, and the credentials stay behind once they leave the origin;
/// - a web page (`text/html`) where media was expected is `sign-in` with credentials, else `unplayable`;
/// - a 5xx is `network`, for the player's retry rule (FFmpeg would retry it on its own, silently).
/// A server that cannot be reached (refused, a name that does not resolve) is `network`; one that takes the connection
/// and sends nothing for `answerSeconds` ends the try, as FFmpeg's reads would, in words of its own.
/// Resources a demuxer opens beside the first (HLS playlists and segments) are guarded in C
/// (`orb_install_origin_guard`): their request loses the headers when its origin is not the media's, and takes the
/// cookies that match its own URL.
/// Thread-safety: stateless; safe from any thread.
enum RedirectCheck {
  /// Where the redirects of an address end.
  struct Resolved {
    /// The address to open.
    var url: String
    /// Whether the credentials may go with it.
    var sameOrigin: Bool
    /// What the server said it sends there (its Content-Type, in lower case), when it answered.
    var contentType: String? = nil
    /// The cookies the servers set on the way (a sign-in's session, set by the redirect to the media).
    var cookies: [ServerCookie] = []

    /// Whether it is a playlist or manifest (HLS, DASH) rather than the media itself, by its type or name: the
    /// demuxer opens the media's parts itself.
    var isPlaylist: Bool {
      let path = URL(string: url)?.path.lowercased() ?? ""
      return [".m3u8", ".m3u", ".mpd"].contains { path.hasSuffix($0) }
        || ["mpegurl", "dash+xml"].contains { contentType?.contains($0) == true }
    }
  }

  /// How long a server may take to begin its answer: as long as FFmpeg's reads may wait (`rw_timeout`), so that
  /// a server slow to start (a transcode spinning up) is not given up on sooner than by FFmpeg itself.
  static let answerSeconds = 15.0

  /// A cookie a server set while the redirects were followed.
  /// Thread-safety: a value.
  struct ServerCookie: Equatable, Sendable {
    /// "name=value".
    var pair: String
    /// The host it goes back to (and that host's subdomains when the server named a parent domain).
    var domain: String
    var path: String
    /// Sent over HTTPS only.
    var secure: Bool

    /// A `Set-Cookie` value that `url`'s server sent: nil when it has no name. A domain the server names may only
    /// widen it to a parent of its own host (RFC 6265), never move it elsewhere, nor to a name without a dot (a
    /// top-level domain), nor for a host that is an address; no path is the whole site.
    init?(_ value: String, from url: URL) {
      let parts = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let pair = parts.first, let equals = pair.firstIndex(of: "="), equals != pair.startIndex,
        let host = url.host?.lowercased()
      else { return nil }
      let given = { (name: String) in
        parts.dropFirst().first { $0.lowercased().hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
      }
      let named = given("domain").map { ($0.hasPrefix(".") ? String($0.dropFirst()) : $0).lowercased() }
      let address = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
      self.pair = pair
      domain =
        named.flatMap { !address && $0.contains(".") && (host == $0 || host.hasSuffix("." + $0)) ? $0 : nil } ?? host
      path = given("path").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/"
      secure = parts.dropFirst().contains { $0.lowercased() == "secure" }
    }

    /// Whether it goes with a request of `url`.
    func matches(_ url: URL) -> Bool {
      guard let host = url.host?.lowercased() else { return false }
      if secure && url.scheme?.lowercased() != "https" { return false }
      let requestPath = url.path.isEmpty ? "/" : url.path
      return (host == domain || host.hasSuffix("." + domain)) && requestPath.hasPrefix(path)
    }

    /// `lines` (a request's credentials) with their `Cookie` line, if any, and these cookies that go with a request
    /// of `url` in one `Cookie` line.
    static func headers(_ lines: [String], for url: URL, set: [ServerCookie]) -> [String] {
      let jar = lines.first { $0.lowercased().hasPrefix("cookie:") }
      return lines.filter { $0 != jar } + [line(for: url, jar: jar, set: set)].compactMap { $0 }
    }

    /// Keeps the cookies `answer` (from `url`) sets in `cookies`, each in place of one of the same name.
    static func keep(_ answer: HTTPDiagnosis.Answer, from url: URL, in cookies: inout [ServerCookie]) {
      for cookie in answer.setCookies.compactMap({ ServerCookie($0, from: url) }) {
        cookies.removeAll { $0.pair.prefix { $0 != "=" } == cookie.pair.prefix { $0 != "=" } }
        cookies.append(cookie)
      }
    }

    /// The `Cookie` line of a request of `url`: the jar's line (`jar`, with its name) and these cookies that go
    /// with it, together; nil when there is none.
    static func line(for url: URL, jar: String?, set: [ServerCookie]) -> String? {
      let fromJar = jar.map { String($0.dropFirst("cookie:".count)).trimmingCharacters(in: .whitespaces) }
      let pairs = [fromJar].compactMap { $0 }.filter { !$0.isEmpty } + set.filter { $0.matches(url) }.map(\.pair)
      return pairs.isEmpty ? nil : "Cookie: " + pairs.joined(separator: "; ")
    }
  }

  /// Whether the system finds an address for the host name `host` (an IPv6 literal in brackets or not).
  static func nameResolves(_ host: String) -> Bool {
    var found: UnsafeMutablePointer<addrinfo>?
    let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    guard !name.isEmpty, getaddrinfo(name, nil, nil, &found) == 0 else { return false }
    freeaddrinfo(found)
    return true
  }

  /// The address to open for `url`, and whether the credentials may go with it. `media`: the media's own address,
  /// whose origin the credentials belong to, when `url` is a part of it (a request of the demuxer's, which may start
  /// elsewhere); by default `url` is the media.
  /// - Throws: `MediaError` `sign-in` or `unplayable` as above.
  static func resolve(_ url: String, media: String? = nil, credentials: Credentials, cancellation: Cancellation) throws
    -> Resolved
  {
    guard let start = URL(string: url), ["http", "https"].contains(start.scheme?.lowercased() ?? "") else {
      // Not to be asked here; a part of the media's (a request of the demuxer's) is not taken for the origin.
      return Resolved(url: url, sameOrigin: media == nil)
    }
    let origin = HTTPDiagnosis.origin(media.flatMap { URL(string: $0) } ?? start)
    let hasToken = credentials.hasToken
    let hasCredentials = !credentials.lines(for: url).isEmpty
    let deadline = Date(timeIntervalSinceNow: max(HTTPDiagnosis.deadlineSeconds, Self.answerSeconds))
    var current = start
    var cookies: [ServerCookie] = []
    for _ in 0...HTTPDiagnosis.maxRedirects {
      let sameOrigin = HTTPDiagnosis.origin(current) == origin
      let answer: HTTPDiagnosis.Answer
      // Cookies set on the way go back to where they belong, beside the jar's.
      let headers = ServerCookie.headers(
        sameOrigin ? credentials.lines(for: current.absoluteString) : [], for: current, set: cookies)
      switch HTTPDiagnosis.request(
        current, headers: headers,
        cancellation: cancellation, deadline: deadline, answerWithin: Self.answerSeconds)
      {
      case .answer(let a):
        answer = a
        ServerCookie.keep(a, from: current, in: &cookies)
      case .cannotConnect(let code):
        // FFmpeg's tcp protocol fails with EIO only when the name does not resolve (tls says EIO for more: asked).
        if code == orb_averror(EIO)
          && (current.scheme?.lowercased() == "http" || !Self.nameResolves(current.host ?? ""))
        {
          throw MediaError(
            .network, source: url, reason: "the server's name cannot be found (\(current.host ?? "no host"))")
        }
        if code == orb_averror(EIO), current.scheme?.lowercased() == "https",
          let reason = TLSTrust.untrustedCertificate(current, cancellation: cancellation)
        {
          var error = MediaError(.network, source: url, reason: reason)
          error.final = true
          throw error
        }
        // Refused, unresolvable, timed out: the player's retry rule decides (FFmpeg would retry some silently).
        let error = MediaError.fromOpen(code, source: url)
        throw error.kind == .unplayable ? MediaError(.network, source: url, reason: error.reason) : error
      case .silent:
        // FFmpeg would wait as long again, up to three times (it reconnects on a network error): this try is over.
        throw MediaError(
          .network, source: url,
          reason: "the server took the connection but did not answer within \(Int(Self.answerSeconds)) s")
      case .noAnswer:
        // Not known where this leads: with credentials FFmpeg must not be let follow it (it would take them along).
        guard !hasCredentials else {
          throw MediaError(.network, source: url, reason: "the server gave no answer that could be read")
        }
        return Resolved(url: current.absoluteString, sameOrigin: sameOrigin)
      }
      switch answer.status {
      case 301, 302, 303, 307, 308:
        guard let location = answer.headers["location"],
          let next = URL(string: location, relativeTo: current)?.absoluteURL
        else {
          if hasCredentials {
            throw MediaError(
              .unplayable, source: url, reason: "the server redirects to an address that cannot be read")
          }
          return Resolved(url: current.absoluteString, sameOrigin: sameOrigin)
        }
        // (Only a redirect from the origin: elsewhere the token was not sent.)
        if hasToken && sameOrigin && HTTPDiagnosis.origin(next) != origin {
          throw MediaError(.signIn, source: url, reason: HTTPDiagnosis.sentOnReason(next, from: current))
        }
        current = next
      case 500...599, 429:
        // Worth trying again (a server restarting, a gateway timing out, one with too many requests): the player's
        // retry rule decides when, no sooner than the server asked.
        var error = MediaError(
          .network, source: url,
          reason: "server returned \(answer.status)\(answer.status == 429 ? " (too many requests)" : "")")
        error.retryAfter = answer.retryAfter()
        throw error
      case 200, 206:
        if answer.isWebPage {
          throw MediaError(
            !hasCredentials || !sameOrigin ? .unplayable : .signIn, source: url,
            reason: HTTPDiagnosis.webPageReason)
        }
        return Resolved(
          url: current.absoluteString, sameOrigin: sameOrigin, contentType: answer.contentType, cookies: cookies)
      default:
        return Resolved(url: current.absoluteString, sameOrigin: sameOrigin, cookies: cookies)
      }
    }
    throw MediaError(.unplayable, source: url, reason: "too many redirects (more than \(HTTPDiagnosis.maxRedirects))")
  }
}
