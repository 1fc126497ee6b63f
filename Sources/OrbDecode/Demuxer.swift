import CFFmpeg
import Foundation

/// The demux thread: reads packets from the source and routes them to the video and audio packet queues, takes
/// seeks (and audio track switches) between reads, and records how far each stream has been read.
/// Thread-safety: Unsafe; `run` is the body of the one demux thread, the only user of `media.context`.
struct Demuxer {
  let core: PipelineCore

  func run() {
    let ctx = core.media.context
    let videoIndex = core.videoStream.map { Int32($0.index) }
    var routedAudio = core.state.withLock { $0.currentAudio?.index }
    var atEnd = false
    while true {
      enum Next {
        case stop
        case seek(target: Double, exact: Bool, generation: Int, audio: Int?)
        case read(generation: Int)
      }
      let idle = atEnd
      let next = core.state.wait(
        until: { s in s.stopped || s.pendingSeek != nil || !idle },
        then: { s, _ -> Next in
          if s.stopped { return .stop }
          guard let target = s.pendingSeek else { return .read(generation: s.generation) }
          s.pendingSeek = nil
          s.videoDemuxedUntil = nil
          s.audioDemuxedUntil = nil
          s.demuxAtEnd = false
          s.readFailureCode = nil  // a failure before the seek is not one after it
          core.media.cancellation.resume()
          return .seek(
            target: target, exact: s.pendingSeekExact, generation: s.generation,
            audio: (s.switchedAudio ?? s.currentAudio)?.index)
        })
      switch next {
      case .stop:
        return
      case .seek(let target, let exact, let generation, let wantedAudio):
        if wantedAudio != routedAudio {
          // A track switch: read the new stream from here on, skip the old one cheaply.
          if let old = routedAudio { core.media.stream(old).pointee.discard = AVDISCARD_ALL }
          if let new = wantedAudio { core.media.stream(new).pointee.discard = AVDISCARD_DEFAULT }
          routedAudio = wantedAudio
        }
        seek(ctx, to: target)
        atEnd = false
        // Not exact: the decoders let out what comes first from the key frame the demuxer went back to.
        let from = exact ? target : -Double.infinity
        core.videoPackets.push(.flush(generation: generation, target: from), cost: 0)
        core.audioPackets.push(.flush(generation: generation, target: from), cost: 0)
      case .read(let generation):
        atEnd = read(ctx, generation: generation, videoIndex: videoIndex, audioIndex: routedAudio.map(Int32.init))
      }
    }
  }

  private func seek(_ ctx: UnsafeMutablePointer<AVFormatContext>, to target: Double) {
    // Saturating: a target past any real length must not trap the conversion.
    let micro = ((target + core.startTime) * Double(AV_TIME_BASE)).rounded()
    let ts = micro.isFinite ? Int64(max(-9e18, min(9e18, micro))) : Int64.max / 2
    // A read that the interrupt broke leaves its error on the I/O context: the seek starts clean.
    if let pb = ctx.pointee.pb {
      pb.pointee.error = 0
      pb.pointee.eof_reached = 0
    }
    if core.untimed {
      // No timestamps to seek by: back to the first byte; the decoder times frames from there to the target.
      avformat_seek_file(ctx, -1, 0, 0, 0, AVSEEK_FLAG_BYTE)
    } else if avformat_seek_file(ctx, -1, Int64.min, ts, ts, 0) < 0 {
      // Some demuxers only seek backwards to a key frame; one that cannot seek at all reads on from where it
      // is, and the decoders skip to the target (a seek back then lands on the first picture read).
      av_seek_frame(ctx, -1, ts, AVSEEK_FLAG_BACKWARD)
    }
  }

  /// Reads one packet and routes it. Returns whether the source is at its end (or failed) for now.
  private func read(
    _ ctx: UnsafeMutablePointer<AVFormatContext>, generation gen: Int, videoIndex: Int32?, audioIndex: Int32?
  ) -> Bool {
    // Out of memory for a packet is a read failure like any other: the decoders hear the end and drain.
    let packet = av_packet_alloc()
    let owned = packet.map(Packet.init)
    let code = packet.map { av_read_frame(ctx, $0) } ?? orb_averror(ENOMEM)
    if code == FFmpegError.again { return false }
    // Interrupted by a seek or by close (demuxers turn the interrupt into codes of their own): the loop takes
    // whichever it was, and the read's failure is not the stream's.
    if code < 0 && core.state.withLock({ $0.stopped || $0.pendingSeek != nil }) { return false }
    if code < 0 {
      // End of file, or a read error (a truncated file ends here too): decode what we have. A read error is kept,
      // so a network stream that broke is not taken for one that ended.
      core.state.withLock { s in
        if code != FFmpegError.eof { s.readFailureCode = code }
        if gen == s.generation { s.demuxAtEnd = true }
      }
      core.videoPackets.push(.end(generation: gen), cost: 0)
      core.audioPackets.push(.end(generation: gen), cost: 0)
      return true
    }
    guard let packet, let owned else { return false }
    let index = packet.pointee.stream_index
    let isVideo = index == videoIndex
    let isAudio = index == audioIndex
    let stamp = packet.pointee.pts != orb_nopts_value() ? packet.pointee.pts : packet.pointee.dts
    // In Double: a damaged file's timestamps near Int64's limits must not trap.
    let end =
      stamp != orb_nopts_value() && (isVideo || isAudio)
      ? (Double(stamp) + Double(max(0, packet.pointee.duration)))
        * av_q2d(ctx.pointee.streams[Int(index)]!.pointee.time_base) - core.startTime
      : nil
    let (videoWanted, audioWanted) = core.state.withLock { s -> (Bool, Bool) in
      if let end, gen == s.generation {
        if isVideo { s.videoDemuxedUntil = max(s.videoDemuxedUntil ?? end, end) }
        if isAudio { s.audioDemuxedUntil = max(s.audioDemuxedUntil ?? end, end) }
      }
      return (!s.videoStopped, !s.audioStopped)
    }
    if isVideo && videoWanted {
      core.videoPackets.push(.packet(owned, generation: gen), cost: Int(packet.pointee.size))
    } else if isAudio && audioWanted {
      core.audioPackets.push(.packet(owned, generation: gen), cost: Int(packet.pointee.size))
    }
    return false
  }
}
