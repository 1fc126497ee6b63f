import COrbPixels
import Foundation
import OrbDecode
import Synchronization

/// PQ and HLG pictures tone-mapped on the CPU: what the shader does on a GPU, done where there is none. swscale gives
/// the source's Y'CbCr at the target's size (16-bit 4:4:4), a band of rows at a time on each thread; each pixel is
/// converted with the shader's matrix (`YUVMatrix`), then goes through the same 64³ table the GPU samples
/// (`HDRTable`'s grid of `HDRToSDR`, interpolated tetrahedrally, shaders/hdrlut.glsl) and the same ordered dither,
/// into 8-bit RGBA or BGRA. On lavapipe the shader's sampling of the planes and the table took 59 % of the HDR
/// benchmark's CPU; here it is one pass of plain arithmetic.
/// The table is made again only when the stream kind, curve or peaks change beyond what `HDRTableKey.serves`
/// absorbs. Making it (64³ points of `HDRToSDR`) takes a few hundred ms on one thread, so it is never made while a
/// picture waits: when only the peak moved, the table in use stays until a worker thread (below playback's
/// priority) has made the new one; for a stream's first picture (or a new kind or curve) the full table an earlier
/// run kept is taken (`HDRTableStore`), else a 25³ table is made at
/// once (about 13 ms; 33³ took 30 ms, which the first picture waited for, and came no closer to the full table's
/// pictures) and the full one behind it; for a local file that table is made, and the first picture drawn with it,
/// while the window starts (`EarlyOpen`, `FrameDrawer.drawAhead`).
/// Thread-safety: Unsafe; owned by the renderer's thread, which hands each band thread its own rows and planes for
/// one `draw`. The worker hands its table over through a `Mutex`.
final class CPUToneMapper {
  /// The encoded SDR signal at each point of a `size`³ grid, r fastest, then g, then b: one 32-bit word a point
  /// (`orb_table_point`: R and G in eighths of an 8-bit code, B in quarters); 1 MB for the full table (16-bit values
  /// in 256ths of a code took 1.5 MB and twice the gathers a pixel, floats 4 MB), and for a moment two tables are held
  /// (the one in use and the one made for a new peak).
  private struct Grid: Sendable {
    let size: Int
    let points: Points
    let key: HDRTableKey
  }

  /// A grid's memory, mapped for it alone and unmapped with it. Each full table is made on a thread of its own, and
  /// from malloc it came from that thread's arena, which kept its pages when the table was replaced: every change
  /// of the detected peak left 2 MB more resident for the rest of the run (HDR10 1080p clip: 147 -> 150 MB by its end).
  /// Thread-safety: the points are written once, by `makeGrid` or `HDRTableStore.load`, before the grid is shared,
  /// then only read.
  final class Points: @unchecked Sendable {
    let base: UnsafeMutablePointer<UInt32>
    /// The mapping's length, or 0 where mapping failed and the points came from malloc instead.
    private let mapped: Int

    /// `count` points, all zero.
    init(count: Int) {
      let bytes = count * MemoryLayout<UInt32>.stride
      let memory = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
      if let memory, memory != MAP_FAILED {
        base = memory.bindMemory(to: UInt32.self, capacity: count)
        mapped = bytes
      } else {
        base = .allocate(capacity: count)
        base.initialize(repeating: 0, count: count)
        mapped = 0
      }
    }

    deinit {
      if mapped > 0 { munmap(base, mapped) } else { base.deallocate() }
    }
  }

  /// Points a side of the full table (the shader's) and of the one made at once.
  private static let fullSize = HDRTable.size
  private static let quickSize = 25
  private var grid: Grid?
  /// Where the worker leaves the full table it made; `building` is the key it was asked for, until it is taken.
  private final class Slot: Sendable { let grid = Mutex<Grid?>(nil) }
  private let made = Slot()
  private var building: HDRTableKey?
  /// The key the last picture asked for.
  private var wanted: HDRTableKey?
  /// Where full tables are kept between runs; nil: made every time.
  private let tables: HDRTableStore?
  /// Each band thread's Y', Cb and Cr rows as swscale writes them (16-bit codes, full scale): `bandRows` rows of the
  /// picture's width, so a band is tone-mapped while it is still in the core's cache, and the whole picture is never
  /// held as planes (5.3 MB at 1280x720).
  private var bands: UnsafeMutablePointer<UInt16>?
  private var bandsSize = (width: 0, parts: 0)
  /// Rows swscale makes at a time for one band thread: 240 KB of planes at 1280 wide.
  static let bandRows = 32

  init(tables: HDRTableStore? = nil) { self.tables = tables }

  deinit { bands?.deallocate() }

  /// Whether the table in use is the full one, and none is being made (for tests).
  var hasFullTable: Bool { grid?.size == Self.fullSize && building == nil }

  /// Whether the tone mapper draws pictures of this kind: PQ and HLG (not wide-gamut SDR, which the GPU keeps).
  static func accepts(_ variant: PipelineVariant) -> Bool { variant.mode == 1 || variant.mode == 2 }

  /// Draws a `width`x`height` picture at `out` (`rowBytes` apart; `origin` is where it lies in the target, for the
  /// dither's pattern), on `parts` threads, each taking its own rows a band at a time. `convert(part, first, rows,
  /// planes, strides)` fills the three 16-bit planes it is given with rows `first..<first + rows` of the source's
  /// Y'CbCr at this size, which `matrix` turns into R'G'B' (the source's samples had `bitDepth` bits); it is called
  /// from `parts` threads at once, each with its own `part`.
  func draw(
    width: Int, height: Int, into out: UnsafeMutableRawPointer, rowBytes: Int, origin: (x: Int, y: Int),
    order: PixelOrder, matrix: YUVMatrix, bitDepth: Int, params: ToneMapParams, variant: PipelineVariant,
    parts: Int,
    convert: @Sendable (_ part: Int, _ first: Int, _ rows: Int, [UnsafeMutablePointer<UInt8>?], [Int32]) -> Bool
  ) -> Bool {
    let parts = max(1, parts)
    let band = Self.bandRows * width
    if bandsSize != (width, parts) {
      bands?.deallocate()
      bands = .allocate(capacity: band * 3 * parts)
      bandsSize = (width, parts)
    }
    guard let bands else { return false }
    let table = self.table(params: params, variant: variant)
    let bgra = order == .bgra
    let size = table.size
    // The matrix in grid units (a 16-bit sample in, a grid coordinate out), as Float rows. swscale widens a
    // sample of `bitDepth` bits by a shift, so the code value is the sample over (2^depth - 1) * 2^(16 - depth).
    let scale = Double(size - 1)
    let full = Double(((1 << bitDepth) - 1) << (16 - bitDepth))
    let rows = matrix.rows.flatMap { r in
      [Float(r.x * scale / full), Float(r.y * scale / full), Float(r.z * scale / full), Float(r.w * scale)]
    }
    // The dither's offsets (+0.5 for rounding) for the eight rows of its pattern, each from the picture's first
    // column: made once a picture, not once a row.
    let dither = (0..<64).map { i in
      Float(OrderedDither.offset(x: origin.x + i % 8, y: origin.y + i / 8)) + 0.5
    }
    let failed = Atomic<Bool>(false)
    do {
      // Each part writes its own rows of `out` from its own band of planes; the grid is only read while they run.
      nonisolated(unsafe) let (grid, bands, out) = (UnsafePointer(table.points.base), bands, out)
      let share = (height + parts - 1) / parts
      DispatchQueue.concurrentPerform(iterations: parts) { part in
        let planes = bands + part * band * 3
        let pointers: [UnsafeMutablePointer<UInt8>?] =
          (0..<3).map {
            UnsafeMutableRawPointer(planes + $0 * band).assumingMemoryBound(to: UInt8.self)
          } + [nil]
        let strides = [Int32(width * 2), Int32(width * 2), Int32(width * 2), 0]
        let end = min(height, (part + 1) * share)
        for first in stride(from: part * share, to: end, by: Self.bandRows) {
          let count = min(Self.bandRows, end - first)
          guard convert(part, first, count, pointers, strides) else {
            failed.store(true, ordering: .relaxed)
            return
          }
          for r in 0..<count {
            let y = first + r
            let row = r * width
            Self.mapRow(
              y: planes + row, cb: planes + band + row, cr: planes + 2 * band + row, count: width, matrix: rows,
              grid: grid, size: size, out: (out + y * rowBytes).assumingMemoryBound(to: UInt32.self),
              dither: dither[(y % 8) * 8..<(y % 8) * 8 + 8], bgra: bgra)
          }
        }
      }
    }
    return !failed.load(ordering: .relaxed)
  }

  /// One row: 16-bit Y'CbCr → R'G'B' by `matrix` (in grid units) → the table, tetrahedrally → plus the dither
  /// offset → rounded to 8 bits, opaque (COrbPixels' `orb_tone_map_row`).
  private static func mapRow(
    y: UnsafePointer<UInt16>, cb: UnsafePointer<UInt16>, cr: UnsafePointer<UInt16>, count: Int,
    matrix: [Float], grid: UnsafePointer<UInt32>, size: Int, out: UnsafeMutablePointer<UInt32>,
    dither: ArraySlice<Float>, bgra: Bool
  ) {
    dither.withUnsafeBufferPointer { d in
      orb_tone_map_row(y, cb, cr, Int32(count), matrix, grid, Int32(size), d.baseAddress, bgra ? 1 : 0, out)
    }
  }

  /// The table to draw with for `params`: the one held while it serves (`HDRTableKey.serves`), the full one from the
  /// worker once it is there, else the quick one made now.
  private func table(params: ToneMapParams, variant: PipelineVariant) -> Grid {
    let key = Self.key(params: params, variant: variant)
    wanted = key
    if let done = made.grid.withLock({ $0.take() }) { take(done) }
    if let grid, grid.key.serves(key) {
      if grid.size != Self.fullSize { build(key, params: params, keep: true) }
      return grid
    }
    // Only the peak moved: the table in use serves until the worker has made the one for the new peak.
    if let grid, grid.key.variant == key.variant, grid.key.hdr.dropFirst() == key.hdr.dropFirst() {
      build(key, params: params)
      return grid
    }
    // A new stream, kind or curve: the full table kept from an earlier run, else a quick one now and the full one
    // made behind it, and kept.
    if let kept = tables?.load(key, params: params, size: Self.fullSize) {
      let full = Grid(size: Self.fullSize, points: kept.points, key: kept.key)
      grid = full
      return full
    }
    let quick = Self.makeGrid(size: Self.quickSize, params: params, key: key)
    grid = quick
    build(key, params: params, keep: true)
    return quick
  }

  private static func key(params: ToneMapParams, variant: PipelineVariant) -> HDRTableKey {
    HDRTableKey(
      variant: variant,
      hdr: [params.sourcePeak, params.targetPeak, params.contentPeak, params.sourceBlack].map(Float.init))
  }

  /// Makes the table a picture tone-mapped with `params` is drawn with, now, so that the picture need not wait for
  /// it (`FrameDrawer.drawAhead`, where no picture is drawn ahead).
  func prepareTable(params: ToneMapParams, variant: PipelineVariant) { _ = table(params: params, variant: variant) }

  /// Has the worker make the full table for `key`, unless it is making one already (the next picture asks again);
  /// with `keep`, the worker then keeps it in `tables`. (Tables made as the detected peak moves are not kept: a
  /// stream's first picture is what waits for a table.)
  private func build(_ key: HDRTableKey, params: ToneMapParams, keep: Bool = false) {
    guard building == nil else { return }
    building = key
    // The worker shares only the slot, through its lock, and the store, which is Sendable.
    let made = self.made
    let store = keep ? tables : nil
    let (size, nice) = (Self.fullSize, Self.tableNice)
    startThread(named: "orb-hdr-table") {
      // On one thread below playback's: made on every core at once, a table held the decoder back for about 200 ms
      // each time the detected peak moved, and a 4K HDR10 clip dropped pictures at each. The table in use serves
      // until this one is there.
      setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
      let grid = CPUToneMapper.makeGrid(size: size, params: params, key: key, parallel: false)
      made.grid.withLock { $0 = grid }
      // Its points stay mapped while they are written: the renderer may let the grid go meanwhile.
      withExtendedLifetime(grid) { store?.save(key, params: params, size: size, points: grid.points.base) }
    }
  }

  /// The worker's table, in place of the one in use; unless that one serves the last key asked for while the
  /// worker's does not (made for an earlier stream or kind; the next picture has the full one made for this one).
  private func take(_ done: Grid) {
    building = nil
    if let grid, let wanted, grid.key.serves(wanted), !done.key.serves(wanted) { return }
    grid = done
  }

  /// Waits up to `timeout` seconds for a table the worker is making, and takes it: pictures drawn after this use
  /// the full table (for a test, or a still picture that must be exact).
  func finishTable(timeout: Double) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while building != nil && Date() < deadline {
      if let done = made.grid.withLock({ $0.take() }) {
        take(done)
        return
      }
      usleep(2_000)
    }
  }

  /// The nice value of the thread that makes the full table (Linux: a thread's own; 0 is playback's).
  static let tableNice: Int32 = 10

  /// The grid point of a table with `size` points a side at (r, g, b), as `makeGrid` makes it.
  static func point(_ r: Int, _ g: Int, _ b: Int, size: Int, params: ToneMapParams) -> UInt32 {
    func light(_ i: Int) -> Double {
      HDRToSDR.channelLight(SIMD3(repeating: Double(i) / Double(size - 1)), params: params).x
    }
    return point(light: SIMD3(light(r), light(g), light(b)), params: params)
  }

  /// The grid point of the channels' light `light`.
  private static func point(light: SIMD3<Double>, params: ToneMapParams) -> UInt32 {
    let nits = HDRToSDR.combine(light, params: params)
    let codes = HDRToSDR.map(rgbLinearNits: nits, params: params) * 255
    return orb_table_point(codes.x, codes.y, codes.z)
  }

  /// `HDRToSDR` on a `size`³ grid; with `parallel`, each slice of it on a thread of its own.
  private static func makeGrid(size: Int, params: ToneMapParams, key: HDRTableKey, parallel: Bool = true) -> Grid {
    let points = Points(count: size * size * size)
    // Each grid step's light, channel by channel: half the powers a point took (0.7 of 8 CPU s of a 5 s 4K HDR10 clip
    // went to making tables).
    let light = (0..<size).map {
      HDRToSDR.channelLight(SIMD3(repeating: Double($0) / Double(size - 1)), params: params).x
    }
    // Each slice of the grid is written by its own iteration.
    nonisolated(unsafe) let grid = points.base
    @Sendable func slice(_ b: Int) {
      for g in 0..<size {
        for r in 0..<size {
          grid[(b * size + g) * size + r] = point(light: SIMD3(light[r], light[g], light[b]), params: params)
        }
      }
    }
    if parallel {
      DispatchQueue.concurrentPerform(iterations: size, execute: slice)
    } else {
      for b in 0..<size { slice(b) }
    }
    return Grid(size: size, points: points, key: key)
  }
}
