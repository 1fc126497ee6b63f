import CGtk
import Foundation
import OrbRender

/// What libass drew for an ASS script (`ASSRenderer.Picture`), laid over its part of the video. Under GTK's cairo
/// renderer (no GPU) a drawing area over the whole video paints libass's masks themselves, each an A8 surface filled
/// with its colour (pixman blends them): GTK 4.8 draws a memory texture by converting every pixel through floats at
/// every draw, and a sign that moved each frame cost 28 % of the CPU of a 1080p playback in that conversion alone,
/// and an ARGB picture of the box around a moving sign and the dialogue, made each frame, megabytes of memory mapped
/// and unmapped each time. With GL the picture is a premultiplied memory texture in a picture widget placed by its
/// margins, which GL takes as it is.
/// Thread-safety: main actor (compiler-checked).
final class ScriptLayer {
  let widget: UnsafeMutablePointer<GtkWidget>
  private let cairo = WindowRenderer.isCairo
  /// The picture's masks as cairo A8 surfaces that own their pixels, with their colour and place in device pixels of
  /// the area (cairo mode): a recording of a draw holds its own references.
  private var masks: [(surface: OpaquePointer, color: [Double], x: Double, y: Double)] = []
  /// Where the picture lies in the video's area, in device pixels: x, y, width, height; empty when there is none.
  private(set) var place: [Int] = []
  /// Where the video's area was when painted (cairo mode): its top left in logical pixels, on a device pixel, and the
  /// device scale.
  private var origin: [Double] = []

  init() {
    if cairo {
      widget = orb_drawing_area_new_image()  // read out as the picture widget is
      Signals.draw(widget) { [weak self] cr, _, _ in self?.paint(cr) }
    } else {
      widget = gtk_picture_new()
      gtk_picture_set_content_fit(opaque(widget), GTK_CONTENT_FIT_FILL)
      gtk_picture_set_can_shrink(opaque(widget), 1)
    }
    gtk_widget_set_can_target(widget, 0)  // clicks go through to the video
    gtk_widget_set_visible(widget, 0)
  }

  isolated deinit { dropMasks() }

  private func dropMasks() {
    for mask in masks { cairo_surface_destroy(mask.surface) }
    masks = []
  }

  /// Whether it wants libass's masks (`ASSRenderer.render(…, masks: true)`) rather than a composed picture.
  var takesMasks: Bool { cairo }

  /// Shows `picture` (placed by the next `layout`).
  func show(_ picture: ASSRenderer.Picture) {
    place = [picture.x, picture.y, picture.width, picture.height]
    if cairo {
      dropMasks()
      for mask in picture.masks {
        guard let made = cairo_image_surface_create(CAIRO_FORMAT_A8, Int32(mask.width), Int32(mask.height)) else {
          continue
        }
        let stride = Int(cairo_image_surface_get_stride(made))
        guard let data = cairo_image_surface_get_data(made) else {
          cairo_surface_destroy(made)
          continue
        }
        cairo_surface_flush(made)
        mask.coverage.withUnsafeBufferPointer { coverage in
          for row in 0..<mask.height {
            (data + row * stride).update(from: coverage.baseAddress! + row * mask.width, count: mask.width)
          }
        }
        cairo_surface_mark_dirty(made)
        let color = [mask.red, mask.green, mask.blue, mask.opacity].map { Double($0) / 255 }
        masks.append((made, color, Double(mask.x), Double(mask.y)))
      }
      origin = []  // painted again at the next layout
    } else {
      let bytes = picture.bgra.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
      let texture = gdk_memory_texture_new(
        Int32(picture.width), Int32(picture.height), GDK_MEMORY_B8G8R8A8_PREMULTIPLIED, bytes, gsize(picture.width * 4))
      g_bytes_unref(bytes)
      gtk_picture_set_paintable(opaque(widget), texture)
      if let texture { g_object_unref(UnsafeMutableRawPointer(texture)) }
    }
    gtk_widget_set_visible(widget, 1)
  }

  /// Shows nothing.
  func hide() {
    place = []
    origin = []
    gtk_widget_set_visible(widget, 0)
    if cairo {
      dropMasks()
    } else {
      gtk_picture_set_paintable(opaque(widget), nil)
    }
  }

  /// Puts the picture where it lies over the video's area, whose top left is (`x`, `y`) in the widget (logical
  /// pixels) and which is drawn at `factor` device pixels a logical one, in a widget `width` by `height`.
  func layout(x areaX: Double, y areaY: Double, factor: Double, width: Double, height: Double) {
    guard place.count == 4 else { return }
    if cairo {
      // On a whole device pixel: a letterboxed area starts between two (a 16:9 picture in a 1366x768 window at
      // x = 0.33), and a mask moved by a fraction is filtered, its text blurred.
      let wanted = [(areaX * factor).rounded() / factor, (areaY * factor).rounded() / factor, factor]
      guard wanted != origin else { return }
      origin = wanted
      gtk_widget_queue_draw(widget)
      return
    }
    let (x, y) = (areaX + Double(place[0]) / factor, areaY + Double(place[1]) / factor)
    let (w, h) = (Double(place[2]) / factor, Double(place[3]) / factor)
    gtk_widget_set_margin_start(widget, Int32(max(0, x.rounded())))
    gtk_widget_set_margin_top(widget, Int32(max(0, y.rounded())))
    gtk_widget_set_margin_end(widget, Int32(max(0, (width - x - w).rounded())))
    gtk_widget_set_margin_bottom(widget, Int32(max(0, (height - y - h).rounded())))
  }

  /// Paints each mask in its colour at its place (cairo mode), in libass's order.
  private func paint(_ cr: OpaquePointer) {
    guard origin.count == 3 else { return }
    cairo_save(cr)
    // From the area's top left, in device pixels: the masks' own frame.
    cairo_translate(cr, origin[0], origin[1])
    cairo_scale(cr, 1 / origin[2], 1 / origin[2])
    for mask in masks {
      cairo_set_source_rgba(cr, mask.color[0], mask.color[1], mask.color[2], mask.color[3])
      cairo_mask_surface(cr, mask.surface, mask.x, mask.y)
    }
    cairo_restore(cr)
  }
}
