import CFFmpeg

/// An AVIOContext of the player's own (`AVFMT_FLAG_CUSTOM_IO`: a pipe's copy, a movable connection), reading through
/// `read` and seeking through `seek` with `opaque`; it and its buffer are made and freed together.
/// Thread-safety: stateless; a context is its maker's.
enum CustomIO {
  typealias Read = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32
  typealias Seek = @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64

  /// A reading context with a buffer of `size` bytes; nil without memory.
  static func make(size: Int, opaque: UnsafeMutableRawPointer, read: Read, seek: Seek)
    -> UnsafeMutablePointer<AVIOContext>?
  {
    guard let buffer = av_malloc(size) else { return nil }
    guard
      let context = avio_alloc_context(
        buffer.assumingMemoryBound(to: UInt8.self), Int32(size), 0, opaque, read, nil, seek)
    else {
      av_free(buffer)
      return nil
    }
    return context
  }

  /// Frees `context` and its buffer (FFmpeg may have replaced the buffer; this one is freed), after the format
  /// context that read through it.
  static func free(_ context: UnsafeMutablePointer<AVIOContext>) {
    av_freep(&context.pointee.buffer)
    var c: UnsafeMutablePointer<AVIOContext>? = context
    avio_context_free(&c)
  }
}
