import CFFmpeg
import Foundation

/// The demux thread: reads packets from the source and routes them to the video and audio packet queues, takes
/// seeks (and audio track switches) between reads, and records how far each stream has been read.
/// Thread-safety: Unsafe; `run` is the body of the one demux thread, the only user of `media.context`.
struct Demuxer {
  let core: PipelineCore
  private let waits = ReadWaits()
  /// Where recordings joined end to end start their clocks again (MPEG-TS and -PS only).
  private let joins: TimestampJoins?
  /// Damaged stretches the demuxer stepped over (not for a playlist's parts).
  private let skips: SkippedStretches?

  init(core: PipelineCore) {
    self.core = core
    joins = orb_format_has_timestamp_jumps(core.media.context) != 0 ? TimestampJoins() : nil
    skips = core.media.stepsOverDamage ? SkippedStretches() : nil
  }

  /// Seconds of packets read ahead of each decoder of a local file, after which the demuxer waits (mpv reads a
  /// second ahead): a disk answers at once, so reading more only holds memory (a 4K film at 60 Mb/s filled the
  /// queue's 64 MB). Network sources read on up to the queues' bounds, to ride out a slow network. A stream that
  /// lags (a badly interleaved file, where one stream's packets come seconds after the other's) keeps the demuxer
  /// reading, the other queue growing up to its bound, so no decoder starves.
  static let localReadAhead = 2.0

  func run() {
    let ctx = core.media.context
    let videoIndex = core.videoStream.map { Int32($0.index) }
    var routedAudio = core.state.withLock { $0.currentAudio?.index }
    let limited = core.media.isLocal
    var atEnd = false
    while true {
      enum Next {
        case stop
        case seek(target: Double, exact: Bool, generation: Int, audio: Int?, delay: Double)
        case read(generation: Int)
      }
      let idle = atEnd
      let (hasVideo, hasAudio) = (videoIndex != nil, routedAudio != nil)
      let next = core.state.wait(
        until: { s in
          s.stopped || s.pendingSeek != nil
            || !(idle || (limited && s.hasReadAhead(Self.localReadAhead, video: hasVideo, audio: hasAudio)))
        },
        then: { s, _ -> Next in
          if s.stopped { return .stop }
          guard let target = s.pendingSeek else { return .read(generation: s.generation) }
          s.pendingSeek = nil
          s.restartReading()
          s.demuxAtEnd = false
          s.readFailureCode = nil  // a failure before the seek is not one after it
          s.readFailedAtByte = nil
          core.media.cancellation.resume()
          return .seek(
            target: target, exact: s.pendingSeekExact, generation: s.generation,
            audio: (s.switchedAudio ?? s.currentAudio)?.index, delay: s.audioDelay)
        })
      switch next {
      case .stop:
        return
      case .seek(let target, let exact, let generation, let wantedAudio, let delay):
        if wantedAudio != routedAudio {
          // A track switch: read the new stream from here on, skip the old one cheaply.
          if let old = routedAudio { core.media.stream(old).pointee.discard = AVDISCARD_ALL }
          if let new = wantedAudio { core.media.stream(new).pointee.discard = AVDISCARD_DEFAULT }
          routedAudio = wantedAudio
        }
        waits.restart()
        joins?.restart()
        skips?.restart()
        let hangs = core.media.connectionHangs
        // With the sound later than its pictures, the target's sound is the file's from the delay before it: the
        // demuxer goes back that much further (as mpv's does), else the sound before the key frame was silence.
        // The decoders still let out nothing before the target.
        let landing = exact && wantedAudio != nil && delay > 0 ? max(0, target - delay) : target
        core.media.watching(seek: true, afresh: true) {
          let left = hangs ? core.media.leaveTheConnection() : nil
          // A demuxer that could not seek reads on from where it was, not from the byte the connection was left at.
          if !seek(ctx, to: landing), let left, let pb = ctx.pointee.pb { avio_seek(pb, left, SEEK_SET) }
        }
        // Not exact: the decoders let out what comes first from the key frame the demuxer went back to.
        let from = exact ? target : -Double.infinity
        core.videoPackets.push(.flush(generation: generation, target: from), cost: 0)
        core.audioPackets.push(.flush(generation: generation, target: from), cost: 0)
        atEnd = false
        if core.media.stalled {
          // Its new connection brought nothing (a read would wait as long again), or a file held nothing there.
          atEnd = ended(core.media.stallEnd(), generation: generation)
        } else if let videoIndex, landing > 0, !core.untimed {
          atEnd = settle(
            ctx, target: landing, generation: generation, videoIndex: videoIndex,
            audioIndex: routedAudio.map(Int32.init))
        }
      case .read(let generation):
        atEnd = read(ctx, generation: generation, videoIndex: videoIndex, audioIndex: routedAudio.map(Int32.init))
      }
    }
  }

  /// Whether the demuxer took the seek (one that cannot reads on from where it is).
  @discardableResult
  private func seek(_ ctx: UnsafeMutablePointer<AVFormatContext>, to target: Double) -> Bool {
    // Saturating: a target past any real length must not trap the conversion.
    let micro = ((target + core.startTime) * Double(AV_TIME_BASE)).rounded()
    let ts = micro.isFinite ? Int64(max(-9e18, min(9e18, micro))) : Int64.max / 2
    // A read that the interrupt broke leaves its error on the I/O context: the seek starts clean.
    if let pb = ctx.pointee.pb {
      pb.pointee.error = 0
      pb.pointee.eof_reached = 0
    }
    core.media.prepareSeek()
    if core.media.info.isStill {
      // A still picture is the picture at every time of its span. Before it is read, it waits in the demuxer
      // (read while the source opened), and stays there; after, the demuxer goes back to it where it can (FFmpeg's
      // image demuxer refuses any time but its first, and a JPEG's cannot go back even to that).
      guard waits.hasRead else { return true }
      let start = Int64((core.startTime * Double(AV_TIME_BASE)).rounded())
      return avformat_seek_file(ctx, -1, Int64.min, start, start, 0) >= 0
    } else if core.untimed {
      // No timestamps to seek by: back to the first byte; the decoder times frames from there to the target.
      seekBytes(ctx, to: 0)
      return true
    } else if let video = core.videoStream.map({ Int32($0.index) }), let at = streamTime(ctx, video, target),
      avformat_seek_file(ctx, video, Int64.min, at, at, 0) >= 0
    {
      // By the video's own clock, rounded down: FFmpeg rounds a time given for any stream to the nearest tick of
      // the default one, and a target in the second half of a picture's time went to the next picture, past the
      // target (in AVI, where every MJPEG picture is a key one, it then went back to the file's first byte).
      return true
    } else if avformat_seek_file(ctx, -1, Int64.min, ts, ts, 0) < 0 {
      // Some demuxers only seek backwards to a key frame; one that cannot seek at all reads on from where it
      // is, and the decoders skip to the target (a seek back then lands on the first picture read).
      return av_seek_frame(ctx, -1, ts, AVSEEK_FLAG_BACKWARD) >= 0
    }
    return true
  }

  /// `target` (seconds from the start) in `stream`'s time base, rounded down; nil when it does not fit.
  private func streamTime(_ ctx: UnsafeMutablePointer<AVFormatContext>, _ stream: Int32, _ target: Double) -> Int64? {
    let base = av_q2d(ctx.pointee.streams[Int(stream)]!.pointee.time_base)
    let ticks = ((target + core.startTime) / base + 1e-6).rounded(.down)
    return base > 0 && ticks.isFinite && abs(ticks) < 9e18 ? Int64(ticks) : nil
  }

  /// How far past the target a picture that is not a key frame may lie before the seek counts as having landed
  /// after the target's key frame (decode order and display order differ by a few pictures).
  static let reorderMargin = 0.5
  /// How much stream time past the target settling reads without meeting a picture before it gives up looking (the
  /// video may have ended before the audio).
  static let settleSpan = 10.0
  /// The most packets settling holds back before it gives up looking.
  static let settleLimit = 4096

  /// Makes sure a seek landed where its target's picture can be decoded. A container without an index (MPEG-TS,
  /// where FFmpeg seeks by clock reference) lands on any packet, often inside a group of pictures whose key frame
  /// lies before the target: decoding from there gives no picture until the next key frame, or none at all at the
  /// end of the file. So the packets after a seek are held back until the first key frame of the video: one at or
  /// before the target passes them on; one after it (or a later picture, or the end of the file) means the seek went
  /// too far, and it is tried again 1, 2, 4, 8 … s of the stream's byte rate earlier (by bytes: FFmpeg's timestamp
  /// seek in TS lands on the same packet again), at the worst from the start. Containers with an index land on the
  /// key frame at once and pay nothing. Returns whether the source is at its end.
  private func settle(
    _ ctx: UnsafeMutablePointer<AVFormatContext>, target: Double, generation gen: Int, videoIndex: Int32,
    audioIndex: Int32?
  ) -> Bool {
    var step = 1.0
    // Where the video's first picture is, when the target lies before it (a video that starts after the sound): its
    // first key frame is then as early as the seek can land, with no key frame before it to go back to. Going back
    // looked for one from the file's first byte, which a Matroska file read as garbage up to a later cluster: the
    // key frame and the sound before it were lost, and a resume point there said no picture could be decoded.
    let video = core.media.stream(Int(videoIndex)).pointee
    let videoStart =
      video.start_time == orb_nopts_value() ? nil : Double(video.start_time) * av_q2d(video.time_base) - core.startTime
    let beforeVideo = videoStart.map { target < $0 } ?? false
    while true {
      var held: [Packet] = []
      var overshot = false
      reading: while held.count < Self.settleLimit {
        switch readPacket(ctx) {
        case .again: continue
        case .interrupted: return false  // the run loop takes the new seek or the close; the held packets go
        case .ended(let code, let waited):
          // No picture after the landing at all: the video ended before the target, or the seek went past its key
          // frame into the last group of pictures.
          overshot = held.contains { $0.pointer.pointee.stream_index == videoIndex }
          // A read that went nowhere (a server that stopped sending) is not tried further back.
          if !overshot || core.media.stalled {
            route(all: held, generation: gen, videoIndex: videoIndex, audioIndex: audioIndex)
            return ended(code, waited: waited, generation: gen)
          }
          break reading
        case .packet(let packet):
          held.append(packet)
          let p = packet.pointer.pointee
          guard let time = core.seconds(packet.pointer, timeBase(p.stream_index)) else { continue }
          if p.stream_index == videoIndex {
            let key = (p.flags & AV_PKT_FLAG_KEY) != 0
            if key && time <= target + 0.001 { break reading }
            if key && beforeVideo, let videoStart, time <= videoStart + Self.reorderMargin { break reading }
            if key || time > target + Self.reorderMargin {
              overshot = true
              break reading
            }
          } else if time > target + Self.settleSpan {
            break reading
          }
        }
      }
      if !overshot {
        route(all: held, generation: gen, videoIndex: videoIndex, audioIndex: audioIndex)
        return false
      }
      let landing = held.lazy.map { $0.pointer.pointee.pos }.first { $0 >= 0 }
      let seconds = step
      step *= 2
      let back = Int64(min(9e18, seconds * byteRate(ctx)))
      if orb_format_can_seek_bytes(ctx) != 0, let landing, back > 0 {
        let position = max(0, landing - back)
        core.media.watching(seek: true) { seekBytes(ctx, to: position) }
        if core.media.stalled { return ended(core.media.stallEnd(), generation: gen) }
        if position == 0 { return false }  // from the start, what comes is all there is
      } else {
        core.media.watching(seek: true) { seek(ctx, to: max(0, target - seconds)) }
        if core.media.stalled { return ended(core.media.stallEnd(), generation: gen) }
        if target - seconds <= 0 { return false }
      }
    }
  }

  /// Goes to byte `position` of the source. FFmpeg's byte seek holds its target below the source's size, and a source
  /// of no known size (a pipe whose writer is still writing, a live HTTP stream) went nowhere: the demuxer dropped
  /// what it had read ahead and read on from where it was (a raw stream's seek to its start lost its first key
  /// picture, and no picture came). There the reading is flushed and moved by hand, as FFmpeg's byte seek does.
  private func seekBytes(_ ctx: UnsafeMutablePointer<AVFormatContext>, to position: Int64) {
    guard let pb = ctx.pointee.pb, avio_size(pb) < 0 else {
      avformat_seek_file(ctx, -1, Int64.min, position, position, AVSEEK_FLAG_BYTE)
      return
    }
    avformat_flush(ctx)
    if avio_seek(pb, position, SEEK_SET) >= 0 { ctx.pointee.io_repositioned = 1 }
  }

  /// The stream's bytes per second: the container's bit rate, else its size over its duration; 0 when unknown.
  private func byteRate(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> Double {
    if ctx.pointee.bit_rate > 0 { return Double(ctx.pointee.bit_rate) / 8 }
    let size = ctx.pointee.pb.map { avio_size($0) } ?? -1
    let duration = Double(ctx.pointee.duration) / Double(AV_TIME_BASE)
    return size > 0 && duration > 0 ? Double(size) / duration : 0
  }

  /// What one read gave.
  private enum ReadResult {
    /// Nothing yet; read again.
    case again
    /// A seek or a close broke the read.
    case interrupted
    /// The end of the file, or a read error; how long the reads just before it waited, and the longest wait
    /// before those (`ReadWaits.beforeEnd`).
    case ended(Int32, waited: (Double, Double) = (0, 0))
    case packet(Packet)
  }

  private func readPacket(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> sending ReadResult {
    // Out of memory for a packet is a read failure like any other: the decoders hear the end and drain.
    let packet = av_packet_alloc()
    let owned: Packet? = if let packet { Packet(packet) } else { nil }
    let began = DispatchTime.now().uptimeNanoseconds
    let code = packet.map { p in core.media.watching { av_read_frame(ctx, p) } } ?? orb_averror(ENOMEM)
    let took = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
    waits.note(took)
    if code == FFmpegError.again { return .again }
    // Interrupted by a seek or by close (demuxers turn the interrupt into codes of their own): the loop takes
    // whichever it was, and the read's failure is not the stream's.
    if code < 0 && core.state.withLock({ $0.stopped || $0.pendingSeek != nil }) { return .interrupted }
    // Broken for bringing nothing (`StallWatch`): the server stopped sending, whatever code the demuxer made of it.
    if code < 0 && core.media.stalled { return .ended(core.media.stallEnd()) }
    // An end where the server answered a reconnect with something else than the rest of the file is a failure.
    if code == FFmpegError.eof && core.media.answerChanged { return .ended(orb_averror(EIO)) }
    if code < 0 { return .ended(code, waited: waits.beforeEnd(took)) }
    guard let owned else { return .ended(orb_averror(ENOMEM)) }
    core.media.delivered()
    // The compiler puts the packet in the format context's region because both went into av_read_frame; FFmpeg
    // keeps no reference to the packet it filled, so it is the caller's alone.
    return .packet(Unshared(owned).value)
  }

  /// Reads one packet and routes it. Returns whether the source is at its end (or failed) for now.
  private func read(
    _ ctx: UnsafeMutablePointer<AVFormatContext>, generation gen: Int, videoIndex: Int32?, audioIndex: Int32?
  ) -> Bool {
    switch readPacket(ctx) {
    case .again, .interrupted: return false
    case .ended(let code, let waited): return ended(code, waited: waited, generation: gen)
    case .packet(let packet):
      route(packet, generation: gen, videoIndex: videoIndex, audioIndex: audioIndex)
      return false
    }
  }

  /// End of file, or a read error (a truncated file ends here too): the decoders decode what they have. A read
  /// error is kept, so a network stream that broke is not taken for one that ended. Returns true.
  private func ended(_ code: Int32, waited: (Double, Double) = (0, 0), generation gen: Int) -> Bool {
    let byte = core.media.context.pointee.pb.map { $0.pointee.pos }
    core.state.withLock { s in
      if code != FFmpegError.eof {
        s.readFailureCode = code
        s.readFailedAtByte = byte
      }
      if gen == s.generation { s.demuxAtEnd = true }
      if code == FFmpegError.eof && gen == s.generation { (s.quietBeforeEnd, s.waitsBeforeEnd) = waited }
    }
    core.videoPackets.push(.end(generation: gen), cost: 0)
    core.audioPackets.push(.end(generation: gen), cost: 0)
    return true
  }

  private func timeBase(_ index: Int32) -> AVRational { core.media.stream(Int(index)).pointee.time_base }

  /// Routes held packets in order. Each leaves the list as it is routed, so each goes on alone (`sending`).
  private func route(all held: sending [Packet], generation gen: Int, videoIndex: Int32?, audioIndex: Int32?) {
    let list = Locked(held)
    while let packet = list.withLock({ l -> sending Packet? in l.isEmpty ? nil : l.removeFirst() }) {
      route(packet, generation: gen, videoIndex: videoIndex, audioIndex: audioIndex)
    }
  }

  /// Records how far the packet's stream has been read and passes it to its decoder, if one wants it.
  private func route(_ owned: sending Packet, generation gen: Int, videoIndex: Int32?, audioIndex: Int32?) {
    let packet = owned.pointer
    let size = Int(packet.pointee.size)
    let index = packet.pointee.stream_index
    let isVideo = index == videoIndex
    let isAudio = index == audioIndex
    let tb = timeBase(index)
    if let joins, isVideo || isAudio {
      // A jump on over bytes the demuxer stepped over, as many as that much time holds, is damage, not a join.
      let (byte, skips) = (packet.pointee.pos, skips)
      joins.follow(packet, stream: index, timeBase: tb, core: core) { time in
        skips?.accounts(forJumpTo: time, byte: byte) ?? false
      }
    }
    let start = isVideo || isAudio ? core.seconds(packet, tb) : nil
    let end = isVideo || isAudio ? core.end(packet, tb) : nil
    if let skips, let notice = skips.follow(byte: packet.pointee.pos, size: size, start: start, end: end) {
      core.media.warn(notice)
    }
    let joined = joins?.hasJoined ?? false
    let (videoWanted, audioWanted) = core.state.withLock { s -> (Bool, Bool) in
      // Past a join the source lasts longer than its header says (which saw one part's times): as far as it was read.
      if joined, let end { s.joinedUntil = max(s.joinedUntil ?? end, end) }
      if let start, let end, gen == s.generation {
        if isVideo {
          s.videoDemuxedFrom = s.videoDemuxedFrom ?? start
          s.videoDemuxedUntil = max(s.videoDemuxedUntil ?? end, end)
        }
        if isAudio {
          s.audioDemuxedFrom = s.audioDemuxedFrom ?? start
          s.audioDemuxedUntil = max(s.audioDemuxedUntil ?? end, end)
        }
      }
      return (!s.videoStopped, !s.audioStopped)
    }
    if isVideo && videoWanted {
      core.videoPackets.push(.packet(owned, generation: gen), cost: size)
    } else if isAudio && audioWanted {
      core.audioPackets.push(.packet(owned, generation: gen), cost: size)
    }
  }
}

/// Stretches of a file the demuxer could not read and stepped over to the next place it could (Matroska's next
/// cluster, MPEG-TS's next sync byte): bytes damaged in a download or on a disc. The picture held there while the
/// sound (where there was sound after it) went on, and nothing said why. Where the next packet lies more than
/// `bytes` (and half what the rate read so far gives the time lost) past the end of the one before, and the time of
/// the played streams jumps by more than `seconds` at the next packet that has a time, the host hears it, with where
/// and how much: "damaged from 7.8 s to 12.9 s (1.2 MB could not be read); playback goes on after it" (at most
/// `told` stretches; a half-downloaded file has many). A gap of time alone (a stream that pauses) or of bytes alone (a
/// large element skipped on purpose) is not damage. Forgotten at a seek, which moves the reading.
/// Thread-safety: Unsafe (unchecked Sendable); the demux thread's alone.
final class SkippedStretches: @unchecked Sendable {
  static let bytes: Int64 = 256 << 10
  static let seconds = 1.0
  static let told = 5
  /// Where reading began (the start, or the last seek): the bytes and the played streams' time then, for the rate
  /// read since (a header's rate is wrong where the timeline wraps or the stream is uneven).
  private var first: (byte: Int64, time: Double)?
  /// Where the last packet read ends in the file (any stream's).
  private var lastByte: Int64?
  /// Where the played streams' last packet ends, seconds.
  private var lastTime: Double?
  /// Bytes stepped over since a played packet with a time last came.
  private var skipped: Int64 = 0
  private var count = 0

  func restart() {
    first = nil
    lastByte = nil
    lastTime = nil
    skipped = 0
  }

  /// Whether a packet at `byte` whose time jumps on to `start` (seconds, as `follow` would be given it) comes after
  /// bytes stepped over, as many as the time lost holds at the rate read so far or near it: damage, where the
  /// stream's clock went on (MPEG-TS damage of more than `TimestampJoins.forwards` was taken for a join).
  /// Without two seconds read since the start or a seek, it is not told (the join stands, as it did).
  func accounts(forJumpTo start: Double, byte: Int64) -> Bool {
    guard let lastByte else { return false }
    let gap = byte >= 0 && byte - lastByte > Self.bytes ? byte - lastByte : 0
    return isDamage(stepped: skipped + gap, readTo: max(byte, lastByte), start: start, unmeasured: false)
  }

  /// Whether `stepped` bytes stepped over before a played packet at `start` (seconds), in a file read to `end`, are
  /// damage: the played streams' time jumps by more than `seconds`, and as many bytes as that time holds at the rate
  /// read so far, or near it (not a stream that paused while others were read). Without two seconds read,
  /// `unmeasured` says.
  private func isDamage(stepped: Int64, readTo end: Int64, start: Double, unmeasured: Bool) -> Bool {
    guard stepped > 0, let lastTime, start - lastTime > Self.seconds else { return false }
    guard let first, lastTime - first.time >= 2 else { return unmeasured }
    let rate = Double(end - stepped - first.byte) / (lastTime - first.time)
    return rate <= 0 || Double(stepped) >= rate * (start - lastTime) / 2
  }

  /// Follows one packet (at `byte` in the file, -1 when unknown; `start` and `end` its time, for a played stream);
  /// the notice for a stretch skipped before it, if one was.
  func follow(byte: Int64, size: Int, start: Double?, end: Double?) -> String? {
    if byte >= 0 {
      if let lastByte, byte - lastByte > Self.bytes { skipped += byte - lastByte }
      lastByte = byte + Int64(size)
    }
    guard let start else { return nil }  // decided at the next packet with a time (a PES without one carries on)
    defer {
      skipped = 0
      if let end { lastTime = max(lastTime ?? end, end) }
      if first == nil, let lastByte { first = (lastByte, start) }
    }
    // Without two seconds read, the time jump and the bytes decide alone.
    guard count < Self.told, let lastByte, let lastTime,
      isDamage(stepped: skipped, readTo: lastByte, start: start, unmeasured: true)
    else { return nil }
    count += 1
    let megabytes = Double(skipped) / 1e6
    return "damaged from \(CueCleanup.time(lastTime)) to \(CueCleanup.time(start)) ("
      + String(format: "%.1f MB", megabytes) + " could not be read); playback goes on after it"
  }
}

/// Recordings joined end to end (`cat a.ts b.ts`, a VOB after a VOB): each part's clock starts again, so the second
/// part's pictures came timed before the first part's end. The picture froze while the sound played on, and the
/// position went back. Where a stream's time jumps back more than `backwards` or on more than `forwards` seconds
/// (unless bytes the demuxer stepped over account for a jump on: damage, `SkippedStretches.accounts`),
/// the part from there is moved to go on where the last one ended, for every stream alike (the first stream that
/// meets the join sets it; the others then find themselves in place). Forgotten at a seek, whose target FFmpeg finds
/// by the packets' own times (a seek past the first part's length is not found in a joined file).
/// Thread-safety: Unsafe (unchecked Sendable); the demux thread's alone.
final class TimestampJoins: @unchecked Sendable {
  static let backwards = 1.0
  static let forwards = 10.0
  /// Seconds added to every packet's times since the last join.
  private var offset = 0.0
  /// A join was met since the source opened.
  private(set) var hasJoined = false
  /// Each stream's last time as read (its decode time where it has one), seconds.
  private var last: [Int32: Double] = [:]
  /// Where what was read so far ends, moved, seconds.
  private var end = -Double.infinity

  /// A seek: the place read from now on is unknown.
  func restart() {
    offset = 0
    last = [:]
    end = -.infinity
  }

  /// Moves `packet` (of `stream`, in `timeBase`) by the offset of its part, noting a join where its time jumps; not
  /// where it jumps on and `damaged(time)` says bytes lost before it account for that (`time`: where the packet goes
  /// with no new join).
  func follow(
    _ packet: UnsafeMutablePointer<AVPacket>, stream: Int32, timeBase: AVRational, core: PipelineCore,
    damaged: (Double) -> Bool = { _ in false }
  ) {
    let p = packet.pointee
    let stamp = p.dts != orb_nopts_value() ? p.dts : p.pts
    guard stamp != orb_nopts_value() else { return }
    let tick = av_q2d(timeBase)
    let time = Double(stamp) * tick - core.startTime
    if let previous = last[stream], end.isFinite,
      time < previous - Self.backwards || (time > previous + Self.forwards && !damaged(time + offset)),
      abs(time + offset - end) > 2  // not a join another stream has already met
    {
      offset = end - time
      hasJoined = true
    }
    last[stream] = time
    // In ticks that fit (a file's times and time base can make the offset too many for Int64), added wrapping.
    let ticks = (offset / tick).rounded()
    if offset != 0, abs(ticks) < 9e18 {
      if p.pts != orb_nopts_value() { packet.pointee.pts &+= Int64(ticks) }
      if p.dts != orb_nopts_value() { packet.pointee.dts &+= Int64(ticks) }
    }
    end = max(end, core.end(packet, timeBase) ?? time + offset)
  }
}

/// How long the demuxer's reads waited, for telling a live stream that fell silent from one that ended: a live HLS
/// stream whose playlist stops changing keeps one read waiting while the demuxer reloads the playlist, then ends a
/// few reads later, once the packets the inner demuxer held have come out.
/// Thread-safety: Unsafe (unchecked Sendable); the demux thread's alone.
final class ReadWaits: @unchecked Sendable {
  /// The last read that waited a second or more (seconds), and the reads since.
  private var long = 0.0
  private var readsSince = Int.max
  /// The longest of the waits before it since the last seek: a live stream's wait for its next segment at the live
  /// edge (up to about one and a half target durations).
  private var earlier = 0.0
  /// Whether anything was read since the source opened.
  private(set) var hasRead = false

  func note(_ seconds: Double) {
    hasRead = true
    if seconds >= 1 {
      earlier = max(earlier, long)
      long = seconds
      readsSince = 0
    } else if readsSince < .max {
      readsSince += 1
    }
  }

  /// A seek: waits before it say nothing of the reading after it.
  func restart() {
    (long, readsSince, earlier) = (0, .max, 0)
  }

  /// For the read that found the end, which took `seconds`: the longer of that and a long wait a few reads before,
  /// and the longest wait before that one.
  func beforeEnd(_ seconds: Double) -> (waited: Double, earlier: Double) {
    readsSince <= 16 ? (max(long, seconds), earlier) : (seconds, max(earlier, long))
  }
}
