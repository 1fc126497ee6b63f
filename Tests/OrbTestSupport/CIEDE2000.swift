import Foundation

/// Colour difference as people see it: CIEDE2000 between two 8-bit sRGB-encoded pixels (D65).
/// About 1 is a just-noticeable difference; 3 is visible side by side.
public enum CIEDE2000 {
  /// 8-bit sRGB → CIELAB (D65).
  public static func lab(_ c: RGB) -> (l: Double, a: Double, b: Double) {
    func linear(_ v: Int) -> Double {
      let s = Double(v) / 255
      return s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4)
    }
    let r = linear(c.r)
    let g = linear(c.g)
    let b = linear(c.b)
    let x = (0.412_456_4 * r + 0.357_576_1 * g + 0.180_437_5 * b) / 0.950_47
    let y = 0.212_672_9 * r + 0.715_152_2 * g + 0.072_175_0 * b
    let z = (0.019_333_9 * r + 0.119_192_0 * g + 0.950_304_1 * b) / 1.088_83
    func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
    return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
  }

  /// ΔE00 between two pixels (Sharma, Wu and Dalal's formulation, kL = kC = kH = 1).
  public static func difference(_ p: RGB, _ q: RGB) -> Double {
    difference(lab: lab(p), lab(q))
  }

  /// ΔE00 between two CIELAB colours (Sharma, Wu and Dalal's formulation, kL = kC = kH = 1).
  public static func difference(
    lab p: (l: Double, a: Double, b: Double), _ q: (l: Double, a: Double, b: Double)
  ) -> Double {
    let (l1, a1, b1) = p
    let (l2, a2, b2) = q
    let c1 = (a1 * a1 + b1 * b1).squareRoot()
    let c2 = (a2 * a2 + b2 * b2).squareRoot()
    let cMean = (c1 + c2) / 2
    let c7 = pow(cMean, 7)
    let g = 0.5 * (1 - (c7 / (c7 + pow(25, 7))).squareRoot())
    let a1p = (1 + g) * a1
    let a2p = (1 + g) * a2
    let c1p = (a1p * a1p + b1 * b1).squareRoot()
    let c2p = (a2p * a2p + b2 * b2).squareRoot()
    func hue(_ b: Double, _ a: Double) -> Double {
      if a == 0 && b == 0 { return 0 }
      let h = atan2(b, a) * 180 / .pi
      return h < 0 ? h + 360 : h
    }
    let h1p = hue(b1, a1p)
    let h2p = hue(b2, a2p)
    let dLp = l2 - l1
    let dCp = c2p - c1p
    var dhp = 0.0
    if c1p * c2p != 0 {
      dhp = h2p - h1p
      if dhp > 180 { dhp -= 360 } else if dhp < -180 { dhp += 360 }
    }
    let dHp = 2 * (c1p * c2p).squareRoot() * sin(dhp / 2 * .pi / 180)
    let lMean = (l1 + l2) / 2
    let cpMean = (c1p + c2p) / 2
    var hMean = h1p + h2p
    if c1p * c2p != 0 {
      if abs(h1p - h2p) <= 180 {
        hMean /= 2
      } else {
        hMean = h1p + h2p < 360 ? (h1p + h2p + 360) / 2 : (h1p + h2p - 360) / 2
      }
    }
    let rad = Double.pi / 180
    let t =
      1 - 0.17 * cos((hMean - 30) * rad) + 0.24 * cos(2 * hMean * rad) + 0.32 * cos((3 * hMean + 6) * rad)
      - 0.20 * cos((4 * hMean - 63) * rad)
    let dTheta = 30 * exp(-pow((hMean - 275) / 25, 2))
    let cp7 = pow(cpMean, 7)
    let rc = 2 * (cp7 / (cp7 + pow(25, 7))).squareRoot()
    let sl = 1 + 0.015 * pow(lMean - 50, 2) / (20 + pow(lMean - 50, 2)).squareRoot()
    let sc = 1 + 0.045 * cpMean
    let sh = 1 + 0.015 * cpMean * t
    let rt = -sin(2 * dTheta * rad) * rc
    let termL = dLp / sl
    let termC = dCp / sc
    let termH = dHp / sh
    return (termL * termL + termC * termC + termH * termH + rt * termC * termH).squareRoot()
  }

  /// Mean and 95th percentile of ΔE00 over every `step`-th pixel of two images of one size.
  public static func statistics(_ a: RGBImage, _ b: RGBImage, step: Int = 1) -> (mean: Double, p95: Double) {
    precondition(a.width == b.width && a.height == b.height)
    var all: [Double] = []
    for y in stride(from: 0, to: a.height, by: step) {
      for x in stride(from: 0, to: a.width, by: step) {
        all.append(difference(a.pixel(x: x, y: y), b.pixel(x: x, y: y)))
      }
    }
    all.sort()
    guard !all.isEmpty else { return (0, 0) }
    return (all.reduce(0, +) / Double(all.count), all[min(all.count - 1, Int(Double(all.count) * 0.95))])
  }

  /// Mean ΔE00 over every pixel of two images of one size.
  public static func mean(_ a: RGBImage, _ b: RGBImage, step: Int = 1) -> Double {
    precondition(a.width == b.width && a.height == b.height)
    var total = 0.0
    var count = 0
    for y in stride(from: 0, to: a.height, by: step) {
      for x in stride(from: 0, to: a.width, by: step) {
        total += difference(a.pixel(x: x, y: y), b.pixel(x: x, y: y))
        count += 1
      }
    }
    return total / Double(max(1, count))
  }
}
