import CFFmpeg

/// An FFmpeg call that failed: which call and FFmpeg's code.
/// Thread-safety: a value type; safe to pass between threads.
public struct FFmpegError: Error, CustomStringConvertible, Sendable {
  public let call: String
  public let code: Int32

  public var description: String { "\(call): \(FFmpegError.message(code))" }

  /// FFmpeg's own text for an error code.
  public static func message(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    orb_av_strerror(code, &buffer, buffer.count)
    return cString(buffer)
  }

  public static let eof = orb_averror_eof()
  public static let again = orb_averror(EAGAIN)
  public static let invalidData = orb_averror_invaliddata()
}

/// The outcome of an FFmpeg call whose "try again" and "end of stream" results are not failures.
public enum AVStep: Sendable {
  case ok(Int32)
  case again
  case eof
}

/// The one funnel for FFmpeg results: non-negative codes pass through, EAGAIN and EOF become values,
/// anything else throws an `FFmpegError` naming `call`.
@discardableResult
public func av(_ code: Int32, _ call: @autoclosure () -> String) throws -> AVStep {
  if code >= 0 { return .ok(code) }
  if code == FFmpegError.again { return .again }
  if code == FFmpegError.eof { return .eof }
  throw FFmpegError(call: call(), code: code)
}

/// The text of a NUL-terminated C string held in a Swift array.
func cString(_ buffer: [CChar]) -> String {
  String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
