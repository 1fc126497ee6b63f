import CFFmpeg
import Foundation

/// An owned AVPacket, made by the demux thread and handed to one decode thread through a queue; neither touches it
/// once it has handed it on.
/// Thread-safety: not `Sendable`; it crosses threads only as a `sending` item of a `BoundedQueue`, so the compiler
/// sees that one thread at a time owns it.
final class Packet {
  let pointer: UnsafeMutablePointer<AVPacket>
  init(_ pointer: UnsafeMutablePointer<AVPacket>) { self.pointer = pointer }
  deinit {
    var p: UnsafeMutablePointer<AVPacket>? = pointer
    av_packet_free(&p)
  }
}

/// What flows from the demux thread to a decode thread.
/// Thread-safety: not `Sendable` (it may hold a `Packet`); `sending` through a queue.
enum PacketItem {
  case packet(Packet, generation: Int)
  /// A seek (or a track switch): forget what came before, start again at `target` seconds.
  case flush(generation: Int, target: Double)
  case end(generation: Int)
}

/// What flows from the video decode thread to the player.
enum FrameItem: Sendable {
  case frame(VideoFrame)
  case end(generation: Int)
}

/// What flows from the audio decode thread to the audio output.
enum AudioItem: Sendable {
  case chunk(AudioChunk)
  case end(generation: Int)
}

/// Where a `MediaPipeline` is between its threads: seeks are numbered (generations) so nothing from before one
/// leaks out, and each thread reports how far it got.
/// Thread-safety: a value type, only ever inside `PipelineCore.state`.
struct PipelineState {
  var generation = 0
  var pendingSeek: Double?
  /// The pending seek shows the frame at its target (else the key frame before it).
  var pendingSeekExact = true
  var stopped = false
  var endedVideoGeneration = -1
  var endedAudioGeneration = -1
  var skippedPackets = 0
  var audioStopped = false
  var videoStopped = false
  var readFailureCode: Int32?
  /// The byte of the source the reading had reached when it failed (its connection's position).
  var readFailedAtByte: Int64?
  /// The latest media time demuxed for the current generation, video and audio (nil: none yet, or the stream has
  /// no timestamps).
  var videoDemuxedUntil: Double?
  var audioDemuxedUntil: Double?
  /// The first media time demuxed for the current generation, video and audio.
  var videoDemuxedFrom: Double?
  var audioDemuxedFrom: Double?
  /// The latest end of a packet each decoder took in the current generation: from there to `…DemuxedUntil`, the
  /// packets read ahead wait in its queue.
  var videoTakenAt: Double?
  var audioTakenAt: Double?
  /// Where what was read of a source of joined recordings ends (`TimestampJoins`), once a join was met: further than
  /// its header's length, which saw one part.
  var joinedUntil: Double?
  /// The demuxer reached the end (or a read failure) in the current generation.
  var demuxAtEnd = false
  /// How long the demuxer waited on its reads just before it found the end (seconds, `ReadWaits`): a live HLS
  /// stream whose playlist stopped changing ends after the demuxer has reloaded it for a while (`MediaSource`'s
  /// `m3u8_hold_counters`).
  var quietBeforeEnd: Double?
  /// The longest wait on a read before that (seconds): at a live stream's edge, about a segment's length.
  var waitsBeforeEnd = 0.0
  var decodedPictures = 0
  var decodedAudioFrames = 0
  /// Which pictures the video decode thread deinterlaces, from the next one decoded.
  var deinterlace = DeinterlaceMode.auto
  var refusedPictures: String?
  var currentAudio: AudioStreamInfo?
  /// Set by `switchAudio`; the audio thread opens its decoder at the next flush.
  var switchedAudio: AudioStreamInfo?
  /// Seconds the sound is heard after its picture (`setAudioDelay`); the audio thread takes it at each flush.
  var audioDelay = 0.0

  /// A seek: nothing is read or taken of the new generation yet.
  mutating func restartReading() {
    quietBeforeEnd = nil
    videoDemuxedUntil = nil
    audioDemuxedUntil = nil
    videoDemuxedFrom = nil
    audioDemuxedFrom = nil
    videoTakenAt = nil
    audioTakenAt = nil
  }

  /// Whether each decoder that still takes packets has at least `seconds` of them read ahead (a stream without
  /// timestamps never has).
  func hasReadAhead(_ seconds: Double, video: Bool, audio: Bool) -> Bool {
    func enough(_ until: Double?, _ from: Double?, _ taken: Double?) -> Bool {
      guard let until, let from else { return false }
      return until - max(from, taken ?? from) >= seconds
    }
    return (!video || videoStopped || enough(videoDemuxedUntil, videoDemuxedFrom, videoTakenAt))
      && (!audio || audioStopped || enough(audioDemuxedUntil, audioDemuxedFrom, audioTakenAt))
  }
}

/// What a pipeline's three threads (demux, video decode, audio decode) and its public face share: the opened
/// source, facts fixed at opening, the bounded queues between the threads, and their state behind one lock.
/// Lock order: `state` before a queue's lock (`seek` clears the queues holding it); no thread takes `state` while
/// holding a queue's lock.
/// Thread-safety: Safe; constants are `let`, the rest is in `state` or a `BoundedQueue`. Only the demux thread
/// reads from `media.context`.
final class PipelineCore: Sendable {
  let media: MediaSource
  /// The container's start time, subtracted from every timestamp, so times are seconds from the start.
  let startTime: Double
  /// Seconds a decoded picture lasts at the video's nominal rate (a field, for a stream coded in fields).
  let frameDuration: Double
  let videoStream: VideoStreamInfo?
  let videoTimeBase: AVRational
  /// The demuxer gives no timestamps (a raw elementary stream): frames are timed by the frame rate from the
  /// start, and a seek decodes forward from the start to its target.
  let untimed: Bool
  let audioRate: Int
  // Bounded by bytes and count, so a high-bitrate stream cannot grow memory without limit.
  let videoPackets = BoundedQueue<PacketItem>(capacity: 64 << 20, maxCount: 512)
  let audioPackets = BoundedQueue<PacketItem>(capacity: 16 << 20, maxCount: 2048)
  /// One decoded picture ahead of the render thread (the video decode thread decodes the next packet once there is
  /// room, and the render thread takes a picture once it has a target to draw it into), which draws one or two
  /// ahead into its ring: a window-sized target costs 3.7 MB at 1280x720 where a decoded picture costs 24 MB at 4K
  /// HDR, so the time to ride out a slow frame is kept in the ring, not here.
  let frames = BoundedQueue<FrameItem>(capacity: 1)
  /// About half a second of decoded audio ahead of the output.
  let audioChunks: BoundedQueue<AudioItem>
  let state: Locked<PipelineState>

  init(
    media: MediaSource, video: VideoStreamInfo?, audio: AudioStreamInfo?, audioRate: Int, audioDelay: Double = 0,
    start: Double,
    deinterlace: DeinterlaceMode = .auto
  ) {
    self.media = media
    videoStream = video
    // Raw elementary streams (.h264, .hevc, .m4v): the demuxer says so, or probing found no timestamp at all in a
    // format FFmpeg indexes itself. (Not in a container whose packets carry their times: a Matroska file whose
    // first picture gave FFmpeg no start time was taken for one, and each seek went back to its first byte, which
    // Matroska reads as garbage: no picture.)
    untimed =
      orb_format_has_no_timestamps(media.context) != 0
      || (orb_format_indexed_by_ffmpeg(media.context) != 0
        && video.map { media.stream($0.index).pointee.start_time == orb_nopts_value() } ?? false
        && media.context.pointee.start_time == orb_nopts_value())
    self.audioRate = audioRate
    audioChunks = BoundedQueue<AudioItem>(capacity: audioRate / 2)
    let ctxStart = media.context.pointee.start_time
    startTime = ctxStart == orb_nopts_value() ? 0 : Double(ctxStart) / Double(AV_TIME_BASE)
    // A stream coded in fields decodes two pictures a frame.
    frameDuration =
      1 / (video?.frameRate.flatMap { $0 > 0 && $0 < 1000 ? $0 : nil } ?? 25) / (video?.codedAsFields == true ? 2 : 1)
    videoTimeBase = video.flatMap { media.parameters[$0.index]?.timeBase } ?? AVRational(num: 1, den: 1)
    var initial = PipelineState()
    initial.currentAudio = audio
    initial.audioDelay = audioDelay
    initial.deinterlace = deinterlace
    if start > 0 {
      initial.pendingSeek = start
      initial.generation = 1
    }
    state = Locked(initial)
  }

  /// Whether the pipeline was closed.
  var isClosed: Bool { state.withLock { $0.stopped } }

  /// A packet's start in seconds from the start of the file, if it has a timestamp (in Double: a damaged file's
  /// timestamps near Int64's limits must not trap).
  func seconds(_ packet: UnsafePointer<AVPacket>, _ timeBase: AVRational) -> Double? {
    let p = packet.pointee
    let stamp = p.pts != orb_nopts_value() ? p.pts : p.dts
    return stamp == orb_nopts_value() ? nil : Double(stamp) * av_q2d(timeBase) - startTime
  }

  /// Where a packet ends in seconds from the start (its time and its duration), if it has a time.
  func end(_ packet: UnsafePointer<AVPacket>, _ timeBase: AVRational) -> Double? {
    seconds(packet, timeBase).map { $0 + Double(max(0, packet.pointee.duration)) * av_q2d(timeBase) }
  }

  /// A frame's presentation time in seconds from the start, if it has one.
  func seconds(_ frame: UnsafeMutablePointer<AVFrame>, _ timeBase: AVRational) -> Double? {
    let f = frame.pointee
    let pts = f.best_effort_timestamp != orb_nopts_value() ? f.best_effort_timestamp : f.pts
    return pts == orb_nopts_value() ? nil : Double(pts) * av_q2d(timeBase) - startTime
  }
}
