import CFFmpeg
import Foundation
import OrbDecode

/// Writes RGBA8 pixels as an RGB PNG, exactly (no resampling, no colour change), compressed by libavcodec's PNG
/// encoder (zlib with the Paeth filter): a 1080p frame of video is a few megabytes, as other tools write it.
public enum PNGWriter {
  /// Why a picture could not be encoded.
  public struct Failure: Error, CustomStringConvertible {
    public let description: String
  }

  /// - Parameter rgba: `width * height * 4` bytes, rows top first.
  public static func encode(rgba: UnsafeRawBufferPointer, width: Int, height: Int) throws -> Data {
    guard width > 0, height > 0, rgba.count >= width * height * 4 else {
      throw Failure(description: "no pixels to write (\(width)x\(height))")
    }
    guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
      throw Failure(description: "FFmpeg has no PNG encoder")
    }
    var context = avcodec_alloc_context3(codec)
    defer { avcodec_free_context(&context) }
    var frame = av_frame_alloc()
    defer { av_frame_free(&frame) }
    var packet = av_packet_alloc()
    defer { av_packet_free(&packet) }
    guard let ctx = context, let frame, let packet else { throw Failure(description: "out of memory") }
    ctx.pointee.width = Int32(width)
    ctx.pointee.height = Int32(height)
    ctx.pointee.pix_fmt = AV_PIX_FMT_RGB24
    ctx.pointee.time_base = AVRational(num: 1, den: 1)
    ctx.pointee.compression_level = 6
    av_opt_set(ctx.pointee.priv_data, "pred", "paeth", 0)
    try check(avcodec_open2(ctx, codec, nil), "open the PNG encoder")
    frame.pointee.width = Int32(width)
    frame.pointee.height = Int32(height)
    frame.pointee.format = AV_PIX_FMT_RGB24.rawValue
    try check(av_frame_get_buffer(frame, 0), "allocate \(width)x\(height) pixels")
    let stride = Int(frame.pointee.linesize.0)
    let rgb = frame.pointee.data.0!
    for y in 0..<height {
      let row = rgb + y * stride
      let source = y * width * 4
      for x in 0..<width {
        row[x * 3] = rgba[source + x * 4]
        row[x * 3 + 1] = rgba[source + x * 4 + 1]
        row[x * 3 + 2] = rgba[source + x * 4 + 2]
      }
    }
    try check(avcodec_send_frame(ctx, frame), "encode the picture")
    try check(avcodec_receive_packet(ctx, packet), "encode the picture")
    return Data(bytes: packet.pointee.data, count: Int(packet.pointee.size))
  }

  /// - Throws: `Failure` naming `path` and why, in words ("cannot write '/x/y.png': no such file or directory").
  public static func write(rgba: UnsafeRawBufferPointer, width: Int, height: Int, to path: String) throws {
    let png = try encode(rgba: rgba, width: width, height: height)
    // Written with the system's calls, whose reason a person can act on (Foundation's error was a dump of its domain
    // and user info).
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    func failure() -> Failure {
      Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno)).lowercased())")
    }
    guard fd >= 0 else { throw failure() }
    defer { close(fd) }
    try png.withUnsafeBytes { bytes in
      var done = 0
      while done < bytes.count {
        let n = Foundation.write(fd, bytes.baseAddress! + done, bytes.count - done)
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { throw failure() }
        done += n
      }
    }
  }

  private static func check(_ code: Int32, _ what: String) throws {
    guard code >= 0 else { throw Failure(description: "cannot \(what): \(FFmpegError.message(code))") }
  }
}
