import CGtk
import OrbDecode

/// What a key asks for (mpv's keys where mpv has one): the key map, apart from what carrying it out takes.
/// Thread-safety: a value type.
enum KeyCommand: Equatable {
  case togglePause
  /// `q`; Escape leaves fullscreen first (`quitOrLeaveFullscreen`).
  case quit
  case quitOrLeaveFullscreen
  case nextAudioTrack
  case slower, faster, normalSpeed
  case toggleMute
  /// Volume up or down by this many percent.
  case volume(Double)
  case toggleStats
  case toggleFullscreen
  /// Seek by this many seconds.
  case seek(Double)
  /// `.` / `,`: one frame forward or back, pausing.
  case frameStep(forward: Bool)
  /// `s`: the picture as shown, subtitles included, saved as a PNG.
  case screenshot
  /// `?`: the window listing every key.
  case showShortcuts
  /// `>` / `<`: the next or previous entry of the playlist.
  case nextFile, previousFile
  /// `j`: the next subtitle track, then none.
  case nextSubtitleTrack
  /// `z` / `x`: show subtitles this many seconds later (negative: earlier).
  case subtitleDelay(Double)
  /// Ctrl+minus, Ctrl+plus: the sound 100 ms earlier, later (mpv's keys).
  case audioDelay(Double)
  /// `L`: play the file again from its start when it ends, or not.
  case toggleLoop
  /// Page Down / Page Up: the next chapter, or back to this one's start or the one before (`ChapterStep`).
  case chapter(forward: Bool)
  /// `d`: deinterlace pictures marked interlaced, then every picture, then none.
  case cycleDeinterlace

  /// - Parameter shift: whether Shift is held (Shift+Left/Right seek one second); `control`, Ctrl.
  init?(keyval: guint, shift: Bool = false, control: Bool = false) {
    switch Int32(keyval) {
    // (A `where` holds for the one pattern before it: each is given its own.)
    case GDK_KEY_plus where control, GDK_KEY_equal where control, GDK_KEY_KP_Add where control:
      self = .audioDelay(0.1)
    case GDK_KEY_minus where control, GDK_KEY_KP_Subtract where control:
      self = .audioDelay(-0.1)
    case GDK_KEY_Left where shift: self = .seek(-1)
    case GDK_KEY_Right where shift: self = .seek(1)
    case GDK_KEY_space, GDK_KEY_p, GDK_KEY_k: self = .togglePause
    case GDK_KEY_q, GDK_KEY_Q: self = .quit
    case GDK_KEY_Escape: self = .quitOrLeaveFullscreen
    case GDK_KEY_numbersign: self = .nextAudioTrack
    case GDK_KEY_bracketleft: self = .slower
    case GDK_KEY_bracketright: self = .faster
    case GDK_KEY_BackSpace: self = .normalSpeed
    case GDK_KEY_m, GDK_KEY_M: self = .toggleMute
    case GDK_KEY_9: self = .volume(-5)
    case GDK_KEY_0: self = .volume(5)
    case GDK_KEY_i, GDK_KEY_I: self = .toggleStats
    case GDK_KEY_f, GDK_KEY_F: self = .toggleFullscreen
    case GDK_KEY_Left: self = .seek(-5)
    case GDK_KEY_Right: self = .seek(5)
    case GDK_KEY_Up: self = .seek(60)
    case GDK_KEY_Down: self = .seek(-60)
    case GDK_KEY_period: self = .frameStep(forward: true)
    case GDK_KEY_comma: self = .frameStep(forward: false)
    case GDK_KEY_s: self = .screenshot
    case GDK_KEY_question: self = .showShortcuts
    case GDK_KEY_greater: self = .nextFile
    case GDK_KEY_less: self = .previousFile
    case GDK_KEY_j: self = .nextSubtitleTrack
    case GDK_KEY_z: self = .subtitleDelay(-0.1)
    case GDK_KEY_x: self = .subtitleDelay(0.1)
    case GDK_KEY_L: self = .toggleLoop
    case GDK_KEY_d: self = .cycleDeinterlace
    case GDK_KEY_Page_Down, GDK_KEY_KP_Page_Down: self = .chapter(forward: true)
    case GDK_KEY_Page_Up, GDK_KEY_KP_Page_Up: self = .chapter(forward: false)
    default: return nil
    }
  }

  /// The mode `d` turns to from `mode`, and what the screen says of it.
  static func deinterlace(after mode: DeinterlaceMode) -> (mode: DeinterlaceMode, message: String) {
    switch mode {
    case .auto: return (.yes, "Deinterlace: every picture")
    case .yes: return (.no, "Deinterlace: off")
    case .no: return (.auto, "Deinterlace: pictures marked interlaced")
    }
  }

  /// The speeds `[` and `]` step through.
  static let speedSteps = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 4]

  /// The speed after `now` for `.slower`, `.faster` and `.normalSpeed`.
  func speed(after now: Double) -> Double {
    let steps = Self.speedSteps
    switch self {
    case .slower: return steps.last { $0 < now - 0.001 } ?? steps.first!
    case .faster: return steps.first { $0 > now + 0.001 } ?? steps.last!
    default: return 1
    }
  }
}
