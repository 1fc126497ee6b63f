import Foundation

/// What `--probe` reports about a source: the container and every stream.
/// Thread-safety: a value type.
public struct MediaInfo: Sendable, Encodable {
  public var source: String
  /// FFmpeg's short container name, e.g. "matroska,webm" or "mov,mp4,m4a,3gp,3g2,mj2".
  public var container: String
  public var durationMs: Int64?
  public var bitRate: Int64?
  public var video: [VideoStreamInfo] = []
  public var audio: [AudioStreamInfo] = []
  public var subtitles: [SubtitleStreamInfo] = []
  /// Bits per second the network gave while the source opened (every request of the demuxer's together: an HLS
  /// master's playlists and first segments); nil for a local file or too little data to tell.
  public var throughput: Int64?
  /// What could not be loaded and is left out, in words for the user (an HLS rendition whose playlist is missing).
  public var warnings: [String] = []
  /// The size of the picture a file of sound alone carries (`CoverArt`, as shown), nil without one.
  public var cover: PictureSize?
  /// The container's own title and artist tags (a song's, a film's), nil where it has none.
  public var title: String?
  public var artist: String?
  /// The chapters of a film (Matroska's, MP4's), in order of their start; empty without any.
  public var chapters: [ChapterInfo] = []
  /// A picture alone (a photo): shown for `MediaSource.stillSeconds`, and every time in it is that picture.
  public var isStill = false
  /// The fonts the file carries for its ASS/SSA subtitles (Matroska attachments), which their styles name; kept only
  /// when it has such subtitles. The probe lists their names and sizes.
  public var attachedFonts: [EmbeddedFont] = []

  /// What to call it in a title bar: "Title — Artist", the title alone, or nil without a title tag.
  public var displayTitle: String? {
    guard let title else { return nil }
    return artist.map { "\(title) — \($0)" } ?? title
  }

  public init(source: String, container: String, durationMs: Int64? = nil, bitRate: Int64? = nil) {
    self.source = source
    self.container = container
    self.durationMs = durationMs
    self.bitRate = bitRate
  }

  /// The probe's JSON, keys in snake_case and sorted, pretty-printed; the source without a URL's secrets
  /// (`MediaSource.withoutSecrets`).
  public func json() -> String {
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var shown = self
    shown.source = MediaSource.withoutSecrets(source)
    guard let data = try? encoder.encode(shown) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}

/// A font file a container carries (a Matroska attachment of a font type).
/// Thread-safety: a value type.
public struct EmbeddedFont: Sendable, Encodable, Equatable {
  /// The attachment's file name, "Marker Felt.ttf".
  public var name: String
  /// The font file's bytes (TrueType, OpenType, or a collection).
  public var data: [UInt8]
  public var size: Int { data.count }

  public init(name: String, data: [UInt8]) {
    self.name = name
    self.data = data
  }

  enum CodingKeys: String, CodingKey { case name, size }
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encode(size, forKey: .size)
  }

  /// The MIME types Matroska muxers write for fonts (mkvmerge's old and new names, FFmpeg's).
  static let mimeTypes: Set<String> = [
    "application/x-truetype-font", "application/x-font-ttf", "application/x-font-otf", "application/x-font",
    "application/vnd.ms-opentype", "application/font-sfnt", "font/ttf", "font/otf", "font/sfnt", "font/collection",
  ]
  /// The most font data kept for one file: a release carries a few MB; a CJK font is 10-20.
  static let mostBytes = 128 << 20
}

/// One video stream. Sizes in pixels; `rotation` in degrees clockwise that the picture is turned for display.
public struct VideoStreamInfo: Sendable, Encodable {
  public var index: Int
  public var codec: String
  public var profile: String?
  public var width: Int
  public var height: Int
  /// Frames per second (the stream's average rate, else its base rate).
  public var frameRate: Double?
  /// Sample (pixel) aspect ratio as "num:den"; "1:1" for square pixels.
  public var sampleAspectRatio: String
  public var rotation: Int
  /// The size the picture is shown at: width scaled by the sample aspect ratio, then rotated.
  public var displayWidth: Int
  public var displayHeight: Int
  public var pixelFormat: String
  public var bitDepth: Int
  /// As tagged in the stream ("unknown" when untagged).
  public var colorPrimaries: String
  public var colorTransfer: String
  public var colorMatrix: String
  public var colorRange: String
  /// What the renderer will use: the tags, with untagged fields guessed from size and format.
  public var effectiveColor: EffectiveColor
  public var mastering: HDRMetadata.Mastering?
  public var maxCll: Int?
  public var maxFall: Int?
  public var frameCount: Int64?
  public var isDefault: Bool
  /// An HLS variant's advertised bandwidth (bits/s), for a stream of a master playlist.
  public var variantBitrate: Int64? = nil
  /// How its pictures were scanned, as the stream says: "progressive", or interlaced with the top field first
  /// ("tt", or "tb": coded bottom first) or the bottom field first ("bb", "bt"); "unknown" where it does not say.
  public var fieldOrder = "unknown"

  /// Whether each coded picture is a single field (HEVC's way with 1080i and 576i): `height`, `frameRate` and
  /// `frameCount` are then those of the frames two fields make.
  public var codedAsFields = false

  /// Whether the stream says its pictures are interlaced.
  public var isInterlaced: Bool { ["tt", "bb", "tb", "bt"].contains(fieldOrder) }

  public struct EffectiveColor: Sendable, Encodable {
    public var matrix: String
    public var range: String
    public var primaries: String
    public var transfer: String

    public init(matrix: String, range: String, primaries: String, transfer: String) {
      self.matrix = matrix
      self.range = range
      self.primaries = primaries
      self.transfer = transfer
    }

    /// PQ or HLG: pictures to tone-map.
    public var isHDR: Bool { ColorInfo.Transfer(rawValue: transfer)?.isHDR ?? false }
  }

  public init(
    index: Int, codec: String, profile: String?, width: Int, height: Int, frameRate: Double?,
    sampleAspectRatio: String, rotation: Int, displayWidth: Int, displayHeight: Int, pixelFormat: String,
    bitDepth: Int, colorPrimaries: String, colorTransfer: String, colorMatrix: String, colorRange: String,
    effectiveColor: EffectiveColor, mastering: HDRMetadata.Mastering?, maxCll: Int?, maxFall: Int?,
    frameCount: Int64?, isDefault: Bool, variantBitrate: Int64? = nil, fieldOrder: String = "unknown",
    codedAsFields: Bool = false
  ) {
    self.fieldOrder = fieldOrder
    self.codedAsFields = codedAsFields
    self.index = index
    self.codec = codec
    self.profile = profile
    self.width = width
    self.height = height
    self.frameRate = frameRate
    self.sampleAspectRatio = sampleAspectRatio
    self.rotation = rotation
    self.displayWidth = displayWidth
    self.displayHeight = displayHeight
    self.pixelFormat = pixelFormat
    self.bitDepth = bitDepth
    self.colorPrimaries = colorPrimaries
    self.colorTransfer = colorTransfer
    self.colorMatrix = colorMatrix
    self.colorRange = colorRange
    self.effectiveColor = effectiveColor
    self.mastering = mastering
    self.maxCll = maxCll
    self.maxFall = maxFall
    self.frameCount = frameCount
    self.isDefault = isDefault
    self.variantBitrate = variantBitrate
  }
}

/// One audio stream.
public struct AudioStreamInfo: Sendable, Encodable {
  public var index: Int
  public var codec: String
  public var profile: String?
  public var channels: Int
  public var channelLayout: String?
  public var sampleRate: Int
  public var language: String?
  public var title: String?
  public var isDefault: Bool
  /// An HLS variant's advertised bandwidth (bits/s), for a stream of a master playlist.
  public var variantBitrate: Int64? = nil
}

/// One subtitle stream.
public struct SubtitleStreamInfo: Sendable, Encodable {
  public var index: Int
  public var codec: String
  public var language: String?
  public var title: String?
  public var isDefault: Bool
  public var isForced: Bool
  /// Text subtitles can be styled by the player; bitmap ones (PGS, DVD) are pictures.
  public var isText: Bool
}

/// Which variant of an HLS master playlist plays (`--hls-bitrate`, as mpv's): the highest, the lowest, or the highest
/// within a bandwidth in bits per second (the lowest when none is).
/// Thread-safety: a value type.
public enum VariantChoice: Sendable, Equatable {
  case highest
  case lowest
  case atMost(Int64)
  /// The cheapest variant that fills a screen of this many pixels (its width or its height reaches the screen's),
  /// else the largest: a variant bigger than the screen is never seen at its size, and costs its bandwidth and
  /// decoding all the same. Then no more than three quarters of the throughput measured while the source opened
  /// (`MediaInfo.throughput`), else the lowest. What a window plays unless `--hls-bitrate` says otherwise.
  case fitting(width: Int, height: Int)

  /// Reads `max`, `min` or a number of bits per second (`3000000`, `3M`, `800k`); nil for anything else.
  public init?(_ text: String) {
    switch text.lowercased() {
    case "max": self = .highest
    case "min": self = .lowest
    default:
      let lower = text.lowercased()
      let scale: Double = lower.hasSuffix("m") ? 1e6 : lower.hasSuffix("k") ? 1e3 : 1
      let digits = scale == 1 ? lower : String(lower.dropLast())
      guard let value = Double(digits), value > 0, value * scale < 1e15 else { return nil }
      self = .atMost(Int64(value * scale))
    }
  }
}

/// A picture's width and height in pixels.
/// Thread-safety: a value.
public struct PictureSize: Sendable, Encodable, Equatable {
  public var width: Int
  public var height: Int

  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }
}

/// One chapter: where it starts and ends, and its title if it has one.
/// Thread-safety: a value.
public struct ChapterInfo: Sendable, Encodable, Equatable {
  public var startMs: Int64
  public var endMs: Int64
  public var title: String?

  public init(startMs: Int64, endMs: Int64, title: String?) {
    self.startMs = startMs
    self.endMs = endMs
    self.title = title
  }

  /// Where it starts, in seconds of the media.
  public var start: Double { Double(startMs) / 1000 }
}
