/// Where a channel of interleaved audio is meant to be heard, named as FFmpeg names its native channels.
/// Thread-safety: a value type.
public enum ChannelPosition: String, Sendable, CaseIterable {
  case frontLeft = "FL"
  case frontRight = "FR"
  case frontCenter = "FC"
  case lowFrequency = "LFE"
  case backLeft = "BL"
  case backRight = "BR"
  case sideLeft = "SL"
  case sideRight = "SR"
  case backCenter = "BC"
  /// A channel the down-mix does not know; it is dropped.
  case unknown = "?"
}

/// The order of the channels in interleaved audio (FFmpeg's native order).
/// Thread-safety: a value type.
public struct ChannelLayout: Sendable, Equatable, CustomStringConvertible {
  /// One position per channel, in interleaving order.
  public var positions: [ChannelPosition]

  public init(_ positions: [ChannelPosition]) { self.positions = positions }

  /// The number of channels.
  public var count: Int { positions.count }

  /// One channel, heard equally on both speakers.
  public static let mono = ChannelLayout([.frontCenter])
  public static let stereo = ChannelLayout([.frontLeft, .frontRight])
  /// 5.1 in FFmpeg order: FL FR FC LFE and the two surrounds (BL BR for "5.1(back)", SL SR for "5.1(side)"; both
  /// are mixed the same way).
  public static let surround51 = ChannelLayout([
    .frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight,
  ])
  /// 7.1 in FFmpeg order: FL FR FC LFE BL BR SL SR.
  public static let surround71 = ChannelLayout([
    .frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight, .sideLeft, .sideRight,
  ])

  /// The layout FFmpeg assumes for a channel count: mono, stereo, 2.1, 4.0, 5.0, 5.1, 6.1, 7.1; beyond eight
  /// channels the first two are taken as front left and right and the rest are dropped.
  public static func `default`(channels: Int) -> ChannelLayout {
    switch channels {
    case 1: return .mono
    case 2: return .stereo
    case 3: return ChannelLayout([.frontLeft, .frontRight, .lowFrequency])
    case 4: return ChannelLayout([.frontLeft, .frontRight, .frontCenter, .backCenter])
    case 5: return ChannelLayout([.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight])
    case 6: return .surround51
    case 7:
      return ChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backCenter, .sideLeft, .sideRight])
    case 8: return .surround71
    default:
      let rest = [ChannelPosition](repeating: .unknown, count: max(0, channels - 2))
      return ChannelLayout(Array([.frontLeft, .frontRight].prefix(max(0, channels))) + rest)
    }
  }

  public var description: String { positions.map(\.rawValue).joined(separator: " ") }
}
