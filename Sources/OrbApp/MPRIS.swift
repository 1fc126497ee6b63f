import CGtk
import Foundation
import OrbDecode
import OrbPlayer

/// MPRIS 2 on the session bus (org.mpris.MediaPlayer2.orbplayer.instancePID): desktop media keys, the shell's media
/// controls and `playerctl` can see what plays and pause, play, stop, seek or quit it, and set its volume and speed.
/// Thread-safety: main actor, compiler-checked (GDBus calls these handlers on the main context).
final class MPRIS {
  static let path = "/org/mpris/MediaPlayer2"
  static let introspection = """
    <node>
      <interface name="org.mpris.MediaPlayer2">
        <method name="Raise"/>
        <method name="Quit"/>
        <property name="CanQuit" type="b" access="read"/>
        <property name="CanRaise" type="b" access="read"/>
        <property name="HasTrackList" type="b" access="read"/>
        <property name="Identity" type="s" access="read"/>
        <property name="DesktopEntry" type="s" access="read"/>
        <property name="SupportedUriSchemes" type="as" access="read"/>
        <property name="SupportedMimeTypes" type="as" access="read"/>
      </interface>
      <interface name="org.mpris.MediaPlayer2.Player">
        <method name="Next"/>
        <method name="Previous"/>
        <method name="Pause"/>
        <method name="PlayPause"/>
        <method name="Stop"/>
        <method name="Play"/>
        <method name="Seek"><arg direction="in" name="Offset" type="x"/></method>
        <method name="SetPosition">
          <arg direction="in" name="TrackId" type="o"/><arg direction="in" name="Position" type="x"/>
        </method>
        <method name="OpenUri"><arg direction="in" name="Uri" type="s"/></method>
        <signal name="Seeked"><arg name="Position" type="x"/></signal>
        <property name="PlaybackStatus" type="s" access="read"/>
        <property name="Rate" type="d" access="readwrite"/>
        <property name="Metadata" type="a{sv}" access="read"/>
        <property name="Volume" type="d" access="readwrite"/>
        <property name="Position" type="x" access="read"/>
        <property name="MinimumRate" type="d" access="read"/>
        <property name="MaximumRate" type="d" access="read"/>
        <property name="CanGoNext" type="b" access="read"/>
        <property name="CanGoPrevious" type="b" access="read"/>
        <property name="CanPlay" type="b" access="read"/>
        <property name="CanPause" type="b" access="read"/>
        <property name="CanSeek" type="b" access="read"/>
        <property name="CanControl" type="b" access="read"/>
      </interface>
    </node>
    """
  /// The entry playing, as `mpris:trackid`: one for each entry played (the first is 0), so that a client sees the
  /// track change, and a `SetPosition` meant for the one before is ignored (it was one for all).
  private var trackID: String { "/org/orb/Player/Track/\(hooks.track())" }
  /// The speeds `Rate` accepts (MinimumRate, MaximumRate): what `Player.setSpeed` plays.
  static let rates = 0.25...4.0
  /// The levels `Volume` takes: 1 is the file's own level, 1.5 the player's most (150 %).
  static let volumes = 0.0...1.5

  /// What MPRIS asks of the window.
  struct Hooks {
    var player: () -> Player?
    var title: () -> String
    /// A file:// URL of the entry's cover as a picture file (`mpris:artUrl`), nil without one.
    var art: () -> String?
    var quit: () -> Void
    var raise: () -> Void
    var playPause: (_ wantPlaying: Bool?) -> Void
    /// Moves through the window's playlist: true forward.
    var go: (_ forward: Bool) -> Void
    /// Whether there is a next and a previous entry.
    var canGo: () -> (next: Bool, previous: Bool)
    /// Plays `uri` instead of what plays (`OpenUri`), as a file dropped on the window.
    var open: (_ uri: String) -> Void
    /// The number of the entry playing: 0 for the first played, one more for each played after.
    var track: () -> Int
  }

  private let hooks: Hooks
  private var connection: OpaquePointer?
  private var ownerID: guint = 0
  private var lastStatus = ""
  private var lastCanGo: (next: Bool, previous: Bool)?
  /// The Volume and Rate last announced (or first seen): what the next PropertiesChanged compares with.
  private var lastVolume: Double?
  private var lastRate: Double?
  /// A client asked to Stop, and nothing has played since.
  private var stoppedByClient = false
  /// The player's count of seeks asked for when last announced (`Player.seeksAsked`).
  private var lastSeeks: Int?

  init(hooks: Hooks) {
    self.hooks = hooks
  }

  /// Takes the bus name; without a session bus this quietly does nothing.
  func start() {
    let name = "org.mpris.MediaPlayer2.orbplayer.instance\(getpid())"
    let me = Unmanaged.passUnretained(self).toOpaque()
    ownerID = g_bus_own_name(
      G_BUS_TYPE_SESSION, name, G_BUS_NAME_OWNER_FLAGS_NONE,
      { connection, _, data in
        calledFromC()
        Unmanaged<MPRIS>.fromOpaque(data!).takeUnretainedValue().register(on: connection)
      }, nil, nil, me, nil)
  }

  func stop() {
    if ownerID != 0 { g_bus_unown_name(ownerID) }
    ownerID = 0
  }

  /// A GVariant builder of `type`; the type made for it is freed at once (the builder keeps its own copy).
  private static func builder(_ type: String) -> UnsafeMutablePointer<GVariantBuilder>? {
    let variantType = g_variant_type_new(type)
    defer { g_variant_type_free(variantType) }
    return g_variant_builder_new(variantType)
  }

  private func register(on connection: OpaquePointer?) {
    guard let connection else { return }
    self.connection = connection
    var error: UnsafeMutablePointer<GError>?
    guard let node = g_dbus_node_info_new_for_xml(Self.introspection, &error) else {
      g_clear_error(&error)
      return
    }
    var vtable = GDBusInterfaceVTable()
    vtable.method_call = { _, _, _, interface, method, parameters, invocation, data in
      calledFromC()
      let mpris = Unmanaged<MPRIS>.fromOpaque(data!).takeUnretainedValue()
      mpris.call(String(cString: interface!), String(cString: method!), parameters, invocation)
    }
    vtable.get_property = { _, _, _, interface, property, _, data in
      calledFromC()
      let mpris = Unmanaged<MPRIS>.fromOpaque(data!).takeUnretainedValue()
      return mpris.property(String(cString: interface!), String(cString: property!))
    }
    // GDBus has already checked that the property is writable and that the value has its type ("d").
    vtable.set_property = { _, _, _, _, property, value, error, data in
      calledFromC()
      let mpris = Unmanaged<MPRIS>.fromOpaque(data!).takeUnretainedValue()
      return mpris.setProperty(String(cString: property!), value, error) ? 1 : 0
    }
    let me = Unmanaged.passUnretained(self).toOpaque()
    var i = 0
    while let info = node.pointee.interfaces[i] {
      withUnsafePointer(to: &vtable) { table in
        _ = g_dbus_connection_register_object(connection, Self.path, info, table, me, nil, &error)
      }
      g_clear_error(&error)
      i += 1
    }
    g_dbus_node_info_unref(node)  // the registrations hold what they need of it
    MainLoop.every(milliseconds: 500) { [weak self] in
      guard let self, self.ownerID != 0 else { return false }
      self.announceChanges()
      return true
    }
  }

  private func call(
    _ interface: String, _ method: String, _ parameters: OpaquePointer?, _ invocation: OpaquePointer?
  ) {
    let player = hooks.player()
    switch method {
    case "Raise": hooks.raise()
    case "Quit": hooks.quit()
    case "PlayPause":
      stoppedByClient = false
      hooks.playPause(nil)
    case "Play":
      stoppedByClient = false
      hooks.playPause(true)
    case "Pause": hooks.playPause(false)
    case "Stop":
      // Paused at the start, and said to be stopped until played again (it was said to be paused).
      hooks.playPause(false)
      player?.seek(to: 0)
      stoppedByClient = true
    case "Seek":
      if let player, let parameters {
        let child = g_variant_get_child_value(parameters, 0)
        defer { g_variant_unref(child) }
        let offset = Int64(g_variant_get_int64(child))
        let base = player.seekBase
        if let target = Self.seekTarget(offset: offset, position: base, duration: player.duration) {
          player.seek(to: target)
        } else if let length = player.duration, base + Double(offset) / 1e6 > length,
          hooks.canGo().next
        {
          hooks.go(true)  // past the end, as the spec says: the next track
        }
      }
    case "SetPosition":
      if let player, let parameters {
        let track = g_variant_get_child_value(parameters, 0)
        let child = g_variant_get_child_value(parameters, 1)
        defer {
          g_variant_unref(track)
          g_variant_unref(child)
        }
        let trackID = g_variant_get_string(track, nil).map { String(cString: $0) }
        if trackID == self.trackID,
          let target = Self.positionTarget(Int64(g_variant_get_int64(child)), duration: player.duration)
        {
          player.seek(to: target)
        }
      }
    case "Next": hooks.go(true)
    case "Previous": hooks.go(false)
    case "OpenUri":
      guard let parameters else { break }
      let child = g_variant_get_child_value(parameters, 0)
      defer { g_variant_unref(child) }
      let uri = g_variant_get_string(child, nil).map { String(cString: $0) } ?? ""
      // As the spec says: a scheme not in SupportedUriSchemes is an error, and nothing changes.
      let scheme = uri.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
      guard uri.contains(":"), Self.uriSchemes.contains(scheme) else {
        return g_dbus_method_invocation_return_dbus_error(
          invocation, "org.freedesktop.DBus.Error.InvalidArgs",
          "Orb Player opens \(Self.uriSchemes.joined(separator: ", ")) URIs, not '\(uri)'")
      }
      hooks.open(uri)
    default: break
    }
    g_dbus_method_invocation_return_value(invocation, nil)
    if ["Seek", "SetPosition", "Stop"].contains(method) { announceChanges() }  // Seeked at once, not at the next tick
  }

  /// What `OpenUri` takes.
  static let uriSchemes = ["file", "http", "https", "test"]
  /// What the player opens, as its desktop entry (data/org.orb.Player.desktop) lists them for file managers.
  static let mimeTypes = [
    "video/mp4", "video/x-matroska", "video/webm", "video/quicktime", "video/x-msvideo", "video/mpeg", "video/mp2t",
    "video/x-flv", "video/ogg", "video/x-ogm+ogg", "video/x-theora+ogg", "video/3gpp", "video/3gpp2", "video/x-ms-wmv",
    "application/vnd.ms-asf", "video/dv", "application/vnd.apple.mpegurl", "video/x-m4v", "video/avi", "video/x-avi",
    "video/x-matroska-3d", "application/mxf", "audio/mpeg", "audio/mp4", "audio/x-m4a", "audio/aac", "audio/flac",
    "audio/x-flac", "audio/ogg", "audio/x-vorbis+ogg", "audio/x-opus+ogg", "audio/opus", "audio/x-wav", "audio/wav",
    "audio/x-matroska", "audio/webm", "audio/ac3", "audio/x-ms-wma",
  ]

  /// Where `Seek(offset)` goes, as the MPRIS spec says: before the start is the start; past the end, nowhere in this
  /// entry (nil): the next one plays where there is one, else the call is ignored, as it is without a known length.
  static func seekTarget(offset: Int64, position: Double, duration: Double?) -> Double? {
    guard let duration else { return nil }
    let target = position + Double(offset) / 1e6
    guard target.isFinite, target <= duration else { return nil }
    return max(0, target)
  }

  /// Where `SetPosition(position)` goes: nowhere (nil) when it is negative or past the length, as the spec says.
  static func positionTarget(_ microseconds: Int64, duration: Double?) -> Double? {
    guard let duration, microseconds >= 0 else { return nil }
    let target = Double(microseconds) / 1e6
    return target <= duration ? target : nil
  }

  private func property(_ interface: String, _ name: String) -> OpaquePointer? {
    let player = hooks.player()
    func strings(_ list: [String]) -> OpaquePointer? {
      let builder = Self.builder("as")
      for s in list { g_variant_builder_add_value(builder, g_variant_new_string(s)) }
      defer { g_variant_builder_unref(builder) }
      return g_variant_builder_end(builder)
    }
    switch name {
    case "CanQuit", "CanRaise", "CanPlay", "CanPause", "CanControl": return g_variant_new_boolean(1)
    case "HasTrackList": return g_variant_new_boolean(0)
    case "CanGoNext": return g_variant_new_boolean(hooks.canGo().next ? 1 : 0)
    case "CanGoPrevious": return g_variant_new_boolean(hooks.canGo().previous ? 1 : 0)
    case "CanSeek": return g_variant_new_boolean(player?.duration != nil ? 1 : 0)
    case "Identity": return g_variant_new_string("Orb Player")
    case "DesktopEntry": return g_variant_new_string("org.orb.Player")
    case "SupportedUriSchemes": return strings(Self.uriSchemes)
    case "SupportedMimeTypes": return strings(Self.mimeTypes)
    case "PlaybackStatus": return g_variant_new_string(status(player))
    case "Rate": return g_variant_new_double(player?.speed ?? 1)
    case "MinimumRate": return g_variant_new_double(Self.rates.lowerBound)
    case "MaximumRate": return g_variant_new_double(Self.rates.upperBound)
    case "Volume": return g_variant_new_double(volume(player))
    case "Position": return g_variant_new_int64(gint64((player?.position ?? 0).wholeMicroseconds))
    case "Metadata": return metadata(player)
    default: return nil
    }
  }

  /// Sets Volume or Rate from a client (`playerctl volume 0.5`, a desktop's slider), then announces what changed.
  /// False, with `error` set, when the value cannot be used at all; a Rate outside MinimumRate…MaximumRate is
  /// ignored (true), as the spec says.
  /// Thread-safety: main thread (GDBus calls the setter on the main context, as it does the getter).
  private func setProperty(
    _ name: String, _ value: OpaquePointer?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
  ) -> Bool {
    func refuse(_ code: GDBusError, _ message: String) -> Bool {
      g_set_error_literal(error, g_dbus_error_quark(), gint(code.rawValue), message)
      return false
    }
    guard let player = hooks.player() else { return refuse(G_DBUS_ERROR_FAILED, "nothing is open yet") }
    guard let value else { return refuse(G_DBUS_ERROR_INVALID_ARGS, "no value") }
    let number = g_variant_get_double(value)
    switch name {
    case "Volume":
      guard let level = Self.volumeLevel(number) else { return refuse(G_DBUS_ERROR_INVALID_ARGS, "not a number") }
      player.updateAudio {
        $0.volumePercent = level * 100
        $0.isMuted = false
      }
    case "Rate":
      switch Self.rateChange(number) {
      case .pause: hooks.playPause(false)
      case .speed(let speed): player.setSpeed(speed)
      case .ignore: break
      }
    default: return refuse(G_DBUS_ERROR_PROPERTY_READ_ONLY, "\(name) is read-only")
    }
    announceChanges()
    return true
  }

  /// The level a client's Volume sets: negative is 0, as the spec says; above the player's most is its most; NaN is
  /// no level (nil).
  static func volumeLevel(_ value: Double) -> Double? {
    value.isNaN ? nil : min(volumes.upperBound, max(volumes.lowerBound, value))
  }

  /// What a client's Rate does: 0 pauses (the spec's "act as though Pause was called"), a speed within
  /// MinimumRate…MaximumRate plays at it, anything else (negative, too fast, NaN) is ignored.
  enum RateChange: Equatable {
    case pause
    case speed(Double)
    case ignore
  }

  /// The change a client's Rate of `value` asks for.
  static func rateChange(_ value: Double) -> RateChange {
    if value == 0 { return .pause }
    return rates.contains(value) ? .speed(value) : .ignore
  }

  /// The level heard, as Volume says it: 0 while muted (`m`), so a desktop's slider shows the silence.
  private func volume(_ player: Player?) -> Double {
    guard let settings = player?.dsp.settings else { return 1 }
    return settings.isMuted ? 0 : settings.volumePercent / 100
  }

  private func status(_ player: Player?) -> String {
    guard let player else { return "Stopped" }
    if !player.isPaused { stoppedByClient = false }  // played again, by a key or the controls
    if stoppedByClient { return "Stopped" }
    switch player.state {
    case .playing: return "Playing"
    case .paused, .loading: return player.isPaused ? "Paused" : "Playing"
    case .ended, .error: return "Stopped"
    }
  }

  private func metadata(_ player: Player?) -> OpaquePointer? {
    let builder = Self.builder("a{sv}")
    defer { g_variant_builder_unref(builder) }
    func add(_ key: String, _ value: OpaquePointer?) {
      g_variant_builder_add_value(
        builder, g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(value)))
    }
    add("mpris:trackid", g_variant_new_object_path(trackID))
    add("xesam:title", g_variant_new_string(hooks.title()))
    if let artist = player?.info?.artist {
      var one: [UnsafePointer<CChar>?] = []
      artist.withCString { name in
        one = [name, nil]
        add("xesam:artist", g_variant_new_strv(&one, 1))
      }
    }
    if let art = hooks.art() { add("mpris:artUrl", g_variant_new_string(art)) }
    if let source = player?.source, let url = Self.url(of: source) { add("xesam:url", g_variant_new_string(url)) }
    if let duration = player?.duration { add("mpris:length", g_variant_new_int64(gint64(duration.wholeMicroseconds))) }
    return g_variant_builder_end(builder)
  }

  /// The source as a URL for `xesam:url`: a URL as given (`https://…`, `test://…`) but for its secrets (any client
  /// of the session bus reads it), a local path as an absolute file:// URL with percent-escapes (nil if GLib cannot
  /// make one of it).
  static func url(of source: String) -> String? {
    if MediaSource.isURL(source) { return MediaSource.withoutSecrets(source) }
    let absolute = g_canonicalize_filename(source, nil)  // relative to the working directory
    defer { g_free(absolute) }
    guard let uri = g_filename_to_uri(absolute, nil, nil) else { return nil }
    defer { g_free(uri) }
    return String(cString: uri)
  }

  /// PropertiesChanged for what changed since the last call: PlaybackStatus (with Metadata, which is known by
  /// then), Volume and Rate, whether a client, a key (`9`, `0`, `m`, `[`, `]`) or the command line changed them.
  /// Called every half second and at once after a client sets a property; nothing is sent when nothing changed.
  /// The first Volume and Rate seen are only noted: a client reads them when it starts watching.
  /// Another entry of the playlist plays: its metadata and what Next and Previous can do are announced.
  func changed() {
    lastStatus = ""
    lastSeeks = nil
    announceChanges()
  }

  /// Seeked, as the spec asks whenever the position moves otherwise than the rate takes it (a seek by key, by the
  /// bar or by a client, a loop back to the start, Stop, a frame step), with where it went: desktops' progress bars
  /// run on from the last Position they read until told. (The clock standing while a picture is awaited or the
  /// network buffers is no jump: a comparison of the clock with the rate took it for one.)
  private func announceSeek(_ player: Player?) {
    guard let connection, let player else { return }
    let seeks = player.seeksAsked
    defer { lastSeeks = seeks.count }
    guard let last = lastSeeks, seeks.count != last else { return }
    var child: OpaquePointer? = g_variant_new_int64(gint64(seeks.target.wholeMicroseconds))
    let parameters = g_variant_new_tuple(&child, 1)
    g_dbus_connection_emit_signal(
      connection, nil, Self.path, "org.mpris.MediaPlayer2.Player", "Seeked", parameters, nil)
  }

  private func announceChanges() {
    guard let connection else { return }
    let player = hooks.player()
    var changed: [(String, OpaquePointer?)] = []
    let status = status(player)
    announceSeek(player)
    let canGo = hooks.canGo()
    if lastCanGo.map({ $0 != canGo }) ?? true {
      lastCanGo = canGo
      changed.append(("CanGoNext", g_variant_new_boolean(canGo.next ? 1 : 0)))
      changed.append(("CanGoPrevious", g_variant_new_boolean(canGo.previous ? 1 : 0)))
    }
    if status != lastStatus {
      lastStatus = status
      changed.append(("PlaybackStatus", g_variant_new_string(status)))
      changed.append(("Metadata", metadata(player)))
    }
    let volume = volume(player)
    if let lastVolume, volume != lastVolume { changed.append(("Volume", g_variant_new_double(volume))) }
    lastVolume = volume
    let rate = player?.speed ?? 1
    if let lastRate, rate != lastRate { changed.append(("Rate", g_variant_new_double(rate))) }
    lastRate = rate
    guard !changed.isEmpty else { return }
    let properties = Self.builder("a{sv}")
    for (name, value) in changed {
      g_variant_builder_add_value(
        properties, g_variant_new_dict_entry(g_variant_new_string(name), g_variant_new_variant(value)))
    }
    let invalidated = Self.builder("as")
    var children: [OpaquePointer?] = [
      g_variant_new_string("org.mpris.MediaPlayer2.Player"), g_variant_builder_end(properties),
      g_variant_builder_end(invalidated),
    ]
    g_variant_builder_unref(properties)
    g_variant_builder_unref(invalidated)
    let parameters = g_variant_new_tuple(&children, 3)
    g_dbus_connection_emit_signal(
      connection, nil, Self.path, "org.freedesktop.DBus.Properties", "PropertiesChanged", parameters, nil)
  }
}
