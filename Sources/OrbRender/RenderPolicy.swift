import CVulkan
import Foundation
import OrbDecode

/// How HDR is brought to SDR: the curve and the display's peak. The source peak comes from each frame's metadata.
/// Thread-safety: a value type.
public struct ToneMapping: Sendable, Equatable {
  public var curve: ToneMapCurve
  /// The display's peak in nits; SDR reference white is 203.
  public var targetPeak: Double

  public init(curve: ToneMapCurve = .default, targetPeak: Double = ToneMapParams.referenceWhiteNits) {
    self.curve = curve
    self.targetPeak = targetPeak
  }

  /// MaxCLL, else the mastering peak, else 1000 nits; HLG's nominal display peak is 1000 nits.
  public func sourcePeak(for frame: VideoFrame) -> Double {
    switch frame.color.transfer {
    case .pq:
      return ToneMapParams.sourcePeak(
        maxCLL: Double(frame.hdr.maxCLL), masteringMax: frame.hdr.mastering?.maxLuminance)
    case .hlg: return ToneMapParams.defaultSourcePeakNits
    default: return targetPeak
    }
  }
}

/// What the HDR table holds: the stream kind and curve, and the peaks it was made for.
struct HDRTableKey: Equatable {
  /// The atlas side in texels (shaders/hdrlut.glsl: 64 slices of 64x64, 8 per row).
  static let atlasSize = 512
  var variant: PipelineVariant
  var sourcePeak: Float
  var targetPeak: Float
}

/// Which fragment-shader variant a frame needs (its specialization constants).
struct PipelineVariant: Hashable {
  /// 0 SDR as it is, 1 PQ, 2 HLG, 3 SDR with BT.2020 primaries.
  var mode: Int32
  var curve: Int32
  var fromBT2020: Bool

  static let sdr = PipelineVariant(mode: 0, curve: 0, fromBT2020: false)

  init(mode: Int32, curve: Int32, fromBT2020: Bool) {
    self.mode = mode
    self.curve = curve
    self.fromBT2020 = fromBT2020
  }

  init(frame: VideoFrame, toneMapping: ToneMapping) {
    let wide = frame.color.primaries == .bt2020
    switch frame.color.transfer {
    case .pq: mode = 1
    case .hlg: mode = 2
    default: mode = wide ? 3 : 0
    }
    curve = mode == 0 ? 0 : toneMapping.curve.shaderID
    fromBT2020 = mode != 0 && wide
  }
}

/// The shader's push constants (shaders/video.frag `Params`), as 32 floats (128 bytes, the guaranteed minimum).
struct PushConstants {
  static let floatCount = 32
  var values: [Float]

  static let black = PushConstants(values: [Float](repeating: 0, count: floatCount))

  init(values: [Float]) { self.values = values }

  init(frame: VideoFrame, geometry g: VideoGeometry, sourcePeak: Double, targetPeak: Double) {
    let m = YUVMatrix(matrix: frame.color.matrix, range: frame.color.range, bitDepth: frame.bitDepth)
    // Chroma of 4:2:0 MPEG-2/H.264 video is sited with the left luma column: sample half a luma pixel right.
    let chromaOffset = 0.5 / Double(frame.width)
    var v: [Double] = [
      Double(g.rect.x0), Double(g.rect.y0), Double(g.rect.x1), Double(g.rect.y1),
      g.axisX.x, g.axisX.y, g.axisY.x, g.axisY.y,
      g.origin.x, g.origin.y, chromaOffset, 0,
      0, frame.sampleScale, 0, 0,
    ]
    for row in m.rows { v += [row.x, row.y, row.z, row.w] }
    v += [sourcePeak, targetPeak, 0, 0]
    values = v.map { Float($0) }
  }
}
