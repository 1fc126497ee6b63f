import Foundation
import OrbDecode

/// Full HDR tables (`CPUToneMapper`'s 64³ grids, 1 MB each) kept on disk from one run to the next, in
/// `$XDG_CACHE_HOME/orb-player/hdr-tables` (else `~/.cache/…`), so that a stream's first picture is tone-mapped with
/// the full table at once, rather than with a quick 25³ one made while it waits and the full one made behind it
/// (about 13 ms, then 65 ms of a core while the window starts). A stream's first table depends only on its metadata
/// and its first picture's light, so opening a file again, or another file with the same mastering and a dark or
/// bright first picture, finds its table. HDR10 1080p, launch to first picture, 15 alternated launches, medians: 145
/// -> 131 ms with the table kept (142 with none kept; 120 with no table made at all, a build for the measure alone).
///
/// A table is taken only when everything it was made from, but the curve peak, is what is asked for now (with
/// `mathVersion`), and the peak is one `HDRTableKey.serves` accepts (as a table in memory is kept while the detected
/// peak drifts); and when its length, its checksum, and two dozen of its points computed again all agree, so a
/// damaged file is made again and replaced, as is one whose colour math moved those points. At most `kept` tables
/// are kept (16 MB), the least recently used ones removed first.
/// Thread-safety: Sendable; its methods touch only its folder, from any thread: a table is written whole or not at
/// all (`writeWhole`), so a reader sees a whole file or none, and another player's too.
struct HDRTableStore: Sendable {
  let folder: String
  /// Tables kept, at most.
  static let kept = 16
  /// Made one more whenever `HDRToSDR` gives other values (the points checked again catch only some changes): a
  /// table an earlier build made is then not taken.
  static let mathVersion = 1
  /// The format: a changed layout is a new name, and old files go as the least recently used.
  private static let magic = Array("ORBHDRT1".utf8)

  init(folder: String) { self.folder = folder }

  /// The user's cache folder's store; nil where there is no home to keep it in.
  static var standard: HDRTableStore? {
    let environment = ProcessInfo.processInfo.environment
    // XDG: a relative path is no cache folder.
    guard
      let base = environment["XDG_CACHE_HOME"].flatMap({ $0.hasPrefix("/") ? $0 : nil })
        ?? environment["HOME"].flatMap({ $0.hasPrefix("/") ? $0 + "/.cache" : nil })
    else { return nil }
    return HDRTableStore(folder: base + "/orb-player/hdr-tables")
  }

  /// What a table is made from, but the curve peak (which may differ within `HDRTableKey.serves`): the shader
  /// variant, the key's other values as their bits, and every other field of the parameters.
  private static func identity(_ key: HDRTableKey, params: ToneMapParams, size: Int) -> String {
    let v = key.variant
    let hdr = key.hdr.dropFirst().map { String($0.bitPattern, radix: 16) }.joined(separator: ",")
    return
      "math=\(mathVersion) size=\(size) mode=\(v.mode) curve=\(v.curve) bt2020=\(v.fromBT2020) hdr=\(hdr) tone=\(params.curve) "
      + "transfer=\(params.transfer) primaries=\(params.primaries) content=\(params.contentPeak.bitPattern) "
      + "black=\(params.sourceBlack.bitPattern) target=\(params.targetPeak.bitPattern)"
  }

  /// The file name's first part: the identity's hash. The second is the curve peak's bits.
  private static func prefix(_ identity: String) -> String { String(fnv1a(identity.utf8), radix: 16) }

  /// The points' checksum, kept in the header.
  static func checksum(_ points: UnsafePointer<UInt32>, count: Int) -> UInt64 {
    fnv1a(UnsafeBufferPointer(start: points, count: count))
  }

  /// FNV-1a over `values`, each taken whole (a byte, or a table's 32-bit point).
  private static func fnv1a<S: Sequence>(_ values: S) -> UInt64 where S.Element: UnsignedInteger {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for value in values {
      hash = (hash ^ UInt64(value)) &* 0x100_0000_01b3
    }
    return hash
  }

  /// The points a file's table is checked at, computed again (a few microseconds each): the grid's corners, its
  /// centre and 18 between.
  private static func probes(size: Int) -> [(Int, Int, Int)] {
    let last = size - 1
    var picked = [
      (0, 0, 0), (last, last, last), (last, 0, 0), (0, last, 0), (0, 0, last), (last / 2, last / 2, last / 2),
    ]
    var state: UInt32 = 0x2545_f491
    for _ in 0..<18 {
      var next = [Int]()
      for _ in 0..<3 {
        state = state &* 1_664_525 &+ 1_013_904_223
        next.append(Int(state >> 8) % size)
      }
      picked.append((next[0], next[1], next[2]))
    }
    return picked
  }

  /// The kept table for `wanted` (made with `params`, `size` points a side), whose key serves it, the one nearest in
  /// peak; nil when none does or none is whole and right.
  func load(_ wanted: HDRTableKey, params: ToneMapParams, size: Int) -> (
    key: HDRTableKey, points: CPUToneMapper.Points
  )? {
    let identity = Self.identity(wanted, params: params, size: size)
    let prefix = Self.prefix(identity) + "-"
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
    let candidates = names.compactMap { name -> (name: String, peak: Double, key: HDRTableKey)? in
      guard name.hasPrefix(prefix), name.hasSuffix(".table"),
        let bits = UInt64(name.dropFirst(prefix.count).dropLast(".table".count), radix: 16)
      else { return nil }
      let peak = Double(bitPattern: bits)
      guard peak.isFinite, peak > 0 else { return nil }
      let key = HDRTableKey(variant: wanted.variant, hdr: [Float(peak)] + wanted.hdr.dropFirst())
      return key.serves(wanted) ? (name, peak, key) : nil
    }.sorted { abs($0.key.hdr[0] - wanted.hdr[0]) < abs($1.key.hdr[0] - wanted.hdr[0]) }
    for candidate in candidates {
      var made = params
      made.sourcePeak = candidate.peak
      let path = folder + "/" + candidate.name
      if let points = read(path, identity: identity, size: size, params: made) {
        utimes(path, nil)  // used now: the last to go
        return (candidate.key, points)
      }
    }
    return nil
  }

  private func read(_ path: String, identity: String, size: Int, params: ToneMapParams) -> CPUToneMapper.Points? {
    let header = Self.header(identity: identity, checksum: 0)
    let count = size * size * size
    var info = stat()
    guard stat(path, &info) == 0, info.st_size == header.count + count * 4,
      let data = FileManager.default.contents(atPath: path), data.count == header.count + count * 4,
      data.prefix(header.count - 8).elementsEqual(header.prefix(header.count - 8))
    else { return nil }
    let stored = data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: header.count - 8, as: UInt64.self) }
    let points = CPUToneMapper.Points(count: count)
    data.withUnsafeBytes { raw in
      UnsafeMutableRawPointer(points.base).copyMemory(
        from: raw.baseAddress! + header.count, byteCount: count * 4)
    }
    guard UInt64(littleEndian: stored) == Self.checksum(points.base, count: count) else { return nil }
    for (r, g, b) in Self.probes(size: size)
    where points.base[(b * size + g) * size + r] != CPUToneMapper.point(r, g, b, size: size, params: params) {
      return nil
    }
    return points
  }

  /// The magic, the identity's length and text, and the points' checksum (little-endian).
  private static func header(identity: String, checksum: UInt64) -> [UInt8] {
    let text = Array(identity.utf8)
    return magic + withUnsafeBytes(of: UInt32(text.count).littleEndian, Array.init) + text
      + withUnsafeBytes(of: checksum.littleEndian, Array.init)
  }

  /// Keeps the table for `key`, made with `params`, then removes the least recently used beyond `kept`. Failing
  /// (a read-only or full disk) keeps nothing and says nothing: the table is made again next time.
  func save(_ key: HDRTableKey, params: ToneMapParams, size: Int, points: UnsafePointer<UInt32>) {
    let identity = Self.identity(key, params: params, size: size)
    let name = Self.prefix(identity) + "-" + String(params.sourcePeak.bitPattern, radix: 16) + ".table"
    let count = size * size * size
    var bytes = Self.header(identity: identity, checksum: Self.checksum(points, count: count))
    bytes.append(contentsOf: UnsafeRawBufferPointer(start: points, count: count * 4))
    guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil,
      writeWhole(Data(bytes), to: folder + "/" + name) == nil
    else { return }
    prune()
  }

  /// Removes the least recently used tables beyond `kept`, and what a writer stopped halfway left (over a minute old).
  private func prune() {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    let now = Date().timeIntervalSince1970
    var tables: [(path: String, used: Double)] = []
    for name in names {
      let path = folder + "/" + name
      var info = stat()
      guard stat(path, &info) == 0 else { continue }
      let used = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
      if name.hasSuffix(".table") {
        tables.append((path, used))
      } else if name.contains(".table."), now - used > 60 {
        unlink(path)  // `writeWhole`'s file beside a table, left by a process that stopped
      }
    }
    guard tables.count > Self.kept else { return }
    for old in tables.sorted(by: { $0.used < $1.used }).prefix(tables.count - Self.kept) { unlink(old.path) }
  }
}
