import CVulkan
import Foundation
import OrbDecode

/// How HDR is brought to SDR: the curve, the display's peak, and whether the peak is measured in the picture
/// (`--hdr-peak-detect`). The content's peak and black come from each frame's metadata.
/// Thread-safety: a value type.
public struct ToneMapping: Sendable, Equatable {
  public var curve: ToneMapCurve
  /// The display's peak in nits; SDR reference white is 203.
  public var targetPeak: Double
  /// Tone-map from the peak measured in the pictures (smoothed over time, `PeakDetector`), not from the metadata's.
  public var peakDetect: Bool

  public init(
    curve: ToneMapCurve = .default, targetPeak: Double = ToneMapParams.referenceWhiteNits, peakDetect: Bool = true
  ) {
    self.curve = curve
    self.targetPeak = targetPeak
    self.peakDetect = peakDetect
  }

  /// Whether the peak is measured for a stream with `params`: asked for, and there is something to compress.
  public func measuresPeak(_ params: ToneMapParams) -> Bool { peakDetect && params.contentPeak > params.targetPeak }

  /// The parameters for `frame` before any peak is measured: nil for SDR.
  public func params(for frame: VideoFrame) -> ToneMapParams? {
    ToneMapParams(color: frame.color, metadata: frame.hdr, curve: curve, targetPeak: targetPeak)
  }
}

/// What the HDR table holds: the stream kind and curve, and the peaks and black it was made for.
struct HDRTableKey: Equatable, Sendable {
  /// The atlas side in texels (shaders/hdrlut.glsl: 64 slices of 64x64, 8 per row).
  static let atlasSize = 512
  var variant: PipelineVariant
  /// The push constants' `hdr` vector: curve peak, target peak, content peak, source black.
  var hdr: [Float]

  /// Whether a table made for `self` serves `wanted` as well: the same stream kind and all but the curve peak, and
  /// that within `peakTolerance` (as square roots, the way the detected peak moves). A measured peak drifts a little
  /// at every picture; refilling the table for each drift would cost a table's worth of shading per frame.
  func serves(_ wanted: HDRTableKey) -> Bool {
    guard variant == wanted.variant, hdr.count == 4, wanted.hdr.count == 4, hdr[1...] == wanted.hdr[1...] else {
      return false
    }
    return abs(hdr[0].squareRoot() - wanted.hdr[0].squareRoot()) <= Self.peakTolerance * wanted.hdr[0].squareRoot()
  }

  /// The relative change of √peak a table absorbs: 1.5 %, about 3 % of the peak (white near the peak moves by less
  /// than one 8-bit code). While the smoothed peak settles after a scene change, that is a new table every few
  /// pictures instead of every picture (each costs a 64³ evaluation of the colour math: ~15 ms on lavapipe).
  static let peakTolerance: Float = 0.015
}

/// Which fragment-shader variant a frame needs (its specialization constants).
struct PipelineVariant: Hashable, Sendable {
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

  init(frame: VideoFrame, geometry g: VideoGeometry, toneMap: ToneMapParams?) {
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
    let t = toneMap ?? ToneMapParams(sourcePeak: ToneMapParams.referenceWhiteNits)
    v += [t.sourcePeak, t.targetPeak, t.contentPeak, t.sourceBlack]
    values = v.map { Float($0) }
  }
}

/// The tone-mapping parameters of each HDR picture, with the peak measured as it plays (`ToneMapping.peakDetect`):
/// the light of the pictures drawn so far, reset when a seek starts a new generation; a frame drawn again (at a new
/// size) is not measured twice.
/// Thread-safety: a value type, owned by whoever draws (the renderer, or `FrameDrawer` on the CPU).
struct PeakTracking {
  private var peaks = PeakDetector()
  private weak var measured: VideoFrame?
  private var measuredGeneration: Int?

  /// The parameters for `frame`, its peak measured when `toneMapping` asks; nil for SDR.
  mutating func params(for frame: VideoFrame, toneMapping: ToneMapping) -> ToneMapParams? {
    guard var params = toneMapping.params(for: frame) else { return nil }
    if toneMapping.measuresPeak(params) {
      if measuredGeneration != frame.generation { peaks.reset() }
      if measured !== frame, let light = FrameLight.measure(frame, params: params) {
        peaks.add(light)
        measured = frame
        measuredGeneration = frame.generation
      }
      params.sourcePeak = peaks.curvePeak(contentPeak: params.contentPeak, targetPeak: params.targetPeak)
    }
    return params
  }
}
