import CGtk
import Foundation
import OrbPlayer

/// `s`: the picture as it is on screen (the video and its subtitles, without the controls) saved as a PNG in the
/// user's Pictures folder (XDG), named after the media and the position.
/// Thread-safety: main actor (compiler-checked).
enum Screenshot {
  /// The folder screenshots go to: XDG's Pictures folder, else ~/Pictures (made if missing).
  static var folder: String {
    if let special = g_get_user_special_dir(G_USER_DIRECTORY_PICTURES) { return String(cString: special) }
    return String(cString: g_get_home_dir()) + "/Pictures"
  }

  /// Renders `widget` with the window's renderer and writes it to a new file in `folder`.
  /// - Returns: the file's path, or why it could not be written.
  static func save(_ widget: UnsafeMutablePointer<GtkWidget>, name: String, position: Double) -> Result<
    String, ScreenshotError
  > {
    let w = gtk_widget_get_width(widget)
    let h = gtk_widget_get_height(widget)
    guard w > 0, h > 0, let native = gtk_widget_get_native(widget), let renderer = gtk_native_get_renderer(native)
    else { return .failure(ScreenshotError(message: "the window is not shown")) }
    let paintable = gtk_widget_paintable_new(widget)
    defer { g_object_unref(UnsafeMutableRawPointer(paintable)) }
    let snapshot = gtk_snapshot_new()
    gdk_paintable_snapshot(paintable, snapshot, Double(w), Double(h))
    guard let node = gtk_snapshot_free_to_node(snapshot) else {
      return .failure(ScreenshotError(message: "nothing to draw yet"))
    }
    defer { gsk_render_node_unref(node) }
    guard let texture = gsk_renderer_render_texture(renderer, node, nil) else {
      return .failure(ScreenshotError(message: "the picture could not be drawn"))
    }
    defer { g_object_unref(UnsafeMutableRawPointer(texture)) }
    let dir = folder
    do {
      try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    } catch {
      return .failure(ScreenshotError(message: "cannot make \(dir): \(error.localizedDescription)"))
    }
    let path = uniquePath(in: dir, name: name, position: position)
    guard gdk_texture_save_to_png(texture, path) != 0 else {
      return .failure(ScreenshotError(message: "cannot write \(path)"))
    }
    return .success(path)
  }

  /// "clip.mkv 0-01-23.456.png", with " (2)" and so on when that file exists.
  static func uniquePath(in dir: String, name: String, position: Double) -> String {
    let ms = Int((StatsText.bounded(position) * 1000).rounded())
    let stamp = String(format: "%d-%02d-%02d.%03d", ms / 3_600_000, (ms / 60000) % 60, (ms / 1000) % 60, ms % 1000)
    let safe = name.replacingOccurrences(of: "/", with: "_")
    var path = "\(dir)/\(safe) \(stamp).png"
    var n = 2
    while FileManager.default.fileExists(atPath: path) {
      path = "\(dir)/\(safe) \(stamp) (\(n)).png"
      n += 1
    }
    return path
  }
}

/// Why a screenshot was not written.
struct ScreenshotError: Error, CustomStringConvertible {
  var message: String
  var description: String { message }
}
