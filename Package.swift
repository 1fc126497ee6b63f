// swift-tools-version:6.2
import PackageDescription

let package = Package(
  name: "OrbPlayer",
  products: [
    .executable(name: "orb-player", targets: ["OrbApp"])
  ],
  targets: [
    .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat"),
    .systemLibrary(name: "CVulkan", pkgConfig: "vulkan"),
    .systemLibrary(name: "CGtk", pkgConfig: "gtk4"),
    .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3"),
    // Guesses the character set of legacy (non-UTF-8) subtitle files.
    .systemLibrary(name: "CUchardet", pkgConfig: "uchardet"),
    .target(name: "OrbDecode", dependencies: ["CFFmpeg", "CUchardet", "COrbPixels"]),
    // Per-pixel loops in plain C, where Swift's checked conversions cost more than the work (HDR tone mapping,
    // deinterlacing).
    .target(name: "COrbPixels"),
    // libass (ASS/SSA subtitles drawn as their scripts place and style them), and blending its pictures, in C.
    .target(name: "COrbASS", linkerSettings: [.linkedLibrary("ass")]),
    .target(name: "OrbRender", dependencies: ["CVulkan", "CFFmpeg", "COrbPixels", "COrbASS", "OrbDecode"]),
    // Audio DSP in plain Swift (time-stretch, EQ, night mode, remap, volume): no PipeWire, no GTK.
    .target(name: "OrbDSP"),
    // The real-time half of the PipeWire output (ring buffer, process callback) in C: it must never allocate,
    // lock or touch reference counts, which plain C guarantees.
    .target(
      name: "COrbAudio", dependencies: ["CPipeWire"],
      cSettings: [.unsafeFlags(["-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2", "-D_REENTRANT"])]),
    .target(name: "OrbPlayer", dependencies: ["OrbDecode", "OrbRender", "OrbDSP", "COrbAudio"]),
    // What the process changes about its libraries' start-up before `main` (a library constructor's wasted work):
    // definitions that the libraries must find in the executable, so they are exported in every build.
    .target(
      name: "COrbStartup",
      linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=_ZN3hwy8platform15TimerResolutionEv"])]),
    // The signal handler, in C: async-signal-safe (`SignalWatch`).
    .target(name: "COrbSignals"),
    .executableTarget(
      name: "OrbApp",
      dependencies: ["OrbPlayer", "OrbRender", "OrbDecode", "OrbDSP", "CGtk", "COrbStartup", "COrbSignals"],
      swiftSettings: [.defaultIsolation(MainActor.self)]
    ),
    // Generated media, the built binary and PNG reading, shared by the test targets.
    .target(name: "OrbTestSupport", path: "Tests/OrbTestSupport"),
    .testTarget(name: "OrbDecodeTests", dependencies: ["OrbDecode", "COrbPixels", "OrbTestSupport"]),
    .testTarget(name: "OrbRenderTests", dependencies: ["OrbRender", "OrbDecode", "COrbPixels", "OrbTestSupport"]),
    .testTarget(name: "OrbPlayerTests", dependencies: ["OrbPlayer", "OrbDecode", "OrbRender", "OrbTestSupport"]),
    .testTarget(name: "OrbDSPTests", dependencies: ["OrbDSP"]),
    // The app's tests drive the built binary: they link no module of the player.
    .testTarget(name: "OrbAppTests", dependencies: ["OrbTestSupport"]),
  ]
)
