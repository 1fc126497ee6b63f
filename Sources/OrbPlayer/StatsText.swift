import Foundation
import OrbDecode

/// The lines of the stats overlay (`i`): what is playing, how it is coloured, how it reaches the screen, how well.
/// Thread-safety: a value type, built on the main thread from the player's snapshots.
public struct StatsText: Sendable {
  public var info: MediaInfo?
  /// The frame on screen, for what the decoder actually gives (pixel format, colour, HDR10 metadata).
  public var frame: (width: Int, height: Int, pixelFormat: String, color: ColorInfo, hdr: HDRMetadata)?
  public var stats: PlaybackStats
  public var presentation: String
  public var device: String
  public var toneMapping: String?
  public var audio: String?
  /// The subtitle track shown ("2/3 English (SRT), delay +0.2 s"), or nil when the media has none.
  public var subtitles: String?
  public var position: Double
  public var duration: Double?
  /// The video stream playing, when the media has several (an HLS variant); else its first.
  public var video: VideoStreamInfo?
  /// Which pictures are deinterlaced.
  public var deinterlace: DeinterlaceMode
  /// How the picture on screen was scanned and is shown; nil before one is (the stream's word stands for it).
  public var fields: VideoFrame.Fields?

  public init(
    info: MediaInfo?, frame: (width: Int, height: Int, pixelFormat: String, color: ColorInfo, hdr: HDRMetadata)?,
    stats: PlaybackStats, presentation: String, device: String, toneMapping: String? = nil, audio: String? = nil,
    subtitles: String? = nil, position: Double, duration: Double?, video: VideoStreamInfo? = nil,
    deinterlace: DeinterlaceMode = .auto, fields: VideoFrame.Fields? = nil
  ) {
    self.video = video
    self.deinterlace = deinterlace
    self.fields = fields
    self.subtitles = subtitles
    self.info = info
    self.frame = frame
    self.stats = stats
    self.presentation = presentation
    self.device = device
    self.toneMapping = toneMapping
    self.audio = audio
    self.position = position
    self.duration = duration
  }

  public var lines: [String] {
    var out: [String] = []
    let video = self.video ?? info?.video.first
    out.append("File      \(info.map { MediaSource.displayName($0.source) } ?? "—") [\(info?.container ?? "—")]")
    out.append("Position  \(Self.clock(position)) / \(duration.map(Self.clock) ?? "—")")
    if let v = video {
      let rate = v.frameRate.map { String(format: "%.3f fps", $0) } ?? "? fps"
      out.append("Video     \(v.codec)\(v.profile.map { " (\($0))" } ?? "")  \(v.width)x\(v.height)  \(rate)")
      if let bits = v.variantBitrate, (info?.video.count ?? 0) > 1 {
        let network = info?.throughput.map { String(format: ", network %.2f Mb/s", Double($0) / 1e6) } ?? ""
        out.append(
          String(format: "Variant   %.2f Mb/s of %d (HLS)", Double(bits) / 1e6, info?.video.count ?? 0) + network)
      }
      if let line = fieldsLine(v) { out.append(line) }
      if v.sampleAspectRatio != "1:1" || v.rotation != 0 {
        out.append(
          "Shape     SAR \(v.sampleAspectRatio), rotated \(v.rotation)°, shown \(v.displayWidth)x\(v.displayHeight)")
      }
    }
    if let f = frame {
      out.append("Pixels    \(f.pixelFormat)")
      out.append(
        "Colour    \(f.color.primaries.rawValue) / \(f.color.transfer.rawValue) / \(f.color.matrix.rawValue), "
          + "\(f.color.range.rawValue) range")
      if let m = f.hdr.mastering {
        out.append(
          String(
            format: "Mastering R %.4f,%.4f G %.4f,%.4f B %.4f,%.4f W %.4f,%.4f", m.red.x, m.red.y, m.green.x,
            m.green.y, m.blue.x, m.blue.y, m.whitePoint.x, m.whitePoint.y))
        out.append(String(format: "          %.4f – %.0f nits", m.minLuminance, m.maxLuminance))
      }
      if f.hdr.maxCLL > 0 || f.hdr.maxFALL > 0 {
        out.append("Light     MaxCLL \(f.hdr.maxCLL) nits, MaxFALL \(f.hdr.maxFALL) nits")
      }
    }
    if let toneMapping { out.append("Tone map  \(toneMapping)") }
    if let audio { out.append("Audio     \(audio)") }
    if let subtitles { out.append("Subtitles \(subtitles)") }
    out.append("Output    \(presentation) on \(device)")
    out.append(
      String(
        format: "Frames    %d shown, %d dropped, %d repeated, A/V %+.1f ms", stats.presented, stats.dropped,
        stats.repeated, stats.avOffset * 1000))
    if let first = stats.firstFrameMs {
      let seeks = stats.seekMsMedian.map { ", seeks \($0) ms median of \(stats.seeks)" } ?? ""
      out.append("Latency   first picture \(first) ms\(seeks)")
    }
    if stats.corruptPackets > 0 { out.append("Damage    \(stats.corruptPackets) corrupt packets skipped") }
    if stats.audioUnderruns > 0 { out.append("Audio gaps \(stats.audioUnderruns) underruns") }
    return out
  }

  /// "H:MM:SS" of a position in seconds.
  /// How the pictures are scanned and shown: the picture on screen's own marks (a stream may change midway), else
  /// the stream's word and the mode; nil for progressive video shown as it is.
  func fieldsLine(_ v: VideoStreamInfo) -> String? {
    let topFirstInStream = ["tt", "tb"].contains(v.fieldOrder)
    let shown: VideoFrame.Fields
    if let fields {
      shown = fields
    } else if v.isInterlaced {
      shown = deinterlace == .no ? .woven(topFirst: topFirstInStream) : .field(topFirst: topFirstInStream, marked: true)
    } else {
      guard deinterlace == .yes else { return nil }
      shown = .field(topFirst: false, marked: false)
    }
    func first(_ top: Bool) -> String { "interlaced, \(top ? "top" : "bottom") field first" }
    switch shown {
    case .progressive: return nil
    case .woven(let top): return "Fields    \(first(top)): shown as stored"
    case .field(let top, let marked):
      return "Fields    \(marked ? first(top) : "not marked interlaced"): each field shown whole (yadif), two "
        + "pictures a frame"
    }
  }

  /// "1:02:03". A time that is not finite or past 10^12 s (a damaged resume file's, a damaged stream's) is said
  /// within those bounds: converting it to an integer trapped, and the player died on opening the file.
  public static func clock(_ seconds: Double) -> String {
    let s = Int(bounded(seconds))
    return String(format: "%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60)
  }

  /// The longest time `clock` says, seconds.
  static let longest = 1e12

  /// `seconds` within what can be said of a time: 0 to `longest`, and 0 for one that is not finite.
  public static func bounded(_ seconds: Double) -> Double {
    seconds.isFinite ? min(max(0, seconds), longest) : 0
  }

  /// `a` and `b` as `clock` writes them, with milliseconds where the seconds alone would read the same
  /// ("0:00:06.500 is past the end (0:00:06.400)").
  public static func clocks(_ a: Double, _ b: Double) -> (String, String) {
    let (x, y) = (clock(a), clock(b))
    guard x == y else { return (x, y) }
    func fine(_ t: Double) -> String {
      let ms = Int((bounded(t) * 1000).rounded())
      return clock(Double(ms / 1000)) + String(format: ".%03d", ms % 1000)
    }
    return (fine(a), fine(b))
  }
}
