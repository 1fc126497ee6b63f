import CFFmpeg

/// An opened AVCodecContext for one subtitle stream, turning its packets into cues; frees the context exactly once,
/// on every path (a throw half-way through `init` included).
/// Text streams (SubRip, ASS/SSA, mov_text, WebVTT, MicroDVD …) come out of libavcodec as ASS events, read by
/// `ASSText`; bitmap streams (DVD/VobSub, DVB, PGS) as palettes of indices, converted to RGBA.
/// Thread-safety: not `Sendable`; made and used by one thread (a subtitle reader's, or a file reader).
public final class SubtitleDecoder {
  let context: UnsafeMutablePointer<AVCodecContext>
  /// Whether the codec draws pictures rather than text.
  public let isBitmap: Bool
  /// Whether the text's HTML character references are decoded (`CharacterReferences`): the codec's text is HTML-like.
  private let decodesReferences: Bool
  /// The script's styles (`ASSStyles`): the colour and weight each cue's text starts with.
  private var styles = ASSStyles()
  /// The script's header, for an ASS or SSA stream: its cues carry their events for a renderer of the whole script.
  private var script: String?
  static let htmlLike: Set<AVCodecID> = [AV_CODEC_ID_SUBRIP, AV_CODEC_ID_SRT, AV_CODEC_ID_SAMI]
  private let videoWidth: Int
  private let videoHeight: Int

  /// - Parameters:
  ///   - characterSet: the character set of a legacy text sidecar (as `SubtitleCharset` names it), which
  ///     FFmpeg's iconv converts to UTF-8 before decoding; nil for UTF-8 (embedded tracks are UTF-8 by spec) and for
  ///     UTF-16 with a byte-order mark, which FFmpeg's text demuxers convert themselves. Ignored for bitmap codecs.
  ///   - videoWidth, videoHeight: the canvas of bitmap cues when the codec does not give one.
  /// - Throws: `FFmpegError` when FFmpeg has no decoder for the codec, or iconv does not know `characterSet`.
  init(_ stream: StreamParameters, characterSet: String? = nil, videoWidth: Int = 0, videoHeight: Int = 0) throws {
    let (ctx, codec) = try stream.makeCodecContext()
    // Every stored property is set: from here a throw frees the context through deinit, and only there.
    context = ctx
    let descriptor = avcodec_descriptor_get(stream.parameters.pointee.codec_id)
    isBitmap = descriptor.map { ($0.pointee.props & AV_CODEC_PROP_BITMAP_SUB) != 0 } ?? false
    decodesReferences = Self.htmlLike.contains(stream.parameters.pointee.codec_id)
    self.videoWidth = videoWidth
    self.videoHeight = videoHeight
    var options: OpaquePointer? = nil
    defer { av_dict_free(&options) }
    if let characterSet, !isBitmap {
      // pre_decoder: libavcodec converts each packet with iconv before the decoder parses it.
      av_dict_set(&options, "sub_charenc", characterSet, 0)
      av_dict_set(&options, "sub_charenc_mode", "pre_decoder", 0)
    }
    try av(avcodec_open2(ctx, codec, &options), "avcodec_open2(\(characterSet ?? "utf-8"))")
    // The script's styles: an ASS track's own; a text format's, the one FFmpeg writes for it.
    if let header = ctx.pointee.subtitle_header, ctx.pointee.subtitle_header_size > 0 {
      let bytes = UnsafeBufferPointer(start: header, count: Int(ctx.pointee.subtitle_header_size))
      let header = String(decoding: bytes, as: UTF8.self)
      styles = ASSStyles(header: header)
      let codec = stream.parameters.pointee.codec_id
      // A header over `ASSEvent.longestHeader` (fonts written into it run to megabytes) is not drawn by libass,
      // which reads it on the window's thread: its cues are shown as text.
      if codec == AV_CODEC_ID_ASS || codec == AV_CODEC_ID_SSA, bytes.count <= ASSEvent.longestHeader { script = header }
    }
  }

  deinit {
    var c: UnsafeMutablePointer<AVCodecContext>? = context
    avcodec_free_context(&c)
  }

  /// The cues of one packet.
  /// - Parameters:
  ///   - data: the packet's bytes.
  ///   - pts, duration: in `timeBase` units; nil when the container does not give them.
  ///   - origin: seconds subtracted from every time (the container's start time, so cues share video frames' scale).
  /// - Returns: the cues (none for a packet FFmpeg decodes to nothing, or to empty text), and for a bitmap packet
  ///   without pictures the time it clears the screen.
  /// - Throws: `FFmpegError` for a packet FFmpeg cannot decode (the stream goes on with the next one).
  public func decode(
    _ data: UnsafeRawBufferPointer, pts: Int64?, duration: Int64?, timeBase: AVRational, origin: Double = 0
  ) throws -> SubtitleUpdate {
    var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    defer { av_packet_free(&packet) }
    guard let packet else { throw FFmpegError(call: "av_packet_alloc", code: orb_averror(ENOMEM)) }
    try av(av_new_packet(packet, Int32(clamping: data.count)), "av_new_packet")
    if let base = data.baseAddress, data.count > 0, let bytes = packet.pointee.data {
      UnsafeMutableRawPointer(bytes).copyMemory(from: base, byteCount: data.count)
    }
    packet.pointee.pts = pts ?? orb_nopts_value()
    packet.pointee.dts = packet.pointee.pts
    packet.pointee.duration = duration ?? 0
    return try decode(packet: packet, timeBase: timeBase, origin: origin)
  }

  /// The cues of a demuxed packet (its pts and duration in `timeBase`, the stream's).
  func decode(packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational, origin: Double = 0) throws
    -> SubtitleUpdate
  {
    var subtitle = AVSubtitle()
    defer { avsubtitle_free(&subtitle) }  // frees nothing when nothing was decoded (the struct stays zeroed)
    var got: Int32 = 0
    try av(avcodec_decode_subtitle2(context, &subtitle, &got, packet), "avcodec_decode_subtitle2")
    guard got != 0 else { return SubtitleUpdate() }
    let seconds = { (value: Int64) in Double(value) * Double(timeBase.num) / Double(timeBase.den) }
    let pts = packet.pointee.pts
    let base: Double
    if pts != orb_nopts_value() {
      base = seconds(pts) - origin
    } else if subtitle.pts != orb_nopts_value() {
      base = Double(subtitle.pts) / Double(AV_TIME_BASE) - origin
    } else {
      return SubtitleUpdate()  // a cue with no time cannot be placed
    }
    let start = base + Double(subtitle.start_display_time) / 1000
    let end: Double
    if packet.pointee.duration > 0 {
      end = base + seconds(packet.pointee.duration)
    } else if subtitle.end_display_time > 0 && subtitle.end_display_time != UInt32.max {
      // A cue that ends before it starts has a negative length, which wraps in FFmpeg's unsigned field (to 49 days
      // less a little): read as signed, it ends before its start, and the track's checks drop it.
      end = base + Double(Int32(bitPattern: subtitle.end_display_time)) / 1000
    } else {
      end = .infinity  // until the track's next cue or clear (DVB, PGS)
    }
    let rects = (0..<Int(subtitle.num_rects)).compactMap { subtitle.rects?[$0]?.pointee }
    if rects.isEmpty { return SubtitleUpdate(clearsAt: isBitmap ? start : nil) }
    var cues: [SubtitleCue] = []
    var bitmaps: [SubtitleBitmap] = []
    for rect in rects {
      switch rect.type {
      case SUBTITLE_ASS:
        guard let ass = rect.ass else { continue }
        let line = String(cString: ass)
        var text = ASSText(event: line, styles: styles)
        if decodesReferences { text.decodeCharacterReferences() }
        if let script {
          // Kept even without text: a script draws shapes (`\p1`) too.
          cues.append(
            SubtitleCue(
              start: start, end: end, lines: text.lines, placement: text.placement,
              assEvent: ASSEvent(header: script, line: line)))
        } else if !text.isEmpty {
          cues.append(SubtitleCue(start: start, end: end, lines: text.lines, placement: text.placement))
        }
      case SUBTITLE_TEXT:
        guard let plain = rect.text else { continue }
        let lines = String(cString: plain).split(separator: "\n", omittingEmptySubsequences: false)
          .map { [SubtitleRun(String($0))] }
        let cue = SubtitleCue(start: start, end: end, lines: lines)
        if !cue.plainText.allSatisfy(\.isWhitespace) { cues.append(cue) }
      case SUBTITLE_BITMAP:
        let canvas = canvasSize(rects)
        if let bitmap = SubtitleBitmap(rect: rect, canvasWidth: canvas.width, canvasHeight: canvas.height) {
          bitmaps.append(bitmap)
        }
      default:
        continue
      }
    }
    if !bitmaps.isEmpty { cues.append(SubtitleCue(start: start, end: end, bitmaps: bitmaps)) }
    // A bitmap packet replaces what was on screen, even when none of its pictures could be read.
    return SubtitleUpdate(cues: cues, clearsAt: isBitmap ? start : nil)
  }

  /// The codec's canvas, else the video's size, else just large enough for the pictures.
  private func canvasSize(_ rects: [AVSubtitleRect]) -> (width: Int, height: Int) {
    if context.pointee.width > 0 && context.pointee.height > 0 {
      return (Int(context.pointee.width), Int(context.pointee.height))
    }
    if videoWidth > 0 && videoHeight > 0 { return (videoWidth, videoHeight) }
    let width = rects.map { Int($0.x) + Int($0.w) }.max() ?? 0
    let height = rects.map { Int($0.y) + Int($0.h) }.max() ?? 0
    return (width, height)
  }
}
