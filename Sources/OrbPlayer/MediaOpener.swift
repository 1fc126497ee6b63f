import OrbDecode
import OrbRender

/// Opens what the user named: a built-in `test://` pattern, or a file or URL through FFmpeg.
public enum MediaOpener {
  /// - Parameters:
  ///   - credentials: what requests of a network source carry to its origin (headers, cookies).
  ///   - start: seconds into the media where output begins.
  /// - Throws: `MediaError` naming the source and the reason.
  ///   - audio: decode audio too (files and streams; the built-in patterns are silent).
  ///   - reconnect: retry network failures with backoff (playback) rather than answer at once.
  ///   - cancellation: `cancel()` makes a blocked open or read return at once (quit while connecting).
  ///   - limit: the largest picture the renderer's device can take; larger ones are refused before decoding.
  public static func open(
    _ source: String, credentials: Credentials = .none, start: Double = 0, audio: MediaPipeline.AudioRequest? = nil,
    reconnect: Bool = true, cancellation: Cancellation = Cancellation(), limit: PictureLimit = .standard,
    variant: VariantChoice = .highest, deinterlace: DeinterlaceMode = .auto
  ) throws -> FrameSource {
    if TestPatternSource.isTestURL(source) {
      let pattern = try TestPatternSource(url: source)
      if start > 0 { pattern.seek(to: start) }
      return pattern
    }
    return try MediaPipeline(
      source: source, credentials: credentials, start: start, audio: audio, reconnect: reconnect,
      cancellation: cancellation, limit: limit, variant: variant, deinterlace: deinterlace)
  }

  /// The stream description for `--probe`, without starting any decode thread.
  public static func probe(_ source: String, credentials: Credentials = .none) throws -> MediaInfo {
    if TestPatternSource.isTestURL(source) { return try TestPatternSource(url: source).info }
    return try MediaSource(source, credentials: credentials, reconnect: false).info
  }
}
