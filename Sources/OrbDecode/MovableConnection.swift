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
    let size = 1 << 15
    guard let buffer = av_malloc(size) else { return nil }
    let opaque = Unmanaged.passUnretained(self).toOpaque()
    guard
      let context = avio_alloc_context(
        buffer.assumingMemoryBound(to: UInt8.self), Int32(size), 0, opaque, Self.readPacket, nil, Self.seek)
    else {
      av_free(buffer)
      return nil
    }
    context.pointee.seekable = inner.pointee.seekable
    self.context = context
  }

  /// Reads and seeks go to `url` from now on, through a new connection (the old one is closed); false, and nothing
  /// changed, when it cannot be opened.
  func move(to url: String) -> Bool {
    var fresh: UnsafeMutablePointer<AVIOContext>?
    guard Self.open(format, url, options, &fresh) >= 0, let fresh else { return false }
    Self.close(format, inner)
    inner = fresh
    context?.pointee.seekable = fresh.pointee.seekable
    return true
  }

  /// Closes the connection and frees the context and its buffer; after the format context is closed.
  func free() {
    av_dict_free(&options)
    guard let context else { return }  // (an init that failed: the caller closes the connection)
    var connection: UnsafeMutablePointer<AVIOContext>? = inner
    avio_closep(&connection)
    av_freep(&context.pointee.buffer)
    var c: UnsafeMutablePointer<AVIOContext>? = context
    avio_context_free(&c)
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
      guard let buffer, size > 0 else { return 0 }
      let n = avio_read_partial(connection.inner, buffer, size)
      return n == 0 ? FFmpegError.eof : n
    }

  private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = {
    opaque, offset, whence in
    let connection = Unmanaged<MovableConnection>.fromOpaque(opaque!).takeUnretainedValue()
    let inner = connection.inner
    if whence & ~Int32(AVSEEK_FORCE) == Int32(AVSEEK_SIZE) { return avio_size(inner) }
    // A read the connection failed (a reset, an interrupt) stays on it until it is cleared: a seek starts clean.
    inner.pointee.error = 0
    inner.pointee.eof_reached = 0
    return avio_seek(inner, offset, whence)
  }
}
