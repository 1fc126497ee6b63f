/// Where a picture lands in a target, and how target positions map back to the picture's texels.
/// Thread-safety: a value type.
public struct VideoGeometry: Sendable, Equatable {
  /// The picture's area in target pixels, letterboxed or pillarboxed and centred: x0, y0, x1, y1.
  public var rect: (x0: Int, y0: Int, x1: Int, y1: Int)
  /// Source uv at the picture's top-left corner.
  public var origin: SIMD2<Double>
  /// Source uv change per unit of picture x and y (a rotation or flip).
  public var axisX: SIMD2<Double>
  public var axisY: SIMD2<Double>

  public static func == (a: VideoGeometry, b: VideoGeometry) -> Bool {
    a.rect == b.rect && a.origin == b.origin && a.axisX == b.axisX && a.axisY == b.axisY
  }

  /// Fits a picture of `displayAspect` (width/height as shown) into `width`x`height`, keeping its shape.
  /// - Parameters:
  ///   - rotation: degrees clockwise the picture is turned for display (0, 90, 180, 270).
  public init(displayAspect: Double, rotation: Int, width: Int, height: Int) {
    let targetAspect = Double(width) / Double(max(height, 1))
    var w = Double(width)
    var h = Double(height)
    if displayAspect > targetAspect {
      h = (w / displayAspect).rounded()
    } else {
      w = (h * displayAspect).rounded()
    }
    let x0 = (width - Int(w)) / 2
    let y0 = (height - Int(h)) / 2
    rect = (x0, y0, x0 + Int(w), y0 + Int(h))
    switch ((rotation % 360) + 360) % 360 {
    case 90:
      origin = [0, 1]
      axisX = [0, -1]
      axisY = [1, 0]
    case 180:
      origin = [1, 1]
      axisX = [-1, 0]
      axisY = [0, -1]
    case 270:
      origin = [1, 0]
      axisX = [0, 1]
      axisY = [-1, 0]
    default:
      origin = [0, 0]
      axisX = [1, 0]
      axisY = [0, 1]
    }
  }

  /// The source uv that target pixel centre (x, y) samples, or nil in the black bars.
  public func sourceUV(x: Int, y: Int) -> SIMD2<Double>? {
    let px = Double(x) + 0.5
    let py = Double(y) + 0.5
    guard px >= Double(rect.x0), py >= Double(rect.y0), px < Double(rect.x1), py < Double(rect.y1) else {
      return nil
    }
    let lx = (px - Double(rect.x0)) / Double(rect.x1 - rect.x0)
    let ly = (py - Double(rect.y0)) / Double(rect.y1 - rect.y0)
    return origin + lx * axisX + ly * axisY
  }

  /// The size a picture is shown at natively: its width scaled by the pixel aspect, turned by its rotation.
  public static func naturalSize(width: Int, height: Int, sampleAspect: Double, rotation: Int) -> (Int, Int) {
    let w = max(1, Int((Double(width) * sampleAspect).rounded()))
    return rotation % 180 == 0 ? (w, height) : (height, w)
  }
}
