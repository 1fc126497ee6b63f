import CGtk
import Foundation
import OrbDSP
import OrbDecode
import OrbPlayer
import OrbRender

/// How rendered frames reach GTK (`--video-output`).
enum VideoOutput: String, CaseIterable {
  /// Zero-copy where GL can import Vulkan memory, else memory copies.
  case auto
  /// Zero-copy, saying why when it cannot be had.
  case zeroCopy = "zero-copy"
  /// Copies through host memory.
  case memory
}

/// What `--resume` does where a person left off a local file.
enum ResumeMode: String {
  /// Offer "Resume from 12:34" for a few seconds.
  case ask
  /// Resume at once.
  case auto
  /// Neither read nor remember.
  case no
}

/// The command line, parsed with GLib's GOptionContext so `--help` reads like every GTK program's.
/// Thread-safety: a value type, made on the main thread before anything else runs.
struct Options {
  /// The files and URLs given, played in order; the first is the one headless modes use.
  var sources: [String] = []
  var source: String? { sources.first }
  /// `--resume-ms`; nil when not given (a host's 0, "from the start", wins over where a person left off).
  var resumeMs: Int64?
  /// `--resume`: what to do where a person left off in a local file (`ResumeMemory`).
  var resume = ResumeMode.ask
  var title: String?
  var authToken: String?
  var headers: [String] = []
  /// `--hls-bitrate`: which variant of an HLS master playlist plays; nil: in a window the one that fits its screen
  /// and the throughput measured while it opens (`VariantChoice.fitting`), in the headless modes the highest.
  var variant: VariantChoice?
  /// `--retry-for`: seconds of waiting between tries to open a network source that failed (0: none).
  var retryFor = RetrySchedule.fiveMinutes
  /// `--cookies-file`: cookies sent to the hosts and paths they name.
  var cookies: CookieFile?
  /// `--tls-verify` and `--tls-ca-file`: how HTTPS servers' certificates are checked.
  var tls = TLSTrust()
  /// `--intro START-END` and `--credits START[-END]`, read as markers.
  var intro: Marker?
  var credits: Marker?
  var speed: Double = 1
  var volume: Int = 100
  var mute = false
  var noAudio = false
  /// Ten equaliser gains in dB, 31 Hz … 16 kHz.
  var equalizer: [Double]?
  var nightMode = false
  var remap = ChannelRemap.Mode.stereo
  var audioTrack: Int?
  /// `--sid`: a track, none (`0`, `no`), or the automatic choice.
  var subtitles = SubtitleRequest.automatic
  /// `--sub-file`, in the order given.
  var subtitleFiles: [String] = []
  /// Whether the command line itself (not the config file) chose the audio track, and the subtitles (`--sid`,
  /// `--sub-file`): those win over the tracks remembered for a file, which win over the config file's.
  var tracksChosen = (audio: false, subtitles: false)
  /// `--sub-delay`: seconds subtitles are shown later (negative: earlier).
  var subtitleDelay = 0.0
  /// `--audio-delay`: seconds the sound is heard after its picture (negative: before).
  var audioDelay = 0.0
  /// `--sub-scale`: text size relative to the default.
  var subtitleScale = 1.0
  var fullscreen = false
  /// `--geometry WxH[+X+Y]`: the window's size in logical pixels, and where to put it.
  var geometry: (width: Int, height: Int, x: Int?, y: Int?)?
  /// `--tone-mapping`, `--target-peak` and `--hdr-peak-detect`, as the renderer takes them.
  var toneMapping = ToneMapping()
  var eventsFd: Int32?
  var version = false
  var probe = false
  var frameAt: Double?
  var output: String?
  var size: (Int, Int)?
  var benchmark = false
  var benchmarkSeconds: Double?
  var videoOutput = VideoOutput.auto
  /// `--deinterlace`: which pictures are deinterlaced (`d` cycles it).
  var deinterlace = DeinterlaceMode.auto
  var paused = false
  /// `--loop`: each entry plays again from its start when it ends, until quit (`L` toggles it).
  var loop = false
  var errorLingerMs = 6000
  /// Lines of the config file left out, each a sentence naming the file and the line.
  var warnings: [String] = []

  /// What requests of `source` carry to its origin: `--header` lines, `--auth-token` as a bearer token and the
  /// `--cookies-file` jar for http(s) sources (token and cookies never for local files, where they mean nothing).
  func credentials(for source: String) -> Credentials {
    let http = source.hasPrefix("http://") || source.hasPrefix("https://")
    var headers = self.headers
    if let token = authToken, http {
      headers.append("Authorization: Bearer \(token)")
    }
    return Credentials(headers: headers, cookies: http ? cookies : nil)
  }

  /// Reads mpv's `WxH` and `WxH+X+Y` (`-X` for a negative place): each number 1 to 5 digits. By hand, not with a
  /// regular expression: NSRegularExpression loads ICU's character data, 2-3 ms of a launch before the window.
  static func geometry(_ text: String) -> (width: Int, height: Int, x: Int?, y: Int?)? {
    var rest = Substring(text)
    /// Up to 5 digits taken from the front of `rest` (none: nil), after a sign when `signed`.
    func number(signed: Bool) -> Int? {
      var sign = 1
      if signed {
        guard let first = rest.first, first == "+" || first == "-" else { return nil }
        sign = first == "-" ? -1 : 1
        rest = rest.dropFirst()
      }
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      guard (1...5).contains(digits.count), let value = Int(digits) else { return nil }
      rest = rest.dropFirst(digits.count)
      return sign * value
    }
    guard let w = number(signed: false), rest.first == "x" else { return nil }
    rest = rest.dropFirst()
    guard let h = number(signed: false), (16...16384).contains(w), (16...16384).contains(h) else { return nil }
    if rest.isEmpty { return (w, h, nil, nil) }
    guard let x = number(signed: true), let y = number(signed: true), rest.isEmpty else { return nil }
    return (w, h, x, y)
  }

  static let toneMappingCurves = ToneMapCurve.allCases.map(\.rawValue)

  /// Parses the config file's defaults (`ConfigFile`), then `arguments` (argv, program name first) over them.
  /// - Returns: the options, or a message for the user (exit status 1); a bad config line is only a warning.
  static func parse(_ arguments: [String], configFile: String? = ConfigFile.path) -> Result<Options, OptionsError> {
    guard let configFile else { return parseArguments(arguments) }
    let (defaults, warnings) = ConfigFile.arguments(at: configFile) { argument in
      if case .failure(let error) = parseArguments(["orb-player"] + argument) { return error.message }
      return nil
    }
    let program = arguments.first.map { [$0] } ?? ["orb-player"]
    var result = parseArguments(program + defaults + arguments.dropFirst())
    if case .success(var options) = result {
      options.warnings = warnings + options.warnings
      if case .success(let own) = parseArguments(arguments) { options.tracksChosen = own.tracksChosen }
      result = .success(options)
    }
    return result
  }

  /// Parses `arguments` (argv, program name first) alone.
  static func parseArguments(_ arguments: [String]) -> Result<Options, OptionsError> {
    let table = OptionTable()
    // GLib takes a value given to a flag and sets the flag ("--paused=no" paused, "--loop=banana" looped): refused.
    // (Not an option's value given after it: `--title --mute=1` is a title.)
    var isValue = false
    for argument in arguments.dropFirst().prefix(while: { $0 != "--" }) {
      defer { isValue = !isValue && argument.hasPrefix("--") && table.takesValue(String(argument.dropFirst(2))) }
      guard !isValue, argument.hasPrefix("--") else { continue }
      let body = argument.dropFirst(2)
      if let equals = body.firstIndex(of: "="), table.isFlag(String(body[..<equals])) {
        return .failure(OptionsError(message: "--\(body[..<equals]) takes no value (see --help)"))
      }
    }
    let context = g_option_context_new("FILE|URL")
    defer { g_option_context_free(context) }
    g_option_context_set_summary(
      context,
      "Plays video files or streams, in order; - is standard input. With no FILE|URL, a welcome page to open or\n"
        + "drop files on.\n"
        + "Built-in sources: test://bars (options: ?size=WxH&rate=FPS&duration=S).")
    g_option_context_add_main_entries(context, table.entries, nil)
    var argc = Int32(arguments.count)
    let cArgs = arguments.map { strdup($0) }
    var argvStorage: [UnsafeMutablePointer<CChar>?] = cArgs + [nil]
    var error: UnsafeMutablePointer<GError>?
    let ok = argvStorage.withUnsafeMutableBufferPointer { buffer -> gboolean in
      var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
      return g_option_context_parse(context, &argc, &argv, &error)
    }
    if ok == 0 {
      let message = error.map { String(cString: $0.pointee.message) } ?? "bad options"
      g_error_free(error)
      return .failure(OptionsError(message: message + " (see --help)"))
    }
    return table.read().map { read in
      var options = read
      options.tracksChosen = (
        options.audioTrack != nil, options.subtitles != .automatic || !options.subtitleFiles.isEmpty
      )
      return options
    }
  }
}

struct OptionsError: Error, CustomStringConvertible {
  var message: String
  var description: String { message }
}

/// GOptionEntry storage: C strings and value cells that outlive the parse.
private final class OptionTable {
  enum Kind { case flag, int, int64, double, string, strings, filename, filenames, remaining }
  struct Spec {
    var name: String
    var kind: Kind
    var help: String
    var argHelp: String?
  }

  let specs: [Spec] = [
    Spec(name: "resume-ms", kind: .int64, help: "Start at this position", argHelp: "MS"),
    Spec(
      name: "resume", kind: .string, help: "Where you left off a local file: ask (offer it), auto, or no (forget)",
      argHelp: "ask|auto|no"),
    Spec(name: "title", kind: .string, help: "Window title (default: the file name)", argHelp: "TEXT"),
    Spec(
      name: "auth-token", kind: .string, help: "Sent as 'Authorization: Bearer', only to the media's host",
      argHelp: "TOKEN"),
    Spec(
      name: "hls-bitrate", kind: .string,
      help: "HLS variant: max, min, or the most bits/s (e.g. 3M); default: the one that fits the screen",
      argHelp: "max|min|N"),
    Spec(
      name: "retry-for", kind: .double, help: "How long to keep trying a server that fails (default 300, 0: never)",
      argHelp: "SECONDS"),
    Spec(
      name: "cookies-file", kind: .filename,
      help: "Cookies (Netscape format, as curl and mpv read) for the media's host",
      argHelp: "FILE"),
    Spec(name: "header", kind: .strings, help: "Extra HTTP request header (repeatable)", argHelp: "'NAME: VALUE'"),
    Spec(
      name: "tls-verify", kind: .string,
      help: "Check HTTPS servers' certificates (yes, the default), or trust any server (no)", argHelp: "yes|no"),
    Spec(
      name: "tls-ca-file", kind: .filename,
      help: "Trust the certificate authorities in this PEM file instead of the system's", argHelp: "FILE"),
    Spec(name: "intro", kind: .string, help: "Intro marker window, milliseconds", argHelp: "START-END"),
    Spec(name: "credits", kind: .string, help: "Credits marker, milliseconds", argHelp: "START[-END]"),
    Spec(name: "speed", kind: .double, help: "Playback speed, 0.25 to 4", argHelp: "X"),
    Spec(name: "volume", kind: .int, help: "Volume in percent, 0 to 150", argHelp: "PERCENT"),
    Spec(name: "mute", kind: .flag, help: "Start muted", argHelp: nil),
    Spec(
      name: "audio-delay", kind: .double, help: "Play the sound this much later than the picture (negative: earlier)",
      argHelp: "SECONDS"),
    Spec(name: "aid", kind: .int, help: "Audio track (1-based)", argHelp: "N"),
    Spec(name: "no-audio", kind: .flag, help: "Play without sound", argHelp: nil),
    Spec(
      name: "eq", kind: .string, help: "Equaliser: ten gains in dB for 31 Hz … 16 kHz, -12 to 12",
      argHelp: "G1,…,G10"),
    Spec(name: "night", kind: .flag, help: "Night mode: evens out loud and quiet scenes", argHelp: nil),
    Spec(name: "remap", kind: .string, help: "Stereo remap: stereo, mono or swapped", argHelp: "MODE"),
    Spec(name: "sid", kind: .string, help: "Subtitle track (1-based; 0 or no for none)", argHelp: "N|no"),
    Spec(name: "sub-file", kind: .filenames, help: "Subtitle file to add (repeatable)", argHelp: "FILE"),
    Spec(
      name: "sub-delay", kind: .double, help: "Show subtitles this much later (negative: earlier)", argHelp: "SECONDS"),
    Spec(name: "sub-scale", kind: .double, help: "Subtitle text size, relative to the default", argHelp: "X"),
    Spec(name: "fullscreen", kind: .flag, help: "Start in fullscreen", argHelp: nil),
    Spec(
      name: "geometry", kind: .string, help: "Window size and place (default: the video's size)", argHelp: "WxH[+X+Y]"),
    Spec(name: "paused", kind: .flag, help: "Start paused on the first frame", argHelp: nil),
    Spec(name: "loop", kind: .flag, help: "Play each file again from the start when it ends (L toggles)", argHelp: nil),
    Spec(
      name: "tone-mapping", kind: .string, help: "HDR tone-mapping curve: bt2390, hable, reinhard, clip",
      argHelp: "CURVE"),
    Spec(name: "target-peak", kind: .double, help: "Display peak for tone mapping, nits", argHelp: "NITS"),
    Spec(
      name: "hdr-peak-detect", kind: .string,
      help: "Tone-map HDR from the peak measured in each scene (yes), or from the metadata's (no)", argHelp: "yes|no"),
    Spec(name: "events-fd", kind: .int, help: "Write JSON event lines to this file descriptor", argHelp: "N"),
    Spec(
      name: "video-output", kind: .string,
      help: "How frames reach the window: auto, zero-copy (GL import) or memory", argHelp: "auto|zero-copy|memory"),
    Spec(
      name: "deinterlace", kind: .string,
      help: "Deinterlace pictures marked interlaced (auto), every picture (yes) or none (no); d cycles",
      argHelp: "auto|yes|no"),
    Spec(name: "probe", kind: .flag, help: "Print the streams as JSON and exit (no window)", argHelp: nil),
    Spec(
      name: "frame-at", kind: .double, help: "Write the frame at this time to --output as PNG (no window)",
      argHelp: "SECONDS"),
    Spec(name: "output", kind: .filename, help: "PNG file for --frame-at", argHelp: "FILE"),
    Spec(name: "size", kind: .string, help: "Render size for --frame-at and --benchmark", argHelp: "WxH"),
    Spec(
      name: "benchmark", kind: .flag, help: "Decode and render every frame as fast as possible; print JSON",
      argHelp: nil),
    Spec(name: "benchmark-seconds", kind: .double, help: "Stop --benchmark after this long", argHelp: "SECONDS"),
    Spec(
      name: "error-linger-ms", kind: .int, help: "How long an error stays in the window before exit",
      argHelp: "MS"),
    Spec(name: "version", kind: .flag, help: "Print the version and exit", argHelp: nil),
    Spec(name: "", kind: .remaining, help: "", argHelp: nil),
  ]

  private var cells: [UnsafeMutableRawPointer] = []
  private(set) var entries: UnsafeMutablePointer<GOptionEntry>

  /// The flags a config file may set: each has a form that turns it off again on the command line, as mpv has them
  /// (`--no-mute`, `--no-fullscreen`, and `--audio` for `--no-audio`); the last one given wins.
  private static func negatable(_ specs: [Spec]) -> [Int] {
    specs.indices.filter { specs[$0].kind == .flag && !ConfigFile.notInFile.contains(specs[$0].name) }
  }

  /// Whether `name` (as written, without "=VALUE") is an option that takes the next argument as its value.
  func takesValue(_ name: String) -> Bool {
    specs.contains { $0.name == name && $0.kind != .flag && $0.kind != .remaining }
  }

  /// Whether `name` is a flag's (or its negation's): it takes no value.
  func isFlag(_ name: String) -> Bool {
    let negatable = Self.negatable(specs)
    return specs.indices.contains { i in
      specs[i].kind == .flag
        && (specs[i].name == name || (negatable.contains(i) && Self.negation(of: specs[i].name) == name))
    }
  }

  static func negation(of name: String) -> String {
    name.hasPrefix("no-") ? String(name.dropFirst(3)) : "no-" + name
  }

  init() {
    let negatable = Self.negatable(specs)
    entries = .allocate(capacity: specs.count + negatable.count + 1)
    for (i, spec) in specs.enumerated() {
      let cell = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
      cell.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
      // Numbers start at a value no one types, so "not given" differs from an explicit 0.
      switch spec.kind {
      case .int: cell.storeBytes(of: Int32.min, as: Int32.self)
      case .int64: cell.storeBytes(of: Int64.min, as: Int64.self)
      case .double: cell.storeBytes(of: Self.notGiven, as: Double.self)
      default: break
      }
      cells.append(cell)
      let arg: GOptionArg
      switch spec.kind {
      case .flag: arg = G_OPTION_ARG_NONE
      case .int: arg = G_OPTION_ARG_INT
      case .int64: arg = G_OPTION_ARG_INT64
      case .double: arg = G_OPTION_ARG_DOUBLE
      case .string: arg = G_OPTION_ARG_STRING
      case .strings: arg = G_OPTION_ARG_STRING_ARRAY
      case .filename: arg = G_OPTION_ARG_FILENAME
      case .filenames, .remaining: arg = G_OPTION_ARG_FILENAME_ARRAY
      }
      entries[i] = GOptionEntry(
        long_name: UnsafePointer(strdup(spec.name)), short_name: 0, flags: 0, arg: arg, arg_data: cell,
        description: spec.help.isEmpty ? nil : UnsafePointer(strdup(spec.help)),
        arg_description: spec.argHelp.map { UnsafePointer(strdup($0)) })
    }
    for (n, i) in negatable.enumerated() {
      let name = specs[i].name
      entries[specs.count + n] = GOptionEntry(
        long_name: UnsafePointer(strdup(Self.negation(of: name))), short_name: 0,
        flags: gint(G_OPTION_FLAG_REVERSE.rawValue), arg: G_OPTION_ARG_NONE, arg_data: cells[i],
        description: UnsafePointer(strdup("Undo --\(name) (as set in the config file)")), arg_description: nil)
    }
    entries[specs.count + negatable.count] = GOptionEntry()
  }

  private func cell(_ name: String) -> (Spec, UnsafeMutableRawPointer) {
    let i = specs.firstIndex { $0.name == name }!
    return (specs[i], cells[i])
  }

  private func flag(_ name: String) -> Bool { cell(name).1.load(as: gboolean.self) != 0 }
  private func int(_ name: String) -> Int32 { cell(name).1.load(as: Int32.self) }
  private func int64(_ name: String) -> Int64 { cell(name).1.load(as: Int64.self) }
  private func double(_ name: String) -> Double { cell(name).1.load(as: Double.self) }
  private func string(_ name: String) -> String? {
    cell(name).1.load(as: UnsafeMutablePointer<CChar>?.self).map { String(cString: $0) }
  }
  private func strings(_ name: String) -> [String] {
    guard let list = cell(name).1.load(as: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?.self) else {
      return []
    }
    return Signals.strings(list)
  }
  /// What a number option holds until it is given: a NaN with a payload of its own, which only the text
  /// "nan(0xb5)" parses to (a plain "nan" must reach the range checks, which refuse it).
  private static let notGiven = Double(nan: 0x0B5, signaling: false)

  /// Whether the option was given at all.
  private func given(_ name: String) -> Bool {
    let (spec, value) = cell(name)
    switch spec.kind {
    case .int: return value.load(as: Int32.self) != Int32.min
    case .int64: return value.load(as: Int64.self) != Int64.min
    // Bit for bit: a typed "nan" is a NaN too, and must reach the range checks, which refuse it.
    case .double: return value.load(as: Double.self).bitPattern != Self.notGiven.bitPattern
    default: return value.load(as: UInt64.self) != 0
    }
  }

  func read() -> Result<Options, OptionsError> {
    var o = Options()
    func fail(_ m: String) -> Result<Options, OptionsError> { .failure(OptionsError(message: m)) }
    let rest = strings("")
    o.sources = rest
    if let mode = string("resume") {
      guard let parsed = ResumeMode(rawValue: mode) else { return fail("--resume must be ask, auto or no") }
      o.resume = parsed
    }
    if given("resume-ms") {
      let ms = int64("resume-ms")
      if ms < 0 || ms > 1_000_000_000_000 { return fail("--resume-ms must be 0 to 10^12") }
      o.resumeMs = ms
    }
    o.title = string("title")
    o.authToken = string("auth-token")
    o.headers = strings("header")
    if let text = string("hls-bitrate") {
      guard let choice = VariantChoice(text) else { return fail("--hls-bitrate must be max, min or bits/s (3M, 800k)") }
      o.variant = choice
    }
    if given("retry-for") {
      o.retryFor = double("retry-for")
      if !(0...86400).contains(o.retryFor) { return fail("--retry-for must be 0 to 86400 seconds") }
    }
    if let verify = string("tls-verify") {
      switch verify.lowercased() {
      case "yes", "1", "true": o.tls.verify = true
      case "no", "0", "false": o.tls.verify = false
      default: return fail("--tls-verify must be yes or no")
      }
    }
    if let path = string("tls-ca-file") {
      guard FileManager.default.isReadableFile(atPath: path) else {
        return fail("--tls-ca-file \(path): cannot be read")
      }
      o.tls.caFile = path
    }
    if let path = string("cookies-file") {
      do {
        let file = try CookieFile(path: path)
        if !file.badLines.isEmpty {
          o.warnings.append(
            "\(path): lines \(file.badLines.map(String.init).joined(separator: ", ")) are not cookies; ignored")
        }
        o.cookies = file
      } catch {
        return fail("--cookies-file \(path): cannot be read")
      }
    }
    for h in o.headers where !h.contains(":") { return fail("--header must look like 'Name: value', not '\(h)'") }
    for (name, endOptional) in [("intro", false), ("credits", true)] {
      guard let text = string(name) else { continue }
      switch Marker.parse(text, kind: Marker.Kind(rawValue: name)!, endOptional: endOptional) {
      case .success(let marker): if name == "intro" { o.intro = marker } else { o.credits = marker }
      case .failure(let error): return fail(error.message)
      }
    }
    if given("audio-delay") {
      o.audioDelay = double("audio-delay")
      let most = Player.mostAudioDelay
      if !(-most...most).contains(o.audioDelay) {
        return fail("--audio-delay must be -\(Int(most)) to \(Int(most)) seconds")
      }
    }
    if given("speed") {
      o.speed = double("speed")
      if !(0.25...4).contains(o.speed) { return fail("--speed must be between 0.25 and 4") }
    }
    if given("volume") {
      o.volume = Int(int("volume"))
      if !(0...150).contains(o.volume) { return fail("--volume must be between 0 and 150") }
    }
    o.mute = flag("mute")
    o.noAudio = flag("no-audio")
    if let eq = string("eq") {
      let gains = eq.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
      guard gains.count == 10, gains.allSatisfy({ $0 != nil && (-12...12).contains($0!) }) else {
        return fail("--eq takes ten gains in dB from -12 to 12, e.g. 3,2,0,0,0,0,0,0,1,2")
      }
      o.equalizer = gains.map { $0! }
    }
    o.nightMode = flag("night")
    if let name = string("remap") {
      guard let remap = ChannelRemap.Mode(rawValue: name) else {
        return fail("--remap must be stereo, mono or swapped")
      }
      o.remap = remap
    }
    if given("aid") {
      o.audioTrack = Int(int("aid"))
      if o.audioTrack! < 1 { return fail("--aid counts from 1") }
    }
    if let sid = string("sid") {
      switch sid.lowercased() {
      case "no", "0", "off", "none": o.subtitles = .off
      case "auto": o.subtitles = .automatic
      default:
        guard let n = Int(sid), n >= 1 else { return fail("--sid takes a track number from 1, or no") }
        o.subtitles = .track(n)
      }
    }
    o.subtitleFiles = strings("sub-file")
    if given("sub-delay") {
      o.subtitleDelay = double("sub-delay")
      if !(-3600...3600).contains(o.subtitleDelay) { return fail("--sub-delay must be -3600 to 3600 seconds") }
    }
    if given("sub-scale") {
      o.subtitleScale = double("sub-scale")
      if !(0.2...5).contains(o.subtitleScale) { return fail("--sub-scale must be 0.2 to 5") }
    }
    o.fullscreen = flag("fullscreen")
    if let text = string("geometry") {
      guard let g = Options.geometry(text) else {
        return fail(
          "--geometry must be WIDTHxHEIGHT or WIDTHxHEIGHT+X+Y, each side 16 to 16384 pixels, e.g. 1280x720+100+50")
      }
      o.geometry = g
    }
    o.paused = flag("paused")
    o.loop = flag("loop")
    if let name = string("tone-mapping") {
      guard let curve = ToneMapCurve(rawValue: name) else {
        return fail("--tone-mapping must be one of \(Options.toneMappingCurves.joined(separator: ", "))")
      }
      o.toneMapping.curve = curve
    }
    if let detect = string("hdr-peak-detect") {
      switch detect.lowercased() {
      case "yes", "auto", "1", "true": o.toneMapping.peakDetect = true
      case "no", "0", "false": o.toneMapping.peakDetect = false
      default: return fail("--hdr-peak-detect must be yes or no")
      }
    }
    if given("target-peak") {
      o.toneMapping.targetPeak = double("target-peak")
      if !(50...10000).contains(o.toneMapping.targetPeak) { return fail("--target-peak must be 50 to 10000 nits") }
    }
    if given("events-fd") {
      o.eventsFd = int("events-fd")
      if o.eventsFd! < 0 || fcntl(o.eventsFd!, F_GETFD) < 0 {
        return fail("--events-fd \(o.eventsFd!) is not an open file descriptor")
      }
    }
    if let name = string("video-output") {
      guard let output = VideoOutput(rawValue: name) else {
        return fail("--video-output must be auto, zero-copy or memory")
      }
      o.videoOutput = output
    }
    if let name = string("deinterlace") {
      guard let mode = DeinterlaceMode(rawValue: name) else { return fail("--deinterlace must be auto, yes or no") }
      o.deinterlace = mode
    }
    o.version = flag("version")
    o.probe = flag("probe")
    if given("frame-at") {
      o.frameAt = double("frame-at")
      if !(0...1e9).contains(o.frameAt!) { return fail("--frame-at must be 0 to 10^9 seconds") }
    }
    o.output = string("output")
    if let s = string("size") {
      let parts = s.lowercased().split(separator: "x").compactMap { Int($0) }
      guard parts.count == 2, parts.allSatisfy({ $0 >= 1 }) else {
        return fail("--size must be WIDTHxHEIGHT, e.g. 1280x720")
      }
      guard parts.allSatisfy({ $0 <= 16384 }) else { return fail("--size is too large: 16384 pixels a side at most") }
      o.size = (parts[0], parts[1])
    }
    o.benchmark = flag("benchmark")
    if given("benchmark-seconds") {
      o.benchmarkSeconds = double("benchmark-seconds")
      if !(0...1e6).contains(o.benchmarkSeconds!) { return fail("--benchmark-seconds must be a number of seconds") }
    }
    if given("error-linger-ms") { o.errorLingerMs = max(0, Int(int("error-linger-ms"))) }
    if o.frameAt != nil && o.output == nil { return fail("--frame-at needs --output FILE.png") }
    return .success(o)
  }
}
