import CFFmpeg
import Foundation

/// An owned AVPacket.
final class Packet: @unchecked Sendable {
  let pointer: UnsafeMutablePointer<AVPacket>
  init(_ pointer: UnsafeMutablePointer<AVPacket>) { self.pointer = pointer }
  deinit {
    var p: UnsafeMutablePointer<AVPacket>? = pointer
    av_packet_free(&p)
  }
}

/// Demux thread → bounded packet queue → video decode thread (FFmpeg frame threading) → bounded frame queue.
/// Times are seconds from the start of the file (the container's start time is subtracted).
/// Thread-safety: Safe. `nextFrame` from one consumer thread; `seek` and `close` from any thread.
public final class VideoPipeline: FrameSource, @unchecked Sendable {
  private enum PacketItem {
    case packet(Packet, generation: Int)
    case flush(generation: Int, target: Double)
    case end(generation: Int)
  }
  private enum FrameItem {
    case frame(VideoFrame)
    case end(generation: Int)
  }

  public var info: MediaInfo { media.info }
  public let duration: Double?
  public let stream: VideoStreamInfo

  private let media: MediaSource
  private let startTime: Double
  private let frameDuration: Double
  private let timeBase: AVRational
  // Bounded by bytes (64 MiB) and count, so a high-bitrate stream cannot grow memory without limit.
  private let packets = BoundedQueue<PacketItem>(capacity: 64 << 20, maxCount: 256)
  private let frames = BoundedQueue<FrameItem>(capacity: 4)

  // Protected by `lock`.
  private let lock = NSCondition()
  private var generation = 0
  private var pendingSeek: Double?
  private var stopped = false
  private var endedGeneration = -1
  private var skippedPackets = 0
  private var decodedFrames = 0

  private var demuxThread: Thread?
  private var decodeThread: Thread?

  /// Opens `source` and starts decoding its video from `start` seconds.
  /// - Throws: `MediaError` when the source cannot be opened or has no decodable video.
  public convenience init(source: String, headers: [String] = [], start: Double = 0) throws {
    try self.init(media: MediaSource(source, headers: headers), start: start)
  }

  public init(media: MediaSource, start: Double = 0) throws {
    self.media = media
    guard let video = media.bestVideoStream else {
      throw MediaError(.unplayable, source: media.source, reason: "no video stream in it")
    }
    stream = video
    let st = media.stream(video.index)
    timeBase = st.pointee.time_base
    let ctxStart = media.context.pointee.start_time
    startTime = ctxStart == orb_nopts_value() ? 0 : Double(ctxStart) / Double(AV_TIME_BASE)
    duration = media.info.durationMs.map { Double($0) / 1000 }
    frameDuration = 1 / (video.frameRate.flatMap { $0 > 0 && $0 < 1000 ? $0 : nil } ?? 25)
    // Discard what we never decode, so the demuxer skips it cheaply.
    for i in 0..<Int(media.context.pointee.nb_streams) where i != video.index {
      media.stream(i).pointee.discard = AVDISCARD_ALL
    }
    let decoder: Decoder
    do {
      decoder = try Decoder(stream: st)
    } catch {
      throw MediaError(.unplayable, source: media.source, reason: "cannot decode its \(video.codec) video")
    }
    if start > 0 { pendingSeek = start }
    let demux = Thread { [unowned self] in self.demuxLoop() }
    demux.name = "orb-demux"
    let decode = Thread { [unowned self] in self.decodeLoop(decoder) }
    decode.name = "orb-video-decode"
    demuxThread = demux
    decodeThread = decode
    if start > 0 { generation = 1 }
    demux.start()
    decode.start()
  }

  deinit { close() }

  /// Packets that failed to decode and were skipped.
  public var corruptPackets: Int { lock.withLock { skippedPackets } }

  public func nextFrame() -> VideoFrame? {
    while true {
      let current = lock.withLock { stopped || endedGeneration == generation ? -1 : generation }
      if current < 0 { return nil }
      guard let item = frames.pop() else { return nil }
      switch item {
      case .frame(let frame) where frame.generation == current:
        return frame
      case .end(let g) where g == current:
        lock.withLock { endedGeneration = g }
        return nil
      default:
        continue  // from before a seek
      }
    }
  }

  public func seek(to seconds: Double) {
    lock.lock()
    generation += 1
    pendingSeek = max(0, seconds)
    // Cleared under `lock`, before the demux thread can wake and queue the new generation's flush:
    // clearing after would be able to drop that flush and starve the decoder. No thread takes `lock`
    // while holding a queue's lock, so this cannot deadlock.
    packets.clear()
    frames.clear()
    lock.broadcast()
    lock.unlock()
  }

  public func close() {
    lock.lock()
    let wasStopped = stopped
    stopped = true
    lock.broadcast()
    lock.unlock()
    if wasStopped { return }
    packets.close()
    frames.close()
  }

  // MARK: demux thread

  private func demuxLoop() {
    let ctx = media.context
    let videoIndex = Int32(stream.index)
    var atEnd = false
    while true {
      lock.lock()
      while !stopped && pendingSeek == nil && atEnd { lock.wait() }
      if stopped {
        lock.unlock()
        return
      }
      if let target = pendingSeek {
        let gen = generation
        pendingSeek = nil
        lock.unlock()
        let ts = Int64((target + startTime) * Double(AV_TIME_BASE))
        avformat_seek_file(ctx, -1, Int64.min, ts, ts, 0)
        atEnd = false
        packets.push(.flush(generation: gen, target: target), cost: 0)
        continue
      }
      let gen = generation
      lock.unlock()

      guard let packet = av_packet_alloc() else { return }
      let owned = Packet(packet)
      let code = av_read_frame(ctx, packet)
      if code == FFmpegError.again { continue }
      if code < 0 {
        // End of file, or a read error (a truncated file ends here too): decode what we have.
        packets.push(.end(generation: gen), cost: 0)
        atEnd = true
        continue
      }
      guard packet.pointee.stream_index == videoIndex else { continue }
      packets.push(.packet(owned, generation: gen), cost: Int(packet.pointee.size))
    }
  }

  // MARK: decode thread

  private func decodeLoop(_ decoder: Decoder) {
    let ctx = decoder.context
    var current = lock.withLock { generation }
    var target = 0.0
    var held: VideoFrame?  // the last frame before `target`, shown if nothing later comes
    var emitted = false
    let converter = FrameConverter()
    guard let frame = av_frame_alloc() else { return }
    var frameOwner: UnsafeMutablePointer<AVFrame>? = frame
    defer { av_frame_free(&frameOwner) }

    func receiveAll() {
      while avcodec_receive_frame(ctx, frame) >= 0 {
        let f = frame.pointee
        let pts = f.best_effort_timestamp != orb_nopts_value() ? f.best_effort_timestamp : f.pts
        let time = pts == orb_nopts_value() ? 0 : Double(pts) * av_q2d(timeBase) - startTime
        guard let copy = av_frame_alloc() else { return }
        av_frame_move_ref(copy, frame)
        guard
          let video = converter.makeFrame(
            copy, stream: stream, time: time, duration: frameDuration, generation: current)
        else { continue }
        lock.withLock { decodedFrames += 1 }
        if !emitted && time + frameDuration <= target + 1e-6 {
          held = video
          continue
        }
        if !emitted, let h = held, time > target + 1e-6, h.time <= target {
          frames.push(.frame(h))
        }
        held = nil
        emitted = true
        frames.push(.frame(video))
      }
    }

    while let item = packets.pop() {
      switch item {
      case .flush(let g, let t):
        avcodec_flush_buffers(ctx)
        current = g
        target = t
        held = nil
        emitted = false
      case .packet(let packet, let g):
        guard g == current else { continue }
        let code = avcodec_send_packet(ctx, packet.pointer)
        if code < 0 && code != FFmpegError.again {
          lock.withLock { skippedPackets += 1 }  // a corrupt packet: skip it, keep going
        }
        receiveAll()
      case .end(let g):
        guard g == current else { continue }
        avcodec_send_packet(ctx, nil)
        receiveAll()
        if let h = held { frames.push(.frame(h)) }
        held = nil
        frames.push(.end(generation: g))
      }
    }
  }
}
