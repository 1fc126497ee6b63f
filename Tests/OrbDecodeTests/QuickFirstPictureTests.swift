import CFFmpeg
import OrbTestSupport
import XCTest

@testable import OrbDecode

/// The opening's first picture comes out after its own packet alone, not after the two B-pictures' worth of delay
/// the stream's decoder keeps, and the stream still plays every picture once, in order.
final class QuickFirstPictureTests: XCTestCase {
  private struct NoVideo: Error {}

  /// The luma rows of `frame`, without the stride's padding.
  private func luma(_ frame: UnsafeMutablePointer<AVFrame>) -> [UInt8] {
    let f = frame.pointee
    var out: [UInt8] = []
    for row in 0..<Int(f.height) {
      out.append(contentsOf: UnsafeBufferPointer(start: f.data.0! + row * Int(f.linesize.0), count: Int(f.width)))
    }
    return out
  }

  func testTheFirstPictureComesOutAfterItsOwnPacketAndIsShownOnce() throws {
    let source = try MediaSource(try Media.h264())  // B-pictures (x264, -bf 3)
    let video = try XCTUnwrap(source.info.video.first)
    let parameters = try XCTUnwrap(source.parameters[video.index])
    let decoder = try Decoder(parameters, threads: 1)
    XCTAssertGreaterThan(decoder.context.pointee.has_b_frames, 0, "the stream's decoder holds pictures back")
    var quick = QuickFirstPicture(decoder: decoder, parameters: parameters, limit: .standard)
    var packet = av_packet_alloc()
    var frame = av_frame_alloc()
    var ahead = av_frame_alloc()
    defer {
      av_packet_free(&packet)
      av_frame_free(&frame)
      av_frame_free(&ahead)
    }
    let (pkt, out, first) = (packet!, frame!, ahead!)
    var shown: [Int64] = []
    var sent = 0
    var ownCopyDropped = false
    func take() {
      while avcodec_receive_frame(decoder.context, out) >= 0 {
        if quick.admits(out) {
          shown.append(out.pointee.pts)
        } else {
          XCTAssertEqual(out.pointee.pts, first.pointee.pts, "only the decoder's copy of the first is dropped")
          XCTAssertEqual(luma(out), luma(first), "the picture decoded alone is the decoder's own")
          ownCopyDropped = true
        }
        av_frame_unref(out)
      }
    }
    while av_read_frame(source.context, pkt) >= 0 {
      defer { av_packet_unref(pkt) }
      guard Int(pkt.pointee.stream_index) == video.index else { continue }
      if let alone = quick.decode(pkt, showsFirst: true) {
        XCTAssertEqual(sent, 0, "decoded ahead from the first packet alone")
        av_frame_ref(first, alone)
        shown.append(alone.pointee.pts)
        var freed: UnsafeMutablePointer<AVFrame>? = alone
        av_frame_free(&freed)
      }
      XCTAssertEqual(avcodec_send_packet(decoder.context, pkt), 0)
      sent += 1
      take()
      if sent == 1 { XCTAssertEqual(shown.count, 1, "the stream's decoder alone would have nothing to show yet") }
    }
    avcodec_send_packet(decoder.context, nil)
    take()
    XCTAssertTrue(ownCopyDropped)
    XCTAssertEqual(shown.first, 0)
    XCTAssertEqual(shown.count, 50, "2 s at 25 fps, each picture once")
    XCTAssertEqual(shown, shown.sorted(), "in presentation order")
    XCTAssertEqual(Set(shown).count, shown.count)
  }

  /// `source`'s first video packet, with its stream's parameters (the caller frees the packet).
  private func firstVideoPacket(_ source: MediaSource) throws -> (UnsafeMutablePointer<AVPacket>, StreamParameters) {
    let video = try XCTUnwrap(source.info.video.first)
    let parameters = try XCTUnwrap(source.parameters[video.index])
    let packet = try XCTUnwrap(av_packet_alloc())
    while av_read_frame(source.context, packet) >= 0 {
      if Int(packet.pointee.stream_index) == video.index { return (packet, parameters) }
      av_packet_unref(packet)
    }
    var owned: UnsafeMutablePointer<AVPacket>? = packet
    av_packet_free(&owned)
    throw NoVideo()
  }

  func testNothingGoesAheadAfterASeekOrWhereTheDecoderHoldsNothingBack() throws {
    let source = try MediaSource(try Media.h264())
    let (pkt, parameters) = try firstVideoPacket(source)
    defer {
      var owned: UnsafeMutablePointer<AVPacket>? = pkt
      av_packet_free(&owned)
    }
    var sought = QuickFirstPicture(
      decoder: try Decoder(parameters, threads: 1), parameters: parameters, limit: .standard)
    sought.cancel()
    XCTAssertNil(sought.decode(pkt, showsFirst: true), "a seek")
    var later = QuickFirstPicture(
      decoder: try Decoder(parameters, threads: 1), parameters: parameters, limit: .standard)
    XCTAssertNil(later.decode(pkt, showsFirst: false), "an opening that starts after its first key picture")
    XCTAssertNil(later.decode(pkt, showsFirst: true), "only the first packet is looked at")
    // Frame threads: their delay is the decoder's own business, and each picture is needed by them in turn.
    var threaded = QuickFirstPicture(
      decoder: try Decoder(parameters, threads: 2), parameters: parameters, limit: .standard)
    XCTAssertNil(threaded.decode(pkt, showsFirst: true))
    var opening = QuickFirstPicture(
      decoder: try Decoder(parameters, threads: 1), parameters: parameters, limit: .standard)
    var picture = opening.decode(pkt, showsFirst: true)
    XCTAssertNotNil(picture, "the same packet at an opening goes ahead")
    av_frame_free(&picture)

    // Interlaced: a packet may hold one field only.
    let fields = try MediaSource(try Media.interlacedH264())
    let (fieldPacket, fieldParameters) = try firstVideoPacket(fields)
    defer {
      var owned: UnsafeMutablePointer<AVPacket>? = fieldPacket
      av_packet_free(&owned)
    }
    XCTAssertEqual(fieldParameters.parameters.pointee.field_order, AV_FIELD_TT)
    var interlaced = QuickFirstPicture(
      decoder: try Decoder(fieldParameters, threads: 1), parameters: fieldParameters, limit: .standard)
    XCTAssertNil(interlaced.decode(fieldPacket, showsFirst: true))

    // Nothing went ahead, so nothing is dropped.
    var frame = av_frame_alloc()
    defer { av_frame_free(&frame) }
    frame!.pointee.pts = 0
    XCTAssertTrue(later.admits(frame!))
    XCTAssertTrue(sought.admits(frame!))
    XCTAssertTrue(interlaced.admits(frame!))
  }
}
