import COrbPixels
import XCTest

/// `orb_make_field_lines` (the deinterlacer's per-sample rule, vector code where it can) against a plain,
/// one-sample-at-a-time statement of the same rule, on random pictures: every size, step and sample width gives the
/// same samples, at the edges too.
final class FieldLinesTests: XCTestCase {
  /// The rule written out: the missing line's sample from the lines around it, in the pictures around.
  private func reference(
    prev: [Int], cur: [Int], next: [Int], width: Int, height: Int, missing: Int, missingIsLater: Bool, step s: Int
  ) -> [Int] {
    let before = missingIsLater ? prev : cur
    let after = missingIsLater ? cur : next
    var out = cur
    for y in 0..<height where y & 1 == missing {
      // At the first and last lines the lines beyond are those on the other side; the check with the lines two
      // beyond is left out on the second and the last but one.
      let towardsTop = y > 0 ? -1 : 1
      let towardsBottom = y + 1 < height ? 1 : -1
      let above = y + towardsTop
      let below = y + towardsBottom
      let above2 = min(max(y + 2 * towardsTop, 0), height - 1)
      let below2 = min(max(y + 2 * towardsBottom, 0), height - 1)
      let check = y != 1 && y + 2 != height
      func up(_ x: Int) -> Int { cur[above * width + x] }
      func down(_ x: Int) -> Int { cur[below * width + x] }
      for x in 0..<width {
        let c = up(x)
        let e = down(x)
        let d = (before[y * width + x] + after[y * width + x]) >> 1
        var diff = max(
          abs(before[y * width + x] - after[y * width + x]) >> 1,
          (abs(prev[above * width + x] - c) + abs(prev[below * width + x] - e)) >> 1,
          (abs(next[above * width + x] - c) + abs(next[below * width + x] - e)) >> 1)
        var pred = (c + e) >> 1
        if x >= 3 * s && x < width - 3 * s {
          var best = abs(up(x - s) - down(x - s)) + abs(c - e) + abs(up(x + s) - down(x + s)) - 1
          for direction in [-1, 1] {
            for j in 1...2 {
              let k = direction * j * s
              let score =
                abs(up(x - s + k) - down(x - s - k)) + abs(up(x + k) - down(x - k))
                + abs(up(x + s + k) - down(x + s - k))
              guard score < best else { break }
              best = score
              pred = (up(x + k) + down(x - k)) >> 1
            }
          }
        }
        let b = (before[above2 * width + x] + after[above2 * width + x]) >> 1
        let f = (before[below2 * width + x] + after[below2 * width + x]) >> 1
        let hi = max(d - e, d - c, min(b - c, f - e))
        let lo = min(d - e, d - c, max(b - c, f - e))
        if check { diff = max(diff, lo, -hi) }
        out[y * width + x] = min(max(pred, d - diff), d + diff)
      }
    }
    return out
  }

  private func made(
    prev: [Int], cur: [Int], next: [Int], width: Int, height: Int, missing: Int, missingIsLater: Bool, step: Int,
    bytes: Int, bits: Int
  ) -> [Int] {
    func store(_ samples: [Int]) -> [UInt8] {
      bytes == 1
        ? samples.map { UInt8($0) } : samples.flatMap { withUnsafeBytes(of: UInt16($0)) { Array($0) } }
    }
    let (p, c, n) = (store(prev), store(cur), store(next))
    var out = [UInt8](repeating: 0, count: c.count)
    p.withUnsafeBufferPointer { pp in
      c.withUnsafeBufferPointer { cp in
        n.withUnsafeBufferPointer { np in
          out.withUnsafeMutableBufferPointer { op in
            var job = orb_field_job()
            job.dst = op.baseAddress
            job.dst_stride = width * bytes
            job.prev = pp.baseAddress
            job.cur = cp.baseAddress
            job.next = np.baseAddress
            (job.prev_stride, job.cur_stride, job.next_stride) = (width * bytes, width * bytes, width * bytes)
            job.width = Int32(width)
            job.height = Int32(height)
            job.missing = Int32(missing)
            job.missing_is_later = missingIsLater ? 1 : 0
            job.bytes = Int32(bytes)
            job.bits = Int32(bits)
            job.step = Int32(step)
            orb_make_field_lines(&job)
          }
        }
      }
    }
    if bytes == 1 { return out.map(Int.init) }
    return stride(from: 0, to: out.count, by: 2).map { Int(out[$0]) | Int(out[$0 + 1]) << 8 }
  }

  func testEverySampleFollowsTheRule() {
    var generator = SystemRandomNumberGenerator()
    // 8 bits and 10 and 12 in 16-bit words take the vector code; 16 bits the plain loop.
    for (bytes, bits) in [(1, 8), (2, 10), (2, 12), (2, 16)] {
      let top = (1 << bits) - 1
      for width in [1, 7, 22, 45, 100] {
        for height in [2, 5, 8] {
          for step in [1, 2] {
            // Pictures with edges and flat areas, not only noise: a few levels, some of them repeated.
            func picture() -> [Int] {
              (0..<width * height).map { _ in
                Bool.random(using: &generator)
                  ? [0, top / 2, top][Int.random(in: 0...2, using: &generator)]
                  : Int.random(in: 0...top, using: &generator)
              }
            }
            let (prev, cur, next) = (picture(), picture(), picture())
            for missing in [0, 1] {
              for later in [false, true] {
                let want = reference(
                  prev: prev, cur: cur, next: next, width: width, height: height, missing: missing,
                  missingIsLater: later, step: step)
                let got = made(
                  prev: prev, cur: cur, next: next, width: width, height: height, missing: missing,
                  missingIsLater: later, step: step, bytes: bytes, bits: bits)
                let wrong = zip(want, got).enumerated().first { $0.element.0 != $0.element.1 }
                XCTAssertNil(
                  wrong,
                  "\(bits) bits, \(width)x\(height), step \(step), missing \(missing), later \(later): "
                    + "sample \(wrong.map { "\($0.offset): \($0.element.1) not \($0.element.0)" } ?? "")")
              }
            }
          }
        }
      }
    }
  }
}
