import CGtk
import Foundation
import OrbDecode
import OrbPlayer
import OrbRender

/// Parses the command line and runs the mode it asks for: a headless one (`--probe`, `--frame-at`,
/// `--benchmark`, `--version`) without touching GTK, or the window.
enum OrbMain {
  static let version = "0.1.0"
  static let defaultSource = "test://bars"

  static func run(_ arguments: [String]) -> Int32 {
    // The session's language and character set, before GLib prints `--help` (its "…" was "?" under the C locale);
    // numbers stay C's, for good: FFmpeg reads numbers with strtod and atof (an HLS playlist's "#EXTINF:6.006" was 6
    // under a decimal comma once GTK had set the session's locale at its start, which it no longer does).
    setlocale(LC_ALL, "")
    setlocale(LC_NUMERIC, "C")
    gtk_disable_setlocale()
    let options: Options
    switch Options.parse(arguments) {
    case .success(let o): options = o
    case .failure(let error):
      say("orb-player: \(error)")
      return 1
    }
    for warning in options.warnings { say("orb-player: \(warning)") }
    if options.version {
      print("orb-player \(version)")
      return 0
    }
    let source = options.source ?? defaultSource
    TLSTrust.setting = options.tls
    WindowRenderer.chooseVulkanDriver()
    let headless = options.probe || options.frameAt != nil || options.benchmark
    if headless && options.sources.count > 1 {
      say("orb-player: --probe, --frame-at and --benchmark take one FILE or URL, not \(options.sources.count)")
      return 1
    }
    do {
      if options.probe {
        print(try MediaOpener.probe(source, credentials: options.credentials(for: source)).json())
        return 0
      }
      if let seconds = options.frameAt, let output = options.output {
        try FrameGrab.write(
          source: source, at: seconds, size: options.size, output: output,
          credentials: options.credentials(for: source),
          toneMapping: options.toneMapping, subtitles: options.subtitles, subtitleFiles: options.subtitleFiles,
          variant: options.variant ?? .highest, deinterlace: options.deinterlace)
        return 0
      }
      if options.benchmark {
        let result = try Benchmark.run(
          source: source, size: options.size ?? (1280, 720), credentials: options.credentials(for: source),
          maxSeconds: options.benchmarkSeconds, toneMapping: options.toneMapping, deinterlace: options.deinterlace)
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(result), as: UTF8.self))
        return 0
      }
    } catch let error as MediaError {
      say("orb-player: \(error)")
      if let fd = options.eventsFd {
        let events = EventWriter(fd: fd)
        events.error(kind: error.kind.rawValue, message: error.description)
        events.flush()
      }
      return 1
    } catch {
      say("orb-player: \(MediaSource.withoutSecrets(source)): \(error)")
      return 1
    }
    guard
      ProcessInfo.processInfo.environment["DISPLAY"] != nil
        || ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"] != nil
    else {
      say("orb-player: cannot open a window: no display (DISPLAY and WAYLAND_DISPLAY are unset)")
      return 1
    }
    return PlayerWindow(options: options, sources: options.sources).run()
  }

  static func say(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}
