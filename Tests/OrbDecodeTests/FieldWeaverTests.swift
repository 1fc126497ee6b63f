import CFFmpeg
import XCTest

@testable import OrbDecode

/// Fields of a stream coded in fields become frames of twice their height: a top and a bottom field in a row woven
/// into one (the top field's rows at the even rows, in every plane), a field with no partner alone with each row
/// twice; nothing is lost or kept past a seek.
final class FieldWeaverTests: XCTestCase {
  private let width = 8
  private let height = 4
  private let duration = 0.02
  private var made: [UnsafeMutablePointer<AVFrame>?] = []

  override func tearDown() {
    for i in made.indices { av_frame_free(&made[i]) }
    made = []
  }

  /// A field of `format` (`height` rows: 4, or a frame's 8) whose samples in row r of plane p are `base + 10 * p + r`,
  /// marked a top or a bottom field (or not marked), at field number `index`'s time.
  private func field(
    top: Bool?, base: Int, index: Int, format: AVPixelFormat = AV_PIX_FMT_GRAY8, height: Int? = nil
  ) throws -> Deinterlacer.Timed {
    let height = height ?? self.height
    let frame = try XCTUnwrap(av_frame_alloc())
    frame.pointee.format = format.rawValue
    frame.pointee.width = Int32(width)
    frame.pointee.height = Int32(height)
    XCTAssertGreaterThanOrEqual(av_frame_get_buffer(frame, 0), 0)
    for plane in 0..<Int(av_pix_fmt_count_planes(format)) {
      let rows = plane == 0 ? height : height / 2
      let columns = plane == 0 ? width : width / 2
      for r in 0..<rows {
        let row = try XCTUnwrap(Deinterlacer.plane(frame, plane)) + r * Int(Deinterlacer.stride(frame, plane))
        for x in 0..<columns { row[x] = UInt8(base + 10 * plane + r) }
      }
    }
    if let top { orb_frame_set_interlaced(frame, top ? 1 : 0) }
    return Deinterlacer.Timed(frame: frame, time: Double(index) * duration, duration: duration)
  }

  /// The first sample of each row of `plane`.
  private func rows(_ timed: Deinterlacer.Timed, plane: Int = 0) -> [Int] {
    if !made.contains(where: { $0 == timed.frame }) { made.append(timed.frame) }  // freed once, at the end
    let rows = Int(timed.frame.pointee.height) >> (plane == 0 ? 0 : 1)
    return (0..<rows).map {
      Int(Deinterlacer.plane(timed.frame, plane)![$0 * Int(Deinterlacer.stride(timed.frame, plane))])
    }
  }

  func testATopAndABottomFieldBecomeOneFrameOfTwiceTheHeight() throws {
    var weaver = FieldWeaver(topFirst: true)
    XCTAssertEqual(weaver.offer(try field(top: true, base: 10, index: 0)).count, 0, "the first field waits")
    let out = weaver.offer(try field(top: false, base: 100, index: 1))
    XCTAssertEqual(out.count, 1)
    let frame = try XCTUnwrap(out.first)
    XCTAssertEqual(frame.frame.pointee.width, Int32(width))
    XCTAssertEqual(rows(frame), [10, 100, 11, 101, 12, 102, 13, 103], "the top field's rows at the even rows")
    XCTAssertEqual(orb_frame_is_interlaced(frame.frame), 1)
    XCTAssertEqual(orb_frame_top_field_first(frame.frame), 1, "the top field came first")
    XCTAssertEqual(frame.time, 0, accuracy: 1e-9)
    XCTAssertEqual(frame.duration, 2 * duration, accuracy: 1e-9, "the frame lasts both fields")
  }

  func testABottomFieldFirstIsWovenBelowAndMarkedSo() throws {
    for order in [false, nil] {  // said by the stream, or learnt from its first field
      var weaver = FieldWeaver(topFirst: order)
      XCTAssertEqual(weaver.offer(try field(top: false, base: 100, index: 3)).count, 0)
      let frame = try XCTUnwrap(weaver.offer(try field(top: true, base: 10, index: 4)).first)
      XCTAssertEqual(rows(frame), [10, 100, 11, 101, 12, 102, 13, 103])
      XCTAssertEqual(orb_frame_top_field_first(frame.frame), 0, "the bottom field is taken first")
      XCTAssertEqual(frame.time, 3 * duration, accuracy: 1e-9)
    }
  }

  func testChromaRowsAreWovenLikeTheLumaRows() throws {
    var weaver = FieldWeaver(topFirst: true)
    _ = weaver.offer(try field(top: true, base: 10, index: 0, format: AV_PIX_FMT_YUV420P))
    let frame = try XCTUnwrap(
      weaver.offer(try field(top: false, base: 100, index: 1, format: AV_PIX_FMT_YUV420P)).first)
    XCTAssertEqual(rows(frame, plane: 1), [20, 110, 21, 111], "each field's own chroma, row by row")
    XCTAssertEqual(rows(frame, plane: 2), [30, 120, 31, 121])
  }

  func testAFieldWithoutAPartnerIsShownAloneAtFullHeight() throws {
    var weaver = FieldWeaver(topFirst: true)
    _ = weaver.offer(try field(top: true, base: 10, index: 0))
    // Two top fields in a row (the bottom one between was lost): the first has no partner.
    let lone = weaver.offer(try field(top: true, base: 50, index: 2))
    XCTAssertEqual(lone.count, 1)
    XCTAssertEqual(rows(try XCTUnwrap(lone.first)), [10, 10, 11, 11, 12, 12, 13, 13], "each row twice")
    XCTAssertEqual(orb_frame_is_interlaced(lone[0].frame), 0, "a whole picture, nothing to deinterlace")
    XCTAssertEqual(lone[0].duration, duration, accuracy: 1e-9)
    // A bottom field long after (more lost between): not woven with the waiting one, nor kept waiting itself.
    let apart = weaver.offer(try field(top: false, base: 100, index: 7))
    XCTAssertEqual(
      apart.map { rows($0) }, [[50, 50, 51, 51, 52, 52, 53, 53], [100, 100, 101, 101, 102, 102, 103, 103]])
    XCTAssertEqual(weaver.finish().count, 0)
    // The stream's last field has none after it.
    _ = weaver.offer(try field(top: true, base: 30, index: 8))
    XCTAssertEqual(weaver.finish().map { rows($0) }, [[30, 30, 31, 31, 32, 32, 33, 33]])
  }

  /// A lost first field does not shift the pairs by one: the second field goes alone, and the next pair is whole.
  func testPairsStayInStepAfterALostField() throws {
    var weaver = FieldWeaver(topFirst: true)
    XCTAssertEqual(weaver.offer(try field(top: false, base: 100, index: 1)).map { rows($0) }.count, 1, "alone")
    XCTAssertEqual(weaver.offer(try field(top: true, base: 10, index: 2)).count, 0)
    let frame = try XCTUnwrap(weaver.offer(try field(top: false, base: 200, index: 3)).first)
    XCTAssertEqual(rows(frame), [10, 200, 11, 201, 12, 202, 13, 203])
    XCTAssertEqual(orb_frame_top_field_first(frame.frame), 1)
  }

  func testAFieldShapedPictureNotMarkedAFieldIsShownAlone() throws {
    var weaver = FieldWeaver(topFirst: true)
    let out = weaver.offer(try field(top: nil, base: 10, index: 0))
    XCTAssertEqual(out.map { rows($0) }, [[10, 10, 11, 11, 12, 12, 13, 13]])
  }

  /// A stream that turns to whole frames (a recording across a programme change): they pass as they are, marked or
  /// not, never doubled.
  func testAPictureOfAFramesShapePassesAsItIs() throws {
    var weaver = FieldWeaver(topFirst: true)
    for top in [nil, true] {
      let frame = try field(top: top, base: 10, index: 0, height: 8)
      let out = weaver.offer(frame)
      XCTAssertEqual(out.count, 1)
      XCTAssertEqual(out.first?.frame, frame.frame, "the same picture")
      XCTAssertEqual(rows(try XCTUnwrap(out.first)), [10, 11, 12, 13, 14, 15, 16, 17])
    }
  }

  func testASeekDropsTheWaitingField() throws {
    var weaver = FieldWeaver(topFirst: true)
    _ = weaver.offer(try field(top: true, base: 10, index: 0))
    weaver.reset()
    XCTAssertEqual(weaver.offer(try field(top: true, base: 50, index: 5)).count, 0, "waits for a partner of its own")
    XCTAssertEqual(weaver.finish().map { rows($0) }, [[50, 50, 51, 51, 52, 52, 53, 53]])
  }
}
