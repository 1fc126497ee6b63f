import Foundation
import OrbDecode

/// Puts a source's sound on the PipeWire output, which then drives the clock (without PipeWire the video plays on
/// the host clock, and the host hears why), and takes the sound alone when the video gives no picture.
/// Thread-safety: Unsafe; used on the render thread. It changes the player only through `Player.shared`, and tells
/// PipeWire with that lock let go.
struct SoundAttachment {
  let player: Player

  func attach(_ opened: FrameSource) {
    player.shared.withLock { $0.hasVideo = opened.hasVideo }
    guard let sound = opened.sound else {
      player.earlyOpen?.dropOutput()
      return
    }
    let name = player.shared.withLock { $0.info?.source } ?? player.source
    let output: AudioOutput
    do {
      // Connected while the window started, when the source was opened then too.
      output = try player.earlyOpen?.takeOutput()?.get() ?? AudioOutput(mediaName: name)
    } catch {
      sound.stopAudio()
      player.shared.withLock { $0.soundDiscarded = true }
      player.onEvent?(.warning("no audio output (\(error)); playing without sound"))
      return
    }
    output.setActive(false)  // until the first picture starts the clock
    player.onEvent?(.notice("audio: PipeWire, \(output.sampleRate) Hz stereo; the picture follows the sound"))
    let clock = player.clock
    let owner = player
    let playback = AudioPlayback(
      sound: sound, output: output, processor: player.makeProcessor?() ?? player.dsp,
      reconnect: { try AudioOutput(mediaName: name) }, clockTime: { clock.time() },
      onOutputLost: { [weak owner] in
        owner?.onEvent?(.warning("no audio output (PipeWire went away); playing on without sound"))
      },
      onOutputRestored: { [weak owner] in
        guard let player = owner else { return }
        player.onEvent?(.notice("audio: PipeWire is back"))
        player.seek(to: player.clock.time())  // refill from here, so sound and picture start together
      })
    let attached = player.shared.withLock { s -> Bool in
      guard !s.stopped else { return false }
      s.audio = playback
      return true
    }
    guard attached else { return }  // stopped while the output opened: it goes with `playback`
    let soundRuns = player.shared.withLock { s -> Bool? in
      guard !opened.hasVideo else { return nil }
      // Nothing to wait for: sound starts the clock.
      let runs = s.schedule.soundAlone(videoGivenUp: false)
      if runs { clock.play() }
      return runs
    }
    if let soundRuns { playback.setPaused(!soundRuns) }  // outside our lock: it takes PipeWire's
    clock.setMaster(playback)
    playback.start()
  }

  /// The video gave no picture: play the sound alone, on its own clock.
  func abandonVideo(_ source: FrameSource) {
    source.stopVideo()
    let clock = player.clock
    let (playback, paused) = player.shared.withLock { s -> (AudioPlayback?, Bool) in
      s.hasVideo = false
      // From here the rules of sound alone decide whether a broken stream is tried again: its sound running out
      // asks for the next try, which a try said to be under way would hold back for ever.
      s.retrying = false
      let runs = s.schedule.soundAlone(videoGivenUp: true)
      if runs { clock.play() }
      return (s.audio, !runs)
    }
    playback?.setPaused(paused)
    player.onEvent?(.warning("no picture could be decoded from the video; playing the sound only"))
  }
}
