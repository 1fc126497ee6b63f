import CFFmpeg
import Foundation

/// The video decode thread: decodes the video packets (FFmpeg's frame threading inside), times each picture,
/// holds back the ones before a seek's target, and queues the rest as `VideoFrame`s for the player.
/// Thread-safety: Unsafe; `run` is the body of the one video decode thread.
struct VideoDecoding {
  let core: PipelineCore

  func run(_ decoder: Decoder) {
    guard let stream = core.videoStream else { return }
    let media = core.media
    let timeBase = core.videoTimeBase
    var current = core.state.withLock { $0.generation }
    var hold = SeekHold<VideoFrame>()
    // The seek's target (media seconds) until the decoder passes it: pictures no other refers to and that start well
    // before it are never shown, so the decoder skips them (about two thirds of an x264 stream's pictures), as mpv's
    // exact seek does; the picture shown at the target is at most a frame before it, and is always decoded.
    var skipUntil: Double?
    let skipMargin = 2 * core.frameDuration
    var timing = VideoTiming(
      nominalDuration: core.frameDuration, tick: av_q2d(timeBase), ownDurations: !core.media.info.isStill)
    // Each picture goes to the player as soon as it is decoded; the lookahead keeps hold of it (not of its memory:
    // the queue or the ring has that) only to settle how long it lasts once the next one starts, which is usually
    // before it is shown. Holding the picture itself back until then kept a decoded picture more in hand (25 MB at
    // 4K HDR10, 6 MB at 1080p HDR10).
    var lookahead = DurationLookahead<VideoFrame>(tick: av_q2d(timeBase))
    let converter = FrameConverter()
    // The opening's first picture, decoded on its own (`QuickFirstPicture`) ahead of the decoder's reordering
    // delay: until the decoder's own copy of it has come out, that copy is dropped.
    var quick = QuickFirstPicture(
      decoder: decoder, parameters: media.parameters[stream.index], limit: media.limit,
      codedAsFields: stream.codedAsFields)
    // Interlaced pictures become one whole picture per field (`Deinterlacer`), each a half of the picture's time;
    // not those that end before a seek's target while the hold waits for it (they are dropped): splitting them made
    // an exact seek in 1080i three to four times slower.
    var fields = Deinterlacer()
    // A stream coded in fields: each two make a frame first (`FieldWeaver`), whose marks are its own. Other HEVC
    // pictures' marks are not trusted (`DeinterlaceMode.applies`).
    var weaver =
      stream.codedAsFields
      ? FieldWeaver(topFirst: ["tt", "bb"].contains(stream.fieldOrder) ? stream.fieldOrder == "tt" : nil) : nil
    let trustingMarks = stream.codec != "hevc" || stream.codedAsFields
    func deinterlace(_ frames: [Deinterlacer.Timed], mode: DeinterlaceMode) {
      for frame in frames {
        let unseen = !hold.emitted && frame.time + frame.duration < hold.target - 0.001
        for ready in fields.offer(frame, mode: mode, trustingMarks: trustingMarks, unseen: unseen) { show(ready) }
      }
    }
    func show(_ picture: Deinterlacer.Timed) {
      guard
        let video = converter.makeFrame(
          picture.frame, stream: stream, time: picture.time, duration: picture.duration, generation: current,
          fields: picture.fields)
      else { return }
      if let before = lookahead.offer(video, time: picture.time, duration: picture.duration) {
        before.picture.settle(duration: before.duration)
      }
      for ready in hold.offer(video, time: picture.time) { core.frames.push(.frame(ready)) }
    }
    func deliver(_ frame: UnsafeMutablePointer<AVFrame>) {
      let rows = Int(frame.pointee.height) * (weaver != nil ? 2 : 1)  // a field becomes a frame twice its height
      if let refusal = media.limit.refusal(width: Int(frame.pointee.width), height: rows) {
        // The stream grew past the limit mid-way: its pictures are skipped, never uploaded.
        core.state.withLock { $0.refusedPictures = refusal }
        av_frame_unref(frame)
        return
      }
      let (time, duration) = timing.place(
        stamped: core.untimed ? nil : core.seconds(frame, timeBase),
        ownDuration: Double(frame.pointee.pkt_duration) * av_q2d(timeBase))
      let mode = core.state.withLock {
        $0.decodedPictures += 1
        return $0.deinterlace
      }
      guard let picture = av_frame_alloc() else { return }
      av_frame_move_ref(picture, frame)
      let timed = Deinterlacer.Timed(frame: picture, time: time, duration: duration)
      deinterlace(weaver?.offer(timed) ?? [timed], mode: mode)
    }
    DecodeLoop(core: core, queue: core.videoPackets, taken: \.videoTakenAt).run(
      decoder,
      flushed: { g, t in
        current = g
        skipUntil = t
        hold.restart(at: t)
        timing.restart()
        lookahead.restart()
        weaver?.reset()
        fields.reset()
        quick.cancel()  // a seek's target is seldom its key picture: only the opening's first picture goes ahead
        return nil
      },
      receive: { frame in
        if quick.admits(frame) { deliver(frame) } else { av_frame_unref(frame) }
      },
      finish: { g in
        if let last = weaver?.finish() { deinterlace(last, mode: core.state.withLock { $0.deinterlace }) }
        for last in fields.finish() { show(last) }
        _ = lookahead.finish()  // the last picture keeps its own duration
        if let last = hold.finish() { core.frames.push(.frame(last)) }
        core.frames.push(.end(generation: g))
      },
      sending: { context, packet in
        // A packet is decoded once the picture before it has somewhere to go: decoding on while the queue is full
        // made a picture that waited in this thread's hands (4K HDR10: 24 MB, peak 362 -> 338 MB; HDR10 1080p
        // 164 -> 159 MB; 4K H.264 248 -> 237 MB). The pictures still in the decoder keep its own threads busy.
        core.frames.waitForRoom()
        let p = packet.pointee
        let stamp = p.pts != orb_nopts_value() ? p.pts : p.dts
        let time = stamp == orb_nopts_value() ? nil : Double(stamp) * av_q2d(timeBase) - core.startTime
        // The opening's first picture goes ahead of the decoder's delay when it is the one to show first.
        let showsFirst = skipUntil.map { target in time.map { $0 >= target - skipMargin } ?? false } ?? true
        if let first = quick.decode(packet, showsFirst: showsFirst) {
          deliver(first)  // takes the picture's reference; the frame itself is freed here
          var emptied: UnsafeMutablePointer<AVFrame>? = first
          av_frame_free(&emptied)
        }
        guard let target = skipUntil else { return }
        if let time, time < target - skipMargin {
          context.pointee.skip_frame = AVDISCARD_NONREF
        } else {
          context.pointee.skip_frame = AVDISCARD_DEFAULT
          if time.map({ $0 >= target }) ?? true { skipUntil = nil }  // past the target: every picture counts
        }
      })
    weaver?.reset()  // pictures kept for a stream that stopped before its end
    fields.reset()
  }
}
