/// Which streams a pipeline decodes, and with what: the video stream (unless its picture is too large or it cannot
/// be decoded), the audio track asked for (else the default one, else the first), their decoders, and what the user
/// should hear about the choice. A stream that cannot be played is dropped and the other plays on; when neither can
/// be, it says why.
/// Thread-safety: a value type, made once while the pipeline opens.
struct TrackChoice {
  private(set) var video: VideoStreamInfo?
  /// Each decoder is taken by its decode thread.
  private(set) var videoDecoder: Handoff<Decoder>?
  private(set) var audio: AudioStreamInfo?
  private(set) var audioDecoder: Handoff<Decoder>?
  /// Things worth telling the user once (a track that is not there, a stream dropped).
  private(set) var notices: [String]

  /// - Throws: `MediaError` (`unplayable`) when nothing in `media` can be decoded as asked.
  init(media: MediaSource, audio request: MediaPipeline.AudioRequest?, variant: VariantChoice = .highest) throws {
    notices = media.info.warnings
    let chosenVideo = media.videoStream(for: variant)
    // In an HLS master playlist each variant carries its own audio: the one of the chosen picture's variant, so one
    // variant is read, not two.
    let sameVariant = media.info.audio.filter {
      $0.variantBitrate != nil && $0.variantBitrate == chosenVideo?.variantBitrate
    }
    let tracks = media.info.audio
    if let request {
      if let track = request.track, track >= 1 && track <= tracks.count {
        audio = tracks[track - 1]
      } else {
        // A track that is not there is not worth failing over: the default one plays, and the user hears why.
        if let track = request.track {
          notices.append("no audio track \(track) (it has \(tracks.count)); playing the default one")
        }
        audio = sameVariant.first ?? tracks.first(where: { $0.isDefault }) ?? tracks.first
      }
    }
    video = chosenVideo
    if video == nil && audio == nil {
      throw MediaError(.unplayable, source: media.source, reason: "no video stream in it")
    }
    var problems: [String] = []
    if let v = video, let refusal = media.limit.refusal(width: v.width, height: v.height) {
      // Refused before any decoder allocates it; the sound, if any, plays on.
      guard audio != nil else { throw MediaError(.unplayable, source: media.source, reason: refusal) }
      notices.append("\(refusal); playing the sound only")
      video = nil
    }
    if let v = video {
      if let par = media.parameters[v.index],
        let decoder = try? Decoder(
          par, threads: Decoder.frameThreads(for: v, bitRate: media.info.bitRate), limit: media.limit)
      {
        videoDecoder = Handoff(decoder)
      } else {
        problems.append("cannot decode its video (\(media.parameters[v.index]?.codecDescription ?? v.codec))")
        video = nil
      }
    }
    if let a = audio {
      if let par = media.parameters[a.index], let decoder = try? Decoder(par, threads: 1) {
        audioDecoder = Handoff(decoder)
      } else {
        problems.append("cannot decode its audio (\(media.parameters[a.index]?.codecDescription ?? a.codec))")
        audio = nil
      }
    }
    if video == nil && audio == nil {
      let reason = problems.isEmpty ? "none of its streams can be decoded" : problems.joined(separator: "; ")
      throw MediaError(.unplayable, source: media.source, reason: reason)
    }
    // One of them plays: the other's problem is a notice.
    for problem in problems {
      notices.append(problem + (video == nil ? "; playing the sound only" : "; playing without sound"))
    }
  }
}
