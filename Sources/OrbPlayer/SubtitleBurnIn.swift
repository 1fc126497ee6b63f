import Foundation
import OrbDecode
import OrbRender

/// Draws subtitle cues into a rendered picture, as a screenshot of the window would show them: bitmap cues (PGS, DVD,
/// DVB) with each bitmap's canvas mapped onto the picture's area of the target, scaled bilinearly, blended over it;
/// the cues of an ASS/SSA script drawn by libass over that area. (Other text cues are the window's to draw, with its
/// labels; `--frame-at` leaves them out.)
/// Thread-safety: stateless.
enum SubtitleBurnIn {
  /// - Parameters:
  ///   - pixels: RGBA rows, `width` * 4 bytes each, opaque.
  ///   - area: where the picture lies in the target (`VideoGeometry.rect`).
  ///   - time: the media time the cues are drawn at (a script's cue may move or fade).
  ///   - fonts: the fonts the media carries for its scripts.
  ///   - storage: the picture's natural size (its pixel aspect and rotation applied), for libass's proportions.
  static func draw(
    _ cues: [SubtitleCue], into pixels: inout [UInt8], width: Int, height: Int,
    area: (x0: Int, y0: Int, x1: Int, y1: Int), at time: Double = 0, fonts: [EmbeddedFont] = [],
    storage: (width: Int, height: Int) = (0, 0)
  ) {
    drawScripts(cues, into: &pixels, width: width, area: area, at: time, fonts: fonts, storage: storage)
    let areaWidth = Double(area.x1 - area.x0)
    let areaHeight = Double(area.y1 - area.y0)
    for bitmap in cues.flatMap(\.bitmaps) where bitmap.canvasWidth > 0 && bitmap.canvasHeight > 0 {
      let sx = areaWidth / Double(bitmap.canvasWidth)
      let sy = areaHeight / Double(bitmap.canvasHeight)
      let x0 = max(0, Int((Double(area.x0) + Double(bitmap.x) * sx).rounded(.down)))
      let y0 = max(0, Int((Double(area.y0) + Double(bitmap.y) * sy).rounded(.down)))
      let x1 = min(width, Int((Double(area.x0) + Double(bitmap.x + bitmap.width) * sx).rounded(.up)))
      let y1 = min(height, Int((Double(area.y0) + Double(bitmap.y + bitmap.height) * sy).rounded(.up)))
      guard x0 < x1, y0 < y1 else { continue }
      for y in y0..<y1 {
        // The bitmap texel under this target pixel's centre.
        let v = (Double(y) + 0.5 - Double(area.y0)) / sy - Double(bitmap.y) - 0.5
        for x in x0..<x1 {
          let u = (Double(x) + 0.5 - Double(area.x0)) / sx - Double(bitmap.x) - 0.5
          let source = sample(bitmap, u, v)
          guard source.a > 0 else { continue }
          let to = (y * width + x) * 4
          for c in 0..<3 {
            let over = source.rgb[c] * source.a + Double(pixels[to + c]) * (1 - source.a)
            pixels[to + c] = UInt8(max(0, min(255, over.rounded())))
          }
        }
      }
    }
  }

  /// The script cues among `cues`, drawn by libass at the area's size and blended over it.
  private static func drawScripts(
    _ cues: [SubtitleCue], into pixels: inout [UInt8], width: Int, area: (x0: Int, y0: Int, x1: Int, y1: Int),
    at time: Double, fonts: [EmbeddedFont], storage: (width: Int, height: Int)
  ) {
    let scripted = cues.compactMap { cue in cue.assEvent.map { ASSRenderer.Cue($0, start: cue.start, end: cue.end) } }
    guard !scripted.isEmpty, let renderer = ASSRenderer(fonts: fonts) else { return }
    renderer.show(scripted)
    guard
      case .picture(let picture?) = renderer.render(
        at: time, width: area.x1 - area.x0, height: area.y1 - area.y0, storageWidth: storage.width,
        storageHeight: storage.height)
    else { return }
    for row in 0..<picture.height {
      for column in 0..<picture.width {
        let p = picture.pixel(column, row)
        guard p.a > 0 else { continue }
        let to = ((area.y0 + picture.y + row) * width + area.x0 + picture.x + column) * 4
        let rest = 255 - Int(p.a)
        // Premultiplied over opaque.
        pixels[to] = UInt8((Int(p.r) * 255 + Int(pixels[to]) * rest + 127) / 255)
        pixels[to + 1] = UInt8((Int(p.g) * 255 + Int(pixels[to + 1]) * rest + 127) / 255)
        pixels[to + 2] = UInt8((Int(p.b) * 255 + Int(pixels[to + 2]) * rest + 127) / 255)
      }
    }
  }

  /// Bilinear sample of straight-alpha RGBA at texel coordinates (`u`, `v`), outside the bitmap transparent;
  /// colour weighted by alpha, so transparent texels do not darken edges.
  private static func sample(_ b: SubtitleBitmap, _ u: Double, _ v: Double) -> (rgb: [Double], a: Double) {
    let fx = u.rounded(.down)
    let fy = v.rounded(.down)
    let tx = u - fx
    let ty = v - fy
    var rgb = [0.0, 0.0, 0.0]
    var alpha = 0.0
    for (dx, dy, w) in [(0, 0, (1 - tx) * (1 - ty)), (1, 0, tx * (1 - ty)), (0, 1, (1 - tx) * ty), (1, 1, tx * ty)] {
      let x = Int(fx) + dx
      let y = Int(fy) + dy
      guard w > 0, x >= 0, y >= 0, x < b.width, y < b.height else { continue }
      let i = (y * b.width + x) * 4
      let a = Double(b.rgba[i + 3]) / 255 * w
      for c in 0..<3 { rgb[c] += Double(b.rgba[i + c]) * a }
      alpha += a
    }
    guard alpha > 0 else { return ([0, 0, 0], 0) }
    return (rgb.map { $0 / alpha }, alpha)
  }
}
