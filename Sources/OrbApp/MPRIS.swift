import CGtk
import Foundation
import OrbPlayer

/// MPRIS 2 on the session bus (org.mpris.MediaPlayer2.orbplayer.instancePID): desktop media keys, the shell's media
/// controls and `playerctl` can see what plays and pause, play, stop, seek or quit it.
/// Thread-safety: main thread only (GDBus calls these handlers on the main context).
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
        <property name="Rate" type="d" access="read"/>
        <property name="Metadata" type="a{sv}" access="read"/>
        <property name="Volume" type="d" access="read"/>
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
  static let trackID = "/org/orb/Player/Track/0"

  /// What MPRIS asks of the window.
  struct Hooks {
    var player: () -> Player?
    var title: () -> String
    var quit: () -> Void
    var raise: () -> Void
    var playPause: (_ wantPlaying: Bool?) -> Void
  }

  private let hooks: Hooks
  private var connection: OpaquePointer?
  private var ownerID: guint = 0
  private var lastStatus = ""

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
      let mpris = Unmanaged<MPRIS>.fromOpaque(data!).takeUnretainedValue()
      mpris.call(String(cString: interface!), String(cString: method!), parameters, invocation)
    }
    vtable.get_property = { _, _, _, interface, property, _, data in
      let mpris = Unmanaged<MPRIS>.fromOpaque(data!).takeUnretainedValue()
      return mpris.property(String(cString: interface!), String(cString: property!))
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
    case "PlayPause": hooks.playPause(nil)
    case "Play": hooks.playPause(true)
    case "Pause", "Stop": hooks.playPause(false)
    case "Seek":
      if let player, let parameters {
        let child = g_variant_get_child_value(parameters, 0)
        defer { g_variant_unref(child) }
        if let target = Self.seekTarget(
          offset: Int64(g_variant_get_int64(child)), position: player.position, duration: player.duration)
        {
          player.seek(to: target)
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
        if trackID == Self.trackID,
          let target = Self.positionTarget(Int64(g_variant_get_int64(child)), duration: player.duration)
        {
          player.seek(to: target)
        }
      }
    default: break  // Next, Previous, OpenUri: one file per window
    }
    g_dbus_method_invocation_return_value(invocation, nil)
  }

  /// Where `Seek(offset)` goes, as the MPRIS spec says: before the start is the start; past the end there is no next
  /// track to go to, so the call is ignored (nil), as it is without a known length.
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
    case "HasTrackList", "CanGoNext", "CanGoPrevious": return g_variant_new_boolean(0)
    case "CanSeek": return g_variant_new_boolean(player?.duration != nil ? 1 : 0)
    case "Identity": return g_variant_new_string("Orb Player")
    case "DesktopEntry": return g_variant_new_string("org.orb.Player")
    case "SupportedUriSchemes": return strings(["file", "http", "https", "test"])
    case "SupportedMimeTypes": return strings(["video/mp4", "video/x-matroska", "video/webm"])
    case "PlaybackStatus": return g_variant_new_string(status(player))
    case "Rate": return g_variant_new_double(player?.speed ?? 1)
    case "MinimumRate": return g_variant_new_double(0.25)
    case "MaximumRate": return g_variant_new_double(4)
    case "Volume": return g_variant_new_double((player?.dsp.settings.volumePercent ?? 100) / 100)
    case "Position": return g_variant_new_int64(gint64((player?.position ?? 0) * 1e6))
    case "Metadata": return metadata(player)
    default: return nil
    }
  }

  private func status(_ player: Player?) -> String {
    guard let player else { return "Stopped" }
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
    add("mpris:trackid", g_variant_new_object_path(Self.trackID))
    add("xesam:title", g_variant_new_string(hooks.title()))
    if let duration = player?.duration { add("mpris:length", g_variant_new_int64(gint64(duration * 1e6))) }
    return g_variant_builder_end(builder)
  }

  /// PropertiesChanged for PlaybackStatus (and Metadata once it is known) when they change.
  private func announceChanges() {
    guard let connection else { return }
    let status = status(hooks.player())
    guard status != lastStatus else { return }
    lastStatus = status
    let changed = Self.builder("a{sv}")
    g_variant_builder_add_value(
      changed,
      g_variant_new_dict_entry(
        g_variant_new_string("PlaybackStatus"), g_variant_new_variant(g_variant_new_string(status))))
    g_variant_builder_add_value(
      changed,
      g_variant_new_dict_entry(g_variant_new_string("Metadata"), g_variant_new_variant(metadata(hooks.player()))))
    let invalidated = Self.builder("as")
    var children: [OpaquePointer?] = [
      g_variant_new_string("org.mpris.MediaPlayer2.Player"), g_variant_builder_end(changed),
      g_variant_builder_end(invalidated),
    ]
    g_variant_builder_unref(changed)
    g_variant_builder_unref(invalidated)
    let parameters = g_variant_new_tuple(&children, 3)
    g_dbus_connection_emit_signal(
      connection, nil, Self.path, "org.freedesktop.DBus.Properties", "PropertiesChanged", parameters, nil)
  }
}
