import CFFmpeg

/// How a network file that carries credentials is read: through a connection that can be moved to another address
/// while the demuxer keeps reading the same context.
///
/// FFmpeg's http protocol sends every seek and reconnect to the address it was opened at, and with credentials it
/// follows no redirect (the player resolves them itself, so that the credentials stay at their origin). A server that
/// starts sending the file from elsewhere mid-way (another host, a fresh CDN address for an expired one) left such a
/// stream unable to go on: it was tried again until its tries were spent. This context passes reads and seeks to one
/// of FFmpeg's connections, which `move(to:)` replaces with one at the new address. Both are opened through the format
/// context's `io_open`, the origin guard: off the media's origin, a connection goes without the credentials.
/// Thread-safety: Unsafe; used by the thread reading the format context (the open, then the demux thread).
final class MovableConnection {
  private let format: UnsafeMutablePointer<AVFormatContext>
  /// The open's options (headers, timeouts, reconnects), for each new connection.
  private var options: OpaquePointer?
  /// The connection reads and seeks go to (FFmpeg's http or https).
  private var inner: UnsafeMutablePointer<AVIOContext>
  /// The context the demuxer reads (`AVFMT_FLAG_CUSTOM_IO`); freed with its buffer by `free`, after the format
  /// context.
  private(set) var context: UnsafeMutablePointer<AVIOContext>?

  /// Opens `url` through `format`'s `io_open` with a copy of `options`; the connection, or FFmpeg's error code.
  static func open(format: UnsafeMutablePointer<AVFormatContext>, url: String, options: OpaquePointer?) -> (
    MovableConnection?, Int32
  ) {
    var first: UnsafeMutablePointer<AVIOContext>?
    let code = open(format, url, options, &first)
    guard code >= 0, let first else { return (nil, code < 0 ? code : orb_averror(EIO)) }
    guard let connection = MovableConnection(format: format, inner: first, options: options) else {
      close(format, first)
      return (nil, orb_averror(ENOMEM))
    }
    return (connection, 0)
  }

  private init?(
    format: UnsafeMutablePointer<AVFormatContext>, inner: UnsafeMutablePointer<AVIOContext>, options: OpaquePointer?
  ) {
    self.format = format
    self.inner = inner
    av_dict_copy(&self.options, options, 0)
    guard
      let context = CustomIO.make(
        size: 1 << 15, opaque: Unmanaged.passUnretained(self).toOpaque(), read: Self.readPacket, seek: Self.seek)
    else { return nil }
    context.pointee.seekable = inner.pointee.seekable
    self.context = context
  }

  /// Reads and seeks go to `url` from now on, through a new connection (the old one is closed), at the byte the
  /// reading had reached (a seek that stays near it is served from the context's buffer and never reaches the
  /// connection); false, and nothing changed, when it cannot be opened or placed there.
  func move(to url: String) -> Bool {
    guard let context else { return false }
    var opened: UnsafeMutablePointer<AVIOContext>?
    guard Self.open(format, url, options, &opened) >= 0, let fresh = opened else { return false }
    let position = context.pointee.pos
    // A stream that cannot seek (live) starts where the server is now.
    if fresh.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0 && position > 0
      && avio_seek(fresh, position, SEEK_SET) != position
    {
      Self.close(format, fresh)
      return false
    }
    Self.close(format, inner)
    inner = fresh
    context.pointee.seekable = fresh.pointee.seekable
    return true
  }

  /// Clears a failure left on the connection (a read broken off, interrupted, or at the end), which it would give
  /// again at once: before a seek, which may be served from the context's buffer without reaching it.
  func clearFailure() {
    inner.pointee.error = 0
    inner.pointee.eof_reached = 0
  }

  /// Closes the connection through the format context's `io_close2` and frees the context: while the format context
  /// is open, for a connection it will not use (the source is a playlist).
  func discard() {
    guard context != nil else { return }
    Self.close(format, inner)
    freeContext()
  }

  /// Closes the connection and frees the context and its buffer; after the format context is closed (its origin
  /// guard is gone then: the connection is closed directly).
  func free() {
    av_dict_free(&options)
    guard context != nil else { return }  // discarded, or an init that failed (the caller closed the connection)
    var connection: UnsafeMutablePointer<AVIOContext>? = inner
    avio_closep(&connection)
    freeContext()
  }

  private func freeContext() {
    guard let context else { return }
    CustomIO.free(context)
    self.context = nil
  }

  deinit { free() }

  private static func open(
    _ format: UnsafeMutablePointer<AVFormatContext>, _ url: String, _ options: OpaquePointer?,
    _ out: inout UnsafeMutablePointer<AVIOContext>?
  ) -> Int32 {
    guard let io = format.pointee.io_open else { return orb_averror(ENOSYS) }
    var copy: OpaquePointer?
    av_dict_copy(&copy, options, 0)
    defer { av_dict_free(&copy) }
    return io(format, &out, url, AVIO_FLAG_READ, &copy)
  }

  private static func close(_ format: UnsafeMutablePointer<AVFormatContext>, _ pb: UnsafeMutablePointer<AVIOContext>) {
    if let close = format.pointee.io_close2 {
      _ = close(format, pb)
    } else {
      var connection: UnsafeMutablePointer<AVIOContext>? = pb
      avio_closep(&connection)
    }
  }

  private static let readPacket:
    @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = { opaque, buffer, size in
      let connection = Unmanaged<MovableConnection>.fromOpaque(opaque!).takeUnretainedValue()
      guard let buffer, size > 0 else { return orb_averror(EINVAL) }
      let n = avio_read_partial(connection.inner, buffer, size)
      return n == 0 ? FFmpegError.eof : n
    }

  private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = {
    opaque, offset, whence in
    let connection = Unmanaged<MovableConnection>.fromOpaque(opaque!).takeUnretainedValue()
    let inner = connection.inner
    let how = whence & ~Int32(AVSEEK_FORCE)
    if how == Int32(AVSEEK_SIZE) { return avio_size(inner) }
    // A read the connection failed (a reset, an interrupt) stays on it until it is cleared: a seek to a place starts
    // clean. (Not one from the end, which is how the size is asked for when the server did not say it: it fails.)
    if how == SEEK_SET || how == SEEK_CUR { connection.clearFailure() }
    return avio_seek(inner, offset, whence)
  }
}
