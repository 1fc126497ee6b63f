import CFFmpeg
import Foundation

/// Reads a subtitle file whole: a sidecar (SRT, ASS/SSA, WebVTT, MicroDVD, VobSub …) or one subtitle stream of a
/// container (Matroska, MP4, MPEG-TS), through its own AVFormatContext.
///
/// For a text sidecar the character set is found from the file's bytes first (`SubtitleCharset`) and handed to
/// FFmpeg's iconv. Times are media seconds: a sidecar's as written; a container's with its start time subtracted,
/// like video frames'.
/// Thread-safety: stateless; each call opens its own context, so calls may run on any threads at once.
public enum SubtitleFile {
  /// FFmpeg's demuxers of text subtitle files, whose bytes may be in a legacy character set, and the format's name.
  static let textFormats: [String: String] = [
    "srt": "SRT", "ass": "ASS", "webvtt": "WebVTT", "microdvd": "MicroDVD", "subviewer": "SubViewer",
    "subviewer1": "SubViewer 1", "sami": "SAMI", "mpl2": "MPL2", "mpsub": "MPSub", "realtext": "RealText",
    "jacosub": "JACOsub", "pjs": "PJS", "stl": "Spruce STL", "vplayer": "VPlayer", "aqtitle": "AQTitle",
  ]
  /// Names of codecs for the streams of containers.
  static let codecNames: [String: String] = [
    "subrip": "SRT", "ass": "ASS", "ssa": "SSA", "webvtt": "WebVTT", "mov_text": "mov_text",
    "dvd_subtitle": "DVD", "dvb_subtitle": "DVB", "hdmv_pgs_subtitle": "PGS",
  ]
  /// Extensions of text subtitle files: one holding binary data is refused before FFmpeg probes it.
  static let textExtensions: Set<String> = ["srt", "ass", "ssa", "vtt", "webvtt", "smi", "sami", "txt", "sub"]
  /// Text sidecars larger than this are not subtitles.
  static let largestText = 32 << 20

  /// The cues of `path`'s first subtitle stream, or of stream `streamIndex`.
  /// - Parameters:
  ///   - videoWidth, videoHeight: the canvas of bitmap cues whose codec gives none.
  /// - Throws: `MediaError` naming the file and why: missing, binary data in a text file, no subtitle stream, a
  ///   format FFmpeg cannot read, a codec it cannot decode.
  public static func read(_ path: String, streamIndex: Int? = nil, videoWidth: Int = 0, videoHeight: Int = 0) throws
    -> SubtitleTrack
  {
    orb_av_log_quiet()
    if let problem = MediaError.checkLocalFile(path, what: "subtitle file") { throw problem }
    let ext = (path as NSString).pathExtension.lowercased()
    var openPath = path
    var head: [UInt8] = []
    if textExtensions.contains(ext) {
      head = try bytes(of: path, upTo: largestText + 1)
      if ext == "sub" && head.starts(with: [0x00, 0x00, 0x01, 0xBA]) {
        // A VobSub .sub is MPEG-PS; the .idx beside it holds the palette, the size and the times.
        guard let idx = companionIndex(of: path) else {
          throw MediaError(.unplayable, source: path, reason: "a VobSub .sub file needs its .idx file beside it")
        }
        openPath = idx
        head = []
      } else if let problem = binaryProblem(head) {
        throw MediaError(.unplayable, source: path, reason: problem)
      } else if head.count > largestText {
        throw MediaError(.unplayable, source: path, reason: "too large for a subtitle file")
      }
    }
    let format = try open(openPath, reportedAs: path)
    let ctx = format.pointer
    let demuxer = String(cString: ctx.pointee.iformat.pointee.name)
    let stream = try subtitleStream(ctx, streamIndex, path: path)
    guard let parameters = StreamParameters(stream) else {
      throw MediaError(.unplayable, source: path, reason: "out of memory")
    }
    for i in 0..<Int(ctx.pointee.nb_streams) where i != parameters.index {
      ctx.pointee.streams[i]?.pointee.discard = AVDISCARD_ALL
    }
    var warnings: [String] = []
    var charset: SubtitleCharset? = nil
    if textFormats[demuxer] != nil {
      if head.isEmpty { head = try bytes(of: openPath, upTo: largestText) }
      let found = SubtitleCharset(of: head)
      if let warning = found.warning { warnings.append(warning) }
      charset = found
    }
    let decoder = try makeDecoder(
      parameters, charset: &charset, videoWidth: videoWidth, videoHeight: videoHeight, path: path,
      warnings: &warnings)
    // A sidecar's times are the movie's; a container's start like its video's (its start time is taken off).
    let hasMedia = (0..<Int(ctx.pointee.nb_streams)).contains { i in
      let type = ctx.pointee.streams[i]?.pointee.codecpar.pointee.codec_type
      return type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO
    }
    let start = ctx.pointee.start_time
    let origin = hasMedia && start != orb_nopts_value() ? Double(start) / Double(AV_TIME_BASE) : 0
    var cues = try readCues(
      ctx, decoder: decoder, stream: parameters, origin: origin, path: path, warnings: &warnings)
    // The last open-ended cue ends with the file, or after ten seconds.
    let duration = ctx.pointee.duration
    let fileEnd = duration > 0 && duration != orb_nopts_value() ? Double(duration) / Double(AV_TIME_BASE) : nil
    for i in cues.indices where cues[i].isOpenEnded {
      cues[i].end = fileEnd.flatMap { $0 > cues[i].start ? $0 : nil } ?? cues[i].start + CueCleanup.shortened
    }
    cues = CueCleanup.clean(cues, warnings: &warnings)
    return SubtitleTrack(
      path: path, format: formatName(demuxer: demuxer, codec: parameters, head: head, ext: ext),
      language: language(of: stream) ?? language(inName: path), cues: cues, warnings: warnings,
      isBitmap: decoder.isBitmap, charset: charset)
  }

  /// Opens `path` with its own context.
  private static func open(_ path: String, reportedAs source: String) throws -> FormatContext {
    var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
    // On failure FFmpeg frees what it allocated; on success `FormatContext` owns it from the next line.
    let code = MediaSource.localBytes(path).withUnsafeBufferPointer {
      avformat_open_input(&ctx, $0.baseAddress, nil, nil)
    }
    guard code >= 0, let opened = ctx else {
      let reason = code == FFmpegError.invalidData ? "not a subtitle format FFmpeg can read" : FFmpegError.message(code)
      throw MediaError(code == orb_averror(ENOENT) ? .missing : .unplayable, source: source, reason: reason)
    }
    let format = FormatContext(opened, cancellation: Cancellation())
    let found = avformat_find_stream_info(opened, nil)
    if found < 0 { throw MediaError(.unplayable, source: source, reason: FFmpegError.message(found)) }
    return format
  }

  /// Stream `index`, or the first subtitle stream.
  private static func subtitleStream(_ ctx: UnsafeMutablePointer<AVFormatContext>, _ index: Int?, path: String) throws
    -> UnsafeMutablePointer<AVStream>
  {
    let streams = (0..<Int(ctx.pointee.nb_streams)).compactMap { ctx.pointee.streams[$0] }
    let isSubtitle = { (st: UnsafeMutablePointer<AVStream>) in
      st.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
    }
    if let index {
      guard index >= 0, index < streams.count, isSubtitle(streams[index]) else {
        throw MediaError(.unplayable, source: path, reason: "stream \(index) is not a subtitle stream")
      }
      return streams[index]
    }
    guard let first = streams.first(where: isSubtitle) else {
      throw MediaError(.unplayable, source: path, reason: "no subtitle stream in it")
    }
    return first
  }

  /// The decoder, with the character set found; one iconv does not know is replaced by Windows-1252.
  private static func makeDecoder(
    _ parameters: StreamParameters, charset: inout SubtitleCharset?, videoWidth: Int, videoHeight: Int,
    path: String, warnings: inout [String]
  ) throws -> SubtitleDecoder {
    do {
      return try SubtitleDecoder(
        parameters, characterSet: charset?.decoderCharacterSet, videoWidth: videoWidth, videoHeight: videoHeight)
    } catch let error as FFmpegError {
      if error.code == orb_averror_decoder_not_found() {
        throw MediaError(.unplayable, source: path, reason: "no decoder for \(parameters.codecDescription)")
      }
      guard let name = charset?.decoderCharacterSet, name != "WINDOWS-1252" else {
        throw MediaError(.unplayable, source: path, reason: error.description)
      }
      warnings.append("the character set \(name) is not known to iconv; read as Windows-1252")
      charset = SubtitleCharset(encoding: .legacy("WINDOWS-1252"), warning: warnings.last)
      do {
        return try SubtitleDecoder(
          parameters, characterSet: "WINDOWS-1252", videoWidth: videoWidth, videoHeight: videoHeight)
      } catch {
        throw MediaError(.unplayable, source: path, reason: "\(error)")
      }
    }
  }

  /// Every packet of the stream decoded, open-ended cues closed by the next cue, bitmap cues by the next packet,
  /// the same cue read twice kept once.
  private static func readCues(
    _ ctx: UnsafeMutablePointer<AVFormatContext>, decoder: SubtitleDecoder, stream: StreamParameters,
    origin: Double, path: String, warnings: inout [String]
  ) throws -> [SubtitleCue] {
    var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
    defer { av_packet_free(&packet) }
    guard let packet else { throw MediaError(.unplayable, source: path, reason: "out of memory") }
    let store = CueStore()
    var failed = 0
    var firstFailure = ""
    while true {
      let code = av_read_frame(ctx, packet)
      if code == FFmpegError.eof { break }
      if code < 0 {
        guard store.count > 0 else {
          throw MediaError(.unplayable, source: path, reason: FFmpegError.message(code))
        }
        warnings.append("reading stopped after \(store.count) cues: \(FFmpegError.message(code))")
        break
      }
      defer { av_packet_unref(packet) }
      guard Int(packet.pointee.stream_index) == stream.index else { continue }
      do {
        store.apply(try decoder.decode(packet: packet, timeBase: stream.timeBase, origin: origin))
      } catch {
        failed += 1
        if firstFailure.isEmpty { firstFailure = "\(error)" }
      }
    }
    if failed > 0 { warnings.append("\(failed) packets could not be decoded and were dropped (\(firstFailure))") }
    return store.allCues
  }

  /// The first `count` bytes of `path`.
  static func bytes(of path: String, upTo count: Int) throws -> [UInt8] {
    let fd = MediaSource.localBytes(path).withUnsafeBufferPointer { Glibc.open($0.baseAddress!, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw MediaError(.unplayable, source: path, reason: "permission denied") }
    let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
    defer { try? handle.close() }
    do {
      return [UInt8](try handle.read(upToCount: count) ?? Data())
    } catch {
      throw MediaError(.unplayable, source: path, reason: "cannot be read: \(error.localizedDescription)")
    }
  }

  /// Why `bytes` (the start of a file named as text subtitles) are not text, or nil when they may be:
  /// NUL bytes outside UTF-16, or more than one in twenty bytes a control code.
  static func binaryProblem(_ bytes: [UInt8]) -> String? {
    guard !bytes.starts(with: [0xFF, 0xFE]), !bytes.starts(with: [0xFE, 0xFF]) else { return nil }
    let sample = bytes.prefix(65536)
    let controls = sample.filter { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D && $0 != 0x0C }
    if controls.contains(0) || controls.count * 20 > sample.count {
      return "it holds binary data, not subtitle text"
    }
    return nil
  }

  /// The .idx beside a VobSub .sub (any case of the extension).
  static func companionIndex(of sub: String) -> String? {
    // A path, or a file:// URL (a name that is not UTF-8, `SidecarFinder`).
    let stem = SidecarFinder.stem(of: sub)
    return ["idx", "IDX", "Idx"].map { "\(stem).\($0)" }.first { candidate in
      var st = stat()
      return MediaSource.localBytes(candidate).withUnsafeBufferPointer { stat($0.baseAddress!, &st) } == 0
    }
  }

  private static func formatName(demuxer: String, codec: StreamParameters, head: [UInt8], ext: String) -> String {
    if demuxer == "ass" {
      // One demuxer reads both: ASS declares "[V4+ Styles]", SSA "[V4 Styles]".
      let text = String(decoding: head.prefix(65536), as: UTF8.self).lowercased()
      if text.contains("[v4+ styles]") { return "ASS" }
      return text.contains("[v4 styles]") || ext == "ssa" ? "SSA" : "ASS"
    }
    if demuxer == "vobsub" { return "VobSub" }
    if let name = textFormats[demuxer] { return name }
    let codecName = String(cString: avcodec_get_name(codec.parameters.pointee.codec_id))
    return codecNames[codecName] ?? codecName
  }

  private static func language(of stream: UnsafeMutablePointer<AVStream>) -> String? {
    guard let entry = av_dict_get(stream.pointee.metadata, "language", nil, 0) else { return nil }
    let value = String(cString: entry.pointee.value)
    return value.isEmpty || value == "und" ? nil : value
  }

  /// A known language code among the dot-separated parts of the file's name ("Movie.2020.en.forced.srt" → "en").
  static func language(inName path: String) -> String? {
    let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    let parts = name.split(separator: ".").dropFirst().map(String.init)
    return parts.reversed().first { SubtitleLanguage.isKnown($0) }
  }
}
