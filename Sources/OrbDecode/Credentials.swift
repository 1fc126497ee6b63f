import Foundation

/// What the requests of a launched source may carry, and only to the media's own origin (scheme, host, port): header
/// lines (`--header`, and the bearer token as `Authorization`) and a cookie jar (`--cookies-file`), whose cookies go
/// with a request only when its URL matches their domain and path, matched anew for every request (the first, each
/// redirect hop, every HLS playlist, key and segment). A file a person opens or drops has none.
/// Thread-safety: a value.
public struct Credentials: Sendable, Equatable {
  /// "Name: value" lines.
  public var headers: [String]
  public var cookies: CookieFile?

  public init(headers: [String] = [], cookies: CookieFile? = nil) {
    self.headers = headers
    self.cookies = cookies
  }

  /// Nothing to send.
  public static let none = Credentials()

  /// A bearer token (a launch by the media server): a redirect off the origin is then a sign-in, not followed.
  public var hasToken: Bool { headers.contains { $0.lowercased().hasPrefix("authorization:") } }

  /// The header lines of a request of `url` at the media's origin: the headers, and one `Cookie` line of the
  /// cookies that match `url` (none when none do).
  public func lines(for url: String) -> [String] {
    headers + (cookies?.header(for: url).map { [$0] } ?? [])
  }
}
