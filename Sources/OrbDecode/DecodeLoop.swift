import CFFmpeg
import Foundation

/// The loop both decode threads run over their packet queue: sends packets to the decoder and takes every frame it
/// has, flushes on a seek (where the caller may swap the decoder, for an audio track switch), skips corrupt
/// packets, and drains the decoder at the end of the stream.
/// Thread-safety: Unsafe; `run` is the body of one decode thread.
struct DecodeLoop {
  let core: PipelineCore
  let queue: BoundedQueue<PacketItem>
  /// Where the loop records the end of each packet it takes (the demuxer reads a local file only so far ahead).
  let taken: WritableKeyPath<PipelineState, Double?>

  /// - Parameters:
  ///   - flushed: a seek to `target` in `generation`; returns a decoder to use from now on, or nil to keep this one.
  ///   - receive: every decoded frame; the callee takes its reference (or unrefs it).
  ///   - finish: the stream's end is decoded in `generation`.
  ///   - sending: called with the decoder and each packet just before it is sent (the video thread sets what the
  ///     decoder may skip).
  func run(
    _ decoder: Decoder,
    flushed: (_ generation: Int, _ target: Double) -> Decoder?,
    receive: (UnsafeMutablePointer<AVFrame>) -> Void,
    finish: (_ generation: Int) -> Void,
    sending: (UnsafeMutablePointer<AVCodecContext>, UnsafePointer<AVPacket>) -> Void = { _, _ in }
  ) {
    var decoder = decoder
    var current = core.state.withLock { $0.generation }
    guard let frame = av_frame_alloc() else {
      // No frame to decode into: the stream ends here rather than leaving its consumer waiting.
      finish(current)
      return
    }
    var frameOwner: UnsafeMutablePointer<AVFrame>? = frame
    defer { av_frame_free(&frameOwner) }
    func receiveAll() {
      while avcodec_receive_frame(decoder.context, frame) >= 0 { receive(frame) }
    }
    while let item = queue.pop() {
      switch item {
      case .flush(let g, let t):
        avcodec_flush_buffers(decoder.context)
        current = g
        if let replacement = flushed(g, t) { decoder = replacement }
      case .packet(let packet, let g):
        guard g == current else { continue }
        sending(decoder.context, packet.pointer)
        // `sending` may have waited (for room for the picture): a seek meanwhile makes this packet stale, and
        // decoding it would hold the seek's flush back by a picture's decoding (5-10 ms at 1080p).
        // Where the packet ends: what the decoder has taken is no longer read ahead. (Its start was counted: a
        // video of a picture every 2 s then looked 2 s read ahead with its queue empty, and the demuxer waited for
        // the decoder, which waited for the next packets to put out its first picture.)
        let time = core.end(packet.pointer, decoder.context.pointee.pkt_timebase)
        // `change`: the demuxer may be waiting for the decoder to take what it read ahead.
        let stale = core.state.change { s -> Bool in
          guard s.generation == g else { return true }
          if let time { s[keyPath: taken] = max(s[keyPath: taken] ?? time, time) }
          return false
        }
        if stale { continue }
        let code = avcodec_send_packet(decoder.context, packet.pointer)
        if code < 0 && code != FFmpegError.again {
          core.state.withLock { $0.skippedPackets += 1 }  // a corrupt packet: skip it, keep going
        }
        receiveAll()
      case .end(let g):
        guard g == current else { continue }
        avcodec_send_packet(decoder.context, nil)
        receiveAll()
        finish(g)
      }
    }
  }
}
