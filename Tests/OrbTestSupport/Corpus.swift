import Foundation

/// One file of the robustness corpus: damaged, truncated, odd or plainly valid.
/// Thread-safety: a value type.
public struct CorpusFile: Sendable, CustomStringConvertible {
  /// What the player must do with the file.
  public enum Expectation: Sendable, Equatable {
    /// Damaged or unusual: it plays, or it fails cleanly (exit 1, one line naming it); which one is the player's call.
    case playsOrFails
    /// A valid file: it must play. `videoFrames` is nil for a file without video.
    case plays(videoFrames: Int?, durationMs: Int)
  }

  /// A short name for tables and failure lists ("h264-vnoise100", "mp4-moov-last-cut40%").
  public let name: String
  /// The file in `TestMedia.directory`.
  public let path: String
  public let expectation: Expectation
  /// Words an error about this file must contain, when the player refuses it (a size, a codec tag).
  public let mentions: [String]

  public init(name: String, path: String, expectation: Expectation = .playsOrFails, mentions: [String] = []) {
    self.name = name
    self.path = path
    self.expectation = expectation
    self.mentions = mentions
  }

  public var description: String { name }
}

/// A corpus of damaged and unusual media, made with ffmpeg's lavfi sources and small deterministic byte edits (a
/// seeded generator, never Foundation's randomness), cached in `TestMedia.directory` like all test media.
/// Every clip is short and small (2 s or less, 320x240 or less, but for the odd sizes), so a pass over all of it
/// in every mode stays within minutes.
/// Thread-safety: Safe; `TestMedia` publishes files atomically.
public enum Corpus {
  /// How many files `make()` returns; a test checks it, so a recipe that silently drops out is noticed.
  public static let expectedCount = 83

  /// The truncation points, as fractions of the file's size.
  public static let cutPoints: [Double] = [0.01, 0.02, 0.05, 0.1, 0.25, 0.4, 0.5, 0.65, 0.8, 0.95]

  /// The noise strengths: `noise=amount=N` damages about one byte in N of each packet.
  public static let noiseAmounts = [1000, 100, 10]

  /// Builds (or finds in the cache) the whole corpus.
  /// - Throws: `TestMediaError` when ffmpeg cannot make a file or a byte edit does not apply.
  public static func make() throws -> [CorpusFile] {
    var files: [CorpusFile] = []
    let sources = try Sources()
    files += controls(sources)
    files += try noise(sources)
    files += try truncations(sources)
    files += try magic()
    files += try absurdSizes()
    files += try unknownCodecs(sources)
    files += try unusual()
    for f in files {
      let size = (try? FileManager.default.attributesOfItem(atPath: f.path)[.size] as? Int) ?? 0
      guard size > 0 else { throw TestMediaError("corpus file \(f.name) is missing or empty: \(f.path)") }
    }
    return files
  }

  // MARK: - Clean sources

  /// The clean clips the damaged ones are made from: 2 s, 320x240, 25 fps, with a 440 Hz tone.
  struct Sources {
    let h264: String  // H.264 + AAC, mkv
    let hevc10: String  // HEVC Main10 + AAC, mkv
    let vp9: String  // VP9 + Opus, webm
    let mp4First: String  // H.264 + AAC, mp4 with the index (moov) first
    let mp4Last: String  // the same with the index last

    init() throws {
      let input = [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000:duration=2",
      ]
      let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2"]
      h264 = try TestMedia.path("corpus-h264.mkv", input + x264)
      hevc10 = try TestMedia.path(
        "corpus-hevc10.mkv",
        input + [
          "-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le", "-x265-params", "log-level=error",
          "-c:a", "aac", "-ac", "2",
        ])
      vp9 = try TestMedia.path(
        "corpus-vp9.webm",
        input + [
          "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "400k", "-pix_fmt", "yuv420p",
          "-c:a", "libopus",
        ])
      mp4First = try TestMedia.path("corpus-moov-first.mp4", input + x264 + ["-movflags", "+faststart"])
      mp4Last = try TestMedia.path("corpus-moov-last.mp4", input + x264)
    }
  }

  private static let clip = CorpusFile.Expectation.plays(videoFrames: 50, durationMs: 2000)

  /// The clean sources themselves: they must play, which shows the harness can tell playing from failing.
  private static func controls(_ s: Sources) -> [CorpusFile] {
    [
      CorpusFile(name: "h264.mkv", path: s.h264, expectation: clip),
      CorpusFile(name: "hevc10.mkv", path: s.hevc10, expectation: clip),
      CorpusFile(name: "vp9.webm", path: s.vp9, expectation: clip),
      CorpusFile(name: "moov-first.mp4", path: s.mp4First, expectation: clip),
      CorpusFile(name: "moov-last.mp4", path: s.mp4Last, expectation: clip),
    ]
  }

  // MARK: - Damage

  /// Bitstream noise at each strength, on the video and on the audio, for H.264, HEVC 10-bit and VP9.
  private static func noise(_ s: Sources) throws -> [CorpusFile] {
    var files: [CorpusFile] = []
    for (codec, source, ext) in [("h264", s.h264, "mkv"), ("hevc10", s.hevc10, "mkv"), ("vp9", s.vp9, "webm")] {
      for stream in ["v", "a"] {
        for amount in noiseAmounts {
          let name = "\(codec)-\(stream)noise\(amount)"
          // The webm muxer's own vp9_superframe filter gives up on damaged frames: it is turned off.
          let path = try TestMedia.path(
            "corpus-\(name).\(ext)",
            ["-i", source, "-c", "copy", "-bsf:\(stream)", "noise=amount=\(amount)"]
              + (ext == "webm" ? ["-fflags", "-autobsf"] : []))
          files.append(CorpusFile(name: name, path: path))
        }
      }
    }
    return files
  }

  /// Downloads cut short: ten points in each container (mp4 index first and last, mkv, webm), and a webm's
  /// first 4 KiB.
  private static func truncations(_ s: Sources) throws -> [CorpusFile] {
    var files: [CorpusFile] = []
    for (label, source) in [
      ("mp4-moov-first", s.mp4First), ("mp4-moov-last", s.mp4Last), ("mkv", s.h264), ("webm", s.vp9),
    ] {
      let size = try fileSize(source)
      for point in cutPoints {
        let bytes = max(1, Int(Double(size) * point))
        files.append(
          CorpusFile(
            name: "\(label)-cut\(Int((point * 100).rounded()))%", path: try TestMedia.truncated(source, bytes: bytes)))
      }
    }
    files.append(CorpusFile(name: "webm-first4KiB", path: try TestMedia.truncated(s.vp9, bytes: 4096)))
    return files
  }

  /// Each container's magic followed by random bytes, and an `ftyp` box followed by a garbage `moov`.
  private static func magic() throws -> [CorpusFile] {
    let ftyp = box("ftyp", Data("isom".utf8) + Data([0, 0, 2, 0]) + Data("isomiso2avc1mp41".utf8))
    let heads: [(String, Data)] = [
      ("mp4", ftyp),
      ("mkv", Data([0x1A, 0x45, 0xDF, 0xA3])),
      ("png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])),
      ("ogg", Data("OggS".utf8)),
      ("avi", Data("RIFF".utf8) + Data([0x00, 0x80, 0x00, 0x00]) + Data("AVI LIST".utf8)),
    ]
    var files: [CorpusFile] = []
    for (ext, head) in heads {
      var rng = SplitMix64(seed: "magic-\(ext)")
      let path = try TestMedia.file(named: "corpus-magic-noise.\(ext)", contents: head + rng.bytes(32 * 1024))
      files.append(CorpusFile(name: "\(ext)-magic+random", path: path))
    }
    var rng = SplitMix64(seed: "garbage-moov")
    let moov = box("moov", rng.bytes(4096))
    let path = try TestMedia.file(named: "corpus-ftyp-garbage-moov.mp4", contents: ftyp + moov + rng.bytes(8192))
    files.append(CorpusFile(name: "ftyp+garbage-moov.mp4", path: path))
    return files
  }

  /// Streams whose headers claim pictures no one can hold: raw H.264 whose SPS says 16000x16000 and
  /// 65536x65536 (a small stream with its SPS rewritten), and a Y4M header saying 65536x65536.
  private static func absurdSizes() throws -> [CorpusFile] {
    let small = try TestMedia.path(
      "corpus-64x64-baseline.h264",
      [
        "-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25:duration=1", "-c:v", "libx264", "-preset", "ultrafast",
        "-profile:v", "baseline", "-pix_fmt", "yuv420p",
      ])
    let stream = try Data(contentsOf: URL(fileURLWithPath: small))
    var files: [CorpusFile] = []
    for side in [16000, 65536] {
      let patched = try H264SPS.resized(stream, widthInMacroblocks: side / 16, heightInMacroblocks: side / 16)
      let path = try TestMedia.file(named: "corpus-sps-\(side)x\(side).h264", contents: patched)
      // FFmpeg itself cannot parse a 65536x65536 SPS (it overflows its macroblock counts), so only the size it
      // does read can be named.
      let mentions = side == 16000 ? ["\(side)x\(side)"] : []
      files.append(CorpusFile(name: "sps-\(side)x\(side).h264", path: path, mentions: mentions))
    }
    var rng = SplitMix64(seed: "y4m")
    let header = Data("YUV4MPEG2 W65536 H65536 F25:1 Ip A1:1 C420jpeg\nFRAME\n".utf8)
    let y4m = try TestMedia.file(named: "corpus-65536x65536.y4m", contents: header + rng.bytes(4096))
    files.append(CorpusFile(name: "65536x65536.y4m", path: y4m, mentions: ["65536x65536"]))
    return files
  }

  /// Video FFmpeg has no decoder for: an AVI whose fourcc says `ZZZZ`, an mkv whose CodecID is unknown
  /// (its AAC sound still plays).
  public static func unknownCodecs() throws -> [CorpusFile] { try unknownCodecs(Sources()) }

  private static func unknownCodecs(_ s: Sources) throws -> [CorpusFile] {
    let avi = try TestMedia.path(
      "corpus-h264.avi", ["-i", s.h264, "-an", "-c:v", "copy", "-bsf:v", "h264_mp4toannexb"])
    var data = try Data(contentsOf: URL(fileURLWithPath: avi))
    // The fourcc is in the header list (strh and strf), before the `movi` list of the packets.
    guard let movi = data.range(of: Data("movi".utf8)) else { throw TestMediaError("no movi list in \(avi)") }
    let header = try replacing(Data("H264".utf8), with: Data("ZZZZ".utf8), in: data[..<movi.lowerBound], all: true)
    data = header + data[movi.lowerBound...]
    let mkv = try replacing(
      Data("V_MPEG4/ISO/AVC".utf8), with: Data("V_UNKNOWN/CODEC".utf8),
      in: try Data(contentsOf: URL(fileURLWithPath: s.h264)), all: false)
    return [
      CorpusFile(
        name: "fourcc-ZZZZ.avi", path: try TestMedia.file(named: "corpus-fourcc-ZZZZ.avi", contents: data),
        mentions: ["ZZZZ"]),
      CorpusFile(name: "unknown-codecid.mkv", path: try TestMedia.file(named: "corpus-codecid.mkv", contents: mkv)),
    ]
  }

  /// Unusual but valid, or empty of anything playable: subtitle-only, zero frames, audio-only, 40 audio tracks,
  /// 1000 fps, 1x1, 4097x17 and a raw annex B `.h264`.
  private static func unusual() throws -> [CorpusFile] {
    let srt = try TestMedia.file(
      named: "corpus-subtitles.srt",
      contents: "1\n00:00:00,000 --> 00:00:01,000\nHello\n\n2\n00:00:01,000 --> 00:00:02,000\nWorld\n")
    let subtitles = try TestMedia.path("corpus-subtitles-only.mkv", ["-i", srt, "-c:s", "srt"])
    let zero = try TestMedia.path(
      "corpus-zero-frames.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=1", "-frames:v", "0", "-c:v", "libx264",
        "-preset", "ultrafast",
      ])
    let audio = try TestMedia.path(
      "corpus-audio-only.m4a",
      ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-c:a", "aac", "-ac", "2"])
    var forty = [
      "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2", "-f", "lavfi", "-i",
      "sine=frequency=440:sample_rate=48000:duration=2", "-map", "0:v",
    ]
    for _ in 0..<40 { forty += ["-map", "1:a"] }
    forty += ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-ac", "1", "-b:a", "32k"]
    let tracks = try TestMedia.path("corpus-40-audio-tracks.mkv", forty)
    let fast = try TestMedia.path(
      "corpus-1000fps.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=1000:duration=1", "-c:v", "libx264", "-preset", "ultrafast",
        "-pix_fmt", "yuv420p",
      ])
    // Odd sizes cannot be 4:2:0; 4:4:4 H.264 holds any size.
    let tiny = try TestMedia.path(
      "corpus-1x1.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=32x32:rate=25:duration=1", "-vf", "scale=1:1", "-c:v", "libx264",
        "-preset", "ultrafast", "-pix_fmt", "yuv444p",
      ])
    let odd = try TestMedia.path(
      "corpus-4097x17.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=4097x17:rate=25:duration=1", "-c:v", "libx264", "-preset", "ultrafast",
        "-pix_fmt", "yuv444p",
      ])
    let raw = try TestMedia.path(
      "corpus-annexb.h264",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2", "-c:v", "libx264", "-preset", "ultrafast",
        "-pix_fmt", "yuv420p",
      ])
    let second = CorpusFile.Expectation.plays(videoFrames: 25, durationMs: 1000)
    return [
      CorpusFile(name: "subtitles-only.mkv", path: subtitles),
      CorpusFile(name: "zero-frames.mp4", path: zero),
      CorpusFile(name: "audio-only.m4a", path: audio, expectation: .plays(videoFrames: nil, durationMs: 2000)),
      CorpusFile(name: "40-audio-tracks.mkv", path: tracks, expectation: clip),
      CorpusFile(name: "1000fps.mp4", path: fast, expectation: .plays(videoFrames: 1000, durationMs: 1000)),
      CorpusFile(name: "1x1.mp4", path: tiny, expectation: second),
      CorpusFile(name: "4097x17.mp4", path: odd, expectation: second),
      CorpusFile(name: "annexb.h264", path: raw, expectation: .plays(videoFrames: 60, durationMs: 2000)),
    ]
  }

  // MARK: - Byte helpers

  private static func fileSize(_ path: String) throws -> Int {
    guard let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 else {
      throw TestMediaError("\(path) is empty")
    }
    return size
  }

  /// An ISO BMFF box: 32-bit big-endian size, type, payload.
  private static func box(_ type: String, _ payload: Data) -> Data {
    let size = UInt32(8 + payload.count)
    return Data([UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
      + Data(type.utf8) + payload
  }

  /// `data` with `old` replaced by `new` (the same length); throws when `old` is not there.
  private static func replacing(_ old: Data, with new: Data, in data: Data, all: Bool) throws -> Data {
    var out = Data(data)
    var found = false
    var from = out.startIndex
    while let r = out.range(of: old, in: from..<out.endIndex) {
      out.replaceSubrange(r, with: new)
      found = true
      from = r.upperBound
      if !all { break }
    }
    guard found else { throw TestMediaError("byte pattern not found for a corpus edit") }
    return out
  }
}

/// A small seeded generator (SplitMix64): the same bytes on every machine and run.
/// Thread-safety: a value type.
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  public init(seed: UInt64) { state = seed }

  /// Seeded from a string's FNV-1a hash.
  public init(seed: String) {
    state = UInt64(TestMedia.hash([seed]), radix: 16) ?? 0
  }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// `count` pseudo-random bytes.
  public mutating func bytes(_ count: Int) -> Data {
    var out = Data(capacity: count)
    while out.count < count {
      var word = next()
      for _ in 0..<min(8, count - out.count) {
        out.append(UInt8(word & 0xFF))
        word >>= 8
      }
    }
    return out
  }
}

/// Rewrites the picture size in the sequence parameter sets of an annex B H.264 stream (Baseline, Main or
/// Extended profile), leaving the slices as they are: a cheap stream whose header claims any size.
enum H264SPS {
  static func resized(_ stream: Data, widthInMacroblocks: Int, heightInMacroblocks: Int) throws -> Data {
    let bytes = [UInt8](stream)
    var starts: [Int] = []  // the first byte of each NAL unit, after its 00 00 01
    var i = 0
    while i + 2 < bytes.count {
      if bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1 {
        starts.append(i + 3)
        i += 3
      } else {
        i += 1
      }
    }
    var out: [UInt8] = []
    var patched = 0
    for (n, start) in starts.enumerated() {
      var end = n + 1 < starts.count ? starts[n + 1] - 3 : bytes.count
      while end > start && bytes[end - 1] == 0 { end -= 1 }  // the zero of a 4-byte start code
      var nal = Array(bytes[start..<end])
      if let header = nal.first, header & 0x1F == 7 {
        let rbsp = try rewrite(unescape(Array(nal.dropFirst())), width: widthInMacroblocks, height: heightInMacroblocks)
        nal = [header] + escape(rbsp)
        patched += 1
      }
      out += [0, 0, 0, 1] + nal
    }
    guard patched > 0 else { throw TestMediaError("no SPS in the H.264 stream") }
    return Data(out)
  }

  private static func rewrite(_ rbsp: [UInt8], width: Int, height: Int) throws -> [UInt8] {
    var r = BitReader(rbsp)
    var w = BitWriter()
    let profile = try r.bits(8)
    guard [66, 77, 88].contains(profile) else { throw TestMediaError("SPS profile \(profile) is not handled") }
    w.put(profile, 8)
    w.put(try r.bits(16), 16)  // constraint flags, level
    w.putUE(try r.ue())  // seq_parameter_set_id
    w.putUE(try r.ue())  // log2_max_frame_num_minus4
    let pocType = try r.ue()
    w.putUE(pocType)
    if pocType == 0 {
      w.putUE(try r.ue())
    } else if pocType == 1 {
      w.put(try r.bits(1), 1)
      w.putUE(try r.ue())  // offset_for_non_ref_pic, as its ue code
      w.putUE(try r.ue())  // offset_for_top_to_bottom_field
      let cycle = try r.ue()
      w.putUE(cycle)
      for _ in 0..<cycle { w.putUE(try r.ue()) }
    }
    w.putUE(try r.ue())  // max_num_ref_frames
    w.put(try r.bits(1), 1)  // gaps_in_frame_num_value_allowed_flag
    _ = try r.ue()
    _ = try r.ue()
    w.putUE(width - 1)  // pic_width_in_mbs_minus1
    w.putUE(height - 1)  // pic_height_in_map_units_minus1 (frame_mbs_only, as x264 writes progressive)
    // The rest up to the stop bit as it was, then a new stop bit and alignment.
    guard let last = rbsp.lastIndex(where: { $0 != 0 }) else { throw TestMediaError("empty SPS") }
    let stop = last * 8 + 7 - rbsp[last].trailingZeroBitCount
    while r.position < stop { w.put(try r.bits(1), 1) }
    w.put(1, 1)
    return w.finish()
  }

  /// Drops the emulation prevention bytes (00 00 03 → 00 00).
  private static func unescape(_ nal: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var zeros = 0
    for b in nal {
      if zeros >= 2 && b == 3 {
        zeros = 0
        continue
      }
      zeros = b == 0 ? zeros + 1 : 0
      out.append(b)
    }
    return out
  }

  /// Puts emulation prevention bytes back.
  private static func escape(_ rbsp: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var zeros = 0
    for b in rbsp {
      if zeros >= 2 && b <= 3 {
        out.append(3)
        zeros = 0
      }
      zeros = b == 0 ? zeros + 1 : 0
      out.append(b)
    }
    return out
  }

  private struct BitReader {
    let bytes: [UInt8]
    var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func bits(_ n: Int) throws -> Int {
      var v = 0
      for _ in 0..<n {
        guard position / 8 < bytes.count else { throw TestMediaError("SPS ends early") }
        v = v << 1 | Int(bytes[position / 8] >> (7 - UInt8(position % 8)) & 1)
        position += 1
      }
      return v
    }

    /// An unsigned Exp-Golomb code.
    mutating func ue() throws -> Int {
      var zeros = 0
      while try bits(1) == 0 {
        zeros += 1
        guard zeros < 32 else { throw TestMediaError("bad Exp-Golomb code in the SPS") }
      }
      return (1 << zeros) - 1 + (try bits(zeros))
    }
  }

  private struct BitWriter {
    var bytes: [UInt8] = []
    var count = 0

    mutating func put(_ value: Int, _ n: Int) {
      for k in stride(from: n - 1, through: 0, by: -1) {
        if count % 8 == 0 { bytes.append(0) }
        if value >> k & 1 == 1 { bytes[bytes.count - 1] |= 1 << (7 - UInt8(count % 8)) }
        count += 1
      }
    }

    mutating func putUE(_ value: Int) {
      let code = value + 1
      let length = Int.bitWidth - code.leadingZeroBitCount
      put(0, length - 1)
      put(code, length)
    }

    func finish() -> [UInt8] { bytes }
  }
}
