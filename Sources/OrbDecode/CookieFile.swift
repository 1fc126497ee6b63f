import Foundation

/// Cookies in the Netscape format that curl, wget and mpv read (`--cookies-file`): a tab-separated line a cookie,
/// `domain  include-subdomains  path  secure  expires  name  value`, `#` lines comments except `#HttpOnly_` ones.
/// A request gets the cookies whose domain and path match its URL (secure ones only over HTTPS, expired ones never),
/// as one `Cookie` header; the player's origin rule then keeps that header with the media's origin.
/// Thread-safety: a value type.
public struct CookieFile: Sendable, Equatable {
  public struct Cookie: Sendable, Equatable {
    public var domain: String
    public var includeSubdomains: Bool
    public var path: String
    public var secure: Bool
    /// Unix seconds; 0 for a session cookie.
    public var expires: Int64
    public var name: String
    public var value: String
  }

  public var cookies: [Cookie]
  /// Lines that could not be read, as "line N", for one warning.
  public var badLines: [Int]

  /// Reads `text`.
  public init(text: String) {
    var cookies: [Cookie] = []
    var bad: [Int] = []
    for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      var line = raw.trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
      if line.hasPrefix("#HttpOnly_") {
        line.removeFirst("#HttpOnly_".count)
      } else if line.hasPrefix("#") || line.trimmingCharacters(in: .whitespaces).isEmpty {
        continue
      }
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard fields.count == 7, !fields[0].isEmpty, !fields[5].isEmpty, let expires = Int64(fields[4]) else {
        bad.append(i + 1)
        continue
      }
      cookies.append(
        Cookie(
          domain: fields[0].lowercased(), includeSubdomains: fields[1].uppercased() == "TRUE",
          path: fields[2].isEmpty ? "/" : fields[2], secure: fields[3].uppercased() == "TRUE", expires: expires,
          name: fields[5], value: fields[6]))
    }
    self.cookies = cookies
    badLines = bad
  }

  /// Reads the file at `path`.
  /// - Throws: `MediaError` naming the file when it cannot be read.
  public init(path: String) throws {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
      throw MediaError(.unplayable, source: path, reason: "the cookies file cannot be read")
    }
    self.init(text: text)
  }

  /// The `Cookie` header line for a request of `url` at `now`, or nil when no cookie matches.
  public func header(for url: String, now: Date = Date()) -> String? {
    guard let parts = URL(string: url), let host = parts.host?.lowercased(),
      let components = URLComponents(url: parts, resolvingAgainstBaseURL: true)
    else { return nil }
    let https = parts.scheme?.lowercased() == "https"
    // As the URL spells it: a trailing slash and escapes kept, as the cookie's path is compared.
    let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    let time = Int64(now.timeIntervalSince1970)
    let matching = cookies.filter { c in
      let bare = c.domain.hasPrefix(".") ? String(c.domain.dropFirst()) : c.domain
      let domainMatches =
        host == bare || ((c.includeSubdomains || c.domain.hasPrefix(".")) && host.hasSuffix("." + bare))
      let pathMatches =
        path == c.path
        || (path.hasPrefix(c.path) && (c.path.hasSuffix("/") || path.dropFirst(c.path.count).first == "/"))
      return domainMatches && pathMatches && (!c.secure || https) && (c.expires == 0 || c.expires > time)
    }
    guard !matching.isEmpty else { return nil }
    return "Cookie: " + matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
  }
}
