import Foundation
import XCTest

@testable import OrbDecode
@testable import OrbRender

/// Full HDR tables kept between runs (`HDRTableStore`): a stream's first HDR picture is drawn with the full table a
/// run before made, and looks as that run's pictures did; a damaged table, or one whose points another build's colour
/// math made, is not taken and is made again; the folder keeps the most recently used tables.
final class HDRTableStoreTests: XCTestCase {
  private var folder = ""

  override func setUpWithError() throws {
    folder = NSTemporaryDirectory() + "orb-hdr-tables-\(getpid())-\(UUID().uuidString)"
  }

  override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

  private func tables() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".table") }.sorted()
  }

  /// Waits up to 10 s for `condition`.
  private func eventually(_ what: String, _ condition: () -> Bool) {
    let deadline = Date(timeIntervalSinceNow: 10)
    while !condition() && Date() < deadline { usleep(20_000) }
    XCTAssertTrue(condition(), what)
  }

  func testAStreamsFirstPictureIsDrawnWithTheTableAnEarlierRunKept() throws {
    let frame = try XCTUnwrap(TestPatternSource(url: "test://hdr10-bars?size=640x360").nextFrame())
    let store = HDRTableStore(folder: folder)
    func draw(_ toneMapping: ToneMapping = ToneMapping()) throws -> (drawer: FrameDrawer, pixels: [UInt8]) {
      let drawer = try FrameDrawer(device: .whenNeeded, cpuConversion: true, memoryPixelOrder: .rgba, tables: store)
      let target = try drawer.makeTarget(width: 640, height: 360, exportable: false, readable: true)
      try drawer.render(frame, into: target, toneMapping: toneMapping)
      return (drawer, Array(try XCTUnwrap(target.pixels)))
    }

    // The first run: the quick table, the full one made behind it, then kept.
    let first = try draw()
    XCTAssertFalse(first.drawer.hasFullTable, "nothing kept yet: the quick table")
    first.drawer.finishTable(timeout: 60)
    XCTAssertTrue(first.drawer.hasFullTable, "the full table made")
    let target = try first.drawer.makeTarget(width: 640, height: 360, exportable: false, readable: true)
    try first.drawer.render(frame, into: target, toneMapping: ToneMapping())
    let full = Array(try XCTUnwrap(target.pixels))
    XCTAssertNotEqual(first.pixels, full, "the quick table's picture differs a little from the full table's")
    eventually("the full table is kept") { tables().count == 1 }
    let path = folder + "/" + (tables().first ?? "")
    let kept = try XCTUnwrap(FileManager.default.contents(atPath: path))
    XCTAssertGreaterThan(kept.count, 64 * 64 * 64 * 4, "a full 64³ table")

    // The next run: the full table at once, the very picture the first run drew with it.
    let second = try draw()
    XCTAssertTrue(second.drawer.hasFullTable, "the kept table, none made")
    XCTAssertEqual(second.pixels, full)

    // Another curve is another table.
    let hable = try draw(ToneMapping(curve: .hable))
    XCTAssertFalse(hable.drawer.hasFullTable, "a table for BT.2390 does not serve Hable")
    hable.drawer.finishTable(timeout: 60)
    eventually("Hable's table is kept beside it") { tables().count == 2 }

    // A damaged table (one byte of its points) is not taken; the table is made again and kept whole.
    var damaged = kept
    damaged[kept.count - 1000] ^= 0x40
    try damaged.write(to: URL(fileURLWithPath: path))
    let afterDamage = try draw()
    XCTAssertFalse(afterDamage.drawer.hasFullTable, "a damaged table is not taken")
    XCTAssertEqual(afterDamage.pixels, first.pixels, "drawn with the quick table, as with none kept")
    afterDamage.drawer.finishTable(timeout: 60)
    eventually("the table is made again and kept") { FileManager.default.contents(atPath: path) == kept }

    // A table cut short is not taken either.
    try kept.prefix(kept.count - 4).write(to: URL(fileURLWithPath: path))
    let afterCut = try draw()
    XCTAssertFalse(afterCut.drawer.hasFullTable, "a table cut short is not taken")
    afterCut.drawer.finishTable(timeout: 60)
    eventually("the table is made again and kept") { FileManager.default.contents(atPath: path) == kept }

    // A table whose checksum holds but whose points another build's colour math made (its first corner moved) is
    // not taken either.
    var other = kept
    let identityLength = Int(kept[8]) | Int(kept[9]) << 8 | Int(kept[10]) << 16 | Int(kept[11]) << 24
    let header = 12 + identityLength + 8
    other[header] &+= 1
    let sum = other.withUnsafeBytes { raw in
      HDRTableStore.checksum(
        raw.baseAddress!.advanced(by: header).assumingMemoryBound(to: UInt32.self), count: (kept.count - header) / 4)
    }
    withUnsafeBytes(of: sum.littleEndian) { other.replaceSubrange(header - 8..<header, with: $0) }
    try other.write(to: URL(fileURLWithPath: path))
    let afterOther = try draw()
    XCTAssertFalse(afterOther.drawer.hasFullTable, "a table another build made is not taken")
    afterOther.drawer.finishTable(timeout: 60)
    eventually("the table is made again and kept") { FileManager.default.contents(atPath: path) == kept }
  }

  /// The store on its own, with small tables: a kept table serves a peak within `HDRTableKey.serves`'s tolerance
  /// (the nearest one kept), not one beyond it, nor other parameters; at most `kept` tables stay, the least recently
  /// used going first.
  func testTheStoreFindsTheNearestPeakAndKeepsTheMostRecentlyUsed() throws {
    let store = HDRTableStore(folder: folder)
    let variant = PipelineVariant(mode: 1, curve: 0, fromBT2020: true)
    let size = 4
    func params(_ peak: Double) -> ToneMapParams {
      var p = ToneMapParams(sourcePeak: 1000)
      p.contentPeak = 4000
      p.sourcePeak = peak
      return p
    }
    func key(_ peak: Double) -> HDRTableKey {
      let p = params(peak)
      return HDRTableKey(
        variant: variant, hdr: [p.sourcePeak, p.targetPeak, p.contentPeak, p.sourceBlack].map(Float.init))
    }
    func save(_ peak: Double) {
      let points = (0..<size * size * size).map { i in
        CPUToneMapper.point(i % size, i / size % size, i / (size * size), size: size, params: params(peak))
      }
      points.withUnsafeBufferPointer {
        store.save(key(peak), params: params(peak), size: size, points: $0.baseAddress!)
      }
    }
    XCTAssertNil(store.load(key(1000), params: params(1000), size: size), "an empty folder")
    save(1000)
    save(1040)
    XCTAssertEqual(store.load(key(1000), params: params(1000), size: size)?.key.hdr[0], 1000)
    XCTAssertEqual(store.load(key(1030), params: params(1030), size: size)?.key.hdr[0], 1040, "the nearest peak")
    XCTAssertEqual(store.load(key(1010), params: params(1010), size: size)?.key.hdr[0], 1000, "the nearest peak")
    XCTAssertNil(store.load(key(1200), params: params(1200), size: size), "a peak beyond the tolerance")
    var brighter = params(1000)
    brighter.targetPeak = 300
    XCTAssertNil(store.load(key(1000), params: brighter, size: size), "another display peak")
    XCTAssertNil(store.load(key(1000), params: params(1000), size: 5), "another size")

    // 1000 used last: it stays when 15 more come (17 in all), and 1040, the least recently used, goes.
    usleep(50_000)  // beyond a coarse file clock's tick
    XCTAssertNotNil(store.load(key(1000), params: params(1000), size: size))
    usleep(50_000)
    for i in 0..<HDRTableStore.kept - 1 {
      usleep(2_000)
      save(2000 + Double(i) * 200)
    }
    XCTAssertEqual(tables().count, HDRTableStore.kept)
    XCTAssertNil(store.load(key(1040), params: params(1040), size: size), "the least recently used went")
    XCTAssertNotNil(store.load(key(1000), params: params(1000), size: size), "the one used last stayed")
  }
}
