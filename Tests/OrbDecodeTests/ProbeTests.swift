import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// What `--probe` and the stats overlay show about a file, checked against how it was made and against ffprobe.
final class ProbeTests: XCTestCase {
  /// A sound file's cover (an attached picture: PNG in MP4, JPEG in MP3) is decoded for the window at its shape, and
  /// the probe says its size; one larger than 1600 pixels is shrunk to fit; a video file has none (its attached
  /// picture, if any, is not its video), nor has sound without one. The title and artist tags make its name.
  /// A width swscale's blocks do not divide (300) is converted without writing past the picture (it corrupted the
  /// heap: the player aborted on such MP3s).
  func testTheCoverOfASoundFileIsDecodedAtItsShape() throws {
    for (name, picture, audio, size, shown) in [
      ("song-png.m4a", "png", "aac", (400, 300), (400, 300)),
      ("song-jpeg.mp3", "mjpeg", "libmp3lame", (320, 320), (320, 320)),
      ("song-jpeg-300.mp3", "mjpeg", "libmp3lame", (300, 300), (300, 300)),
      ("song-jpeg-250.m4a", "mjpeg", "aac", (250, 250), (250, 250)),
      ("song-large.m4a", "png", "aac", (3200, 1800), (1600, 900)),
    ] {
      let source = try MediaSource(try Clips.song(name, cover: size, picture: picture, audio: audio))
      XCTAssertTrue(source.info.video.isEmpty, "\(name): the cover is not a video stream")
      let art = try XCTUnwrap(source.coverArt, name)
      XCTAssertEqual([art.width, art.height], [shown.0, shown.1], name)
      XCTAssertEqual(source.info.cover, PictureSize(width: shown.0, height: shown.1), name)
      XCTAssertTrue(source.info.json().contains("\"cover\""), name)
      XCTAssertEqual(source.info.displayTitle, "Orb Song — The Testers", name)
      func pixel(_ x: Int, _ y: Int) -> [Int] { (0..<4).map { Int(art.rgba[(y * art.width + x) * 4 + $0]) } }
      let (left, right) = (pixel(art.width / 4, art.height / 2), pixel(art.width * 3 / 4, art.height / 2))
      XCTAssertTrue(left[0] > 200 && left[1] < 60 && left[2] < 60 && left[3] == 255, "\(name): left \(left)")
      XCTAssertTrue(right[0] < 60 && right[1] < 60 && right[2] > 200, "\(name): right \(right)")
    }
    XCTAssertNil(try MediaSource(try Media.h264()).coverArt)
    let tone = try TestMedia.path(
      "tone-1s.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-c:a", "aac"])
    XCTAssertNil(try MediaSource(tone).coverArt)
    XCTAssertNil(try MediaSource(tone).info.cover)
    XCTAssertNil(try MediaSource(tone).info.displayTitle, "no title tag: the file's name is used")
  }

  /// An MP4 whose timeline begins late (written with an offset: an edit list that starts with a wait) lasts as long as
  /// its streams, not from zero to their end (1003 s for 3 s of video, then "cut short" at 0:03); the same offset in
  /// MPEG-TS, whose stated length is already the streams', stays as it was.
  func testAFileWhoseTimelineBeginsLateLastsAsLongAsItsStreams() throws {
    for (name, length) in [("offset-1000s.mp4", 3023.0), ("offset-1000s.ts", 3023.0)] {
      let clip = try TestMedia.path(
        name,
        [
          "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3", "-f", "lavfi", "-i", "sine=duration=3",
          "-c:v", "libx264", "-c:a", "aac", "-output_ts_offset", "1000",
        ])
      let info = try MediaSource(clip).info
      XCTAssertEqual(Double(info.durationMs ?? 0), length, accuracy: 100, name)
    }
  }

  /// A film's chapters, in order, with their titles and times (what Page Up and Down and the slider's ticks use).
  func testChaptersAreRead() throws {
    let info = try MediaSource(try Clips.chaptered()).info
    XCTAssertEqual(
      info.chapters,
      [
        ChapterInfo(startMs: 0, endMs: 4000, title: "Opening"),
        ChapterInfo(startMs: 4000, endMs: 8000, title: "Middle"),
        ChapterInfo(startMs: 8000, endMs: 12000, title: "End"),
      ])
    XCTAssertTrue(info.json().contains("\"chapters\""))
    XCTAssertEqual(try MediaSource(try Media.h264()).info.chapters, [])
  }

  func testH264InMP4WithAACAudio() throws {
    let path = try Media.h264()
    let info = try MediaSource(path).info
    XCTAssertEqual(info.container, "mov,mp4,m4a,3gp,3g2,mj2")
    XCTAssertEqual(info.source, path)
    let video = try XCTUnwrap(info.video.first)
    XCTAssertEqual(info.video.count, 1)
    XCTAssertEqual(video.codec, "h264")
    XCTAssertEqual(video.width, 320)
    XCTAssertEqual(video.height, 240)
    XCTAssertEqual(video.displayWidth, 320)
    XCTAssertEqual(video.displayHeight, 240)
    XCTAssertEqual(video.sampleAspectRatio, "1:1")
    XCTAssertEqual(video.rotation, 0)
    XCTAssertEqual(try XCTUnwrap(video.frameRate), 25, accuracy: 0.001)
    XCTAssertEqual(video.pixelFormat, "yuv420p")
    XCTAssertEqual(video.bitDepth, 8)
    XCTAssertEqual(video.frameCount, 50)
    // Untagged SD: BT.601 limited range, as players agree.
    XCTAssertEqual(video.effectiveColor.matrix, "bt601")
    XCTAssertEqual(video.effectiveColor.range, "limited")
    XCTAssertEqual(video.effectiveColor.transfer, "bt709")
    XCTAssertNil(video.mastering)
    XCTAssertNil(video.maxCll)

    let audio = try XCTUnwrap(info.audio.first)
    XCTAssertEqual(info.audio.count, 1)
    XCTAssertEqual(audio.codec, "aac")
    XCTAssertEqual(audio.profile, "LC")
    XCTAssertEqual(audio.channels, 2)
    XCTAssertEqual(audio.channelLayout, "stereo")
    XCTAssertEqual(audio.sampleRate, 48000)
    XCTAssertEqual(audio.language, "eng")
    XCTAssertTrue(info.subtitles.isEmpty)
    try assertDurationMatchesFFprobe(info, path, expected: 2)
  }

  func testHEVC10BitHDR10InMKV() throws {
    let path = try Clips.hevcHDR10()
    let info = try MediaSource(path).info
    XCTAssertEqual(info.container, "matroska,webm")
    let video = try XCTUnwrap(info.video.first)
    XCTAssertEqual(video.codec, "hevc")
    XCTAssertEqual(video.profile, "Main 10")
    XCTAssertEqual(video.bitDepth, 10)
    XCTAssertEqual(video.pixelFormat, "yuv420p10le")
    XCTAssertEqual(try XCTUnwrap(video.frameRate), 24, accuracy: 0.001)
    XCTAssertEqual(video.colorTransfer, "smpte2084")
    XCTAssertEqual(video.colorPrimaries, "bt2020")
    XCTAssertEqual(video.colorMatrix, "bt2020nc")
    XCTAssertEqual(video.effectiveColor.transfer, "smpte2084")
    XCTAssertEqual(video.effectiveColor.primaries, "bt2020")
    XCTAssertEqual(video.effectiveColor.matrix, "bt2020nc")
    XCTAssertEqual(video.effectiveColor.range, "limited")

    let mastering = try XCTUnwrap(video.mastering, "the mastering display from x265's SEI")
    XCTAssertEqual(mastering.maxLuminance, 1000, accuracy: 1e-9)
    XCTAssertEqual(mastering.minLuminance, 0.0001, accuracy: 1e-9)
    // x265 takes chromaticities in units of 0.00002: G(13250,34500) is (0.265, 0.69), and so on.
    assertChromaticity(mastering.red, 0.68, 0.32, "red")
    assertChromaticity(mastering.green, 0.265, 0.69, "green")
    assertChromaticity(mastering.blue, 0.15, 0.06, "blue")
    assertChromaticity(mastering.whitePoint, 0.3127, 0.329, "white point")
    XCTAssertEqual(video.maxCll, 1000)
    XCTAssertEqual(video.maxFall, 400)
    try assertDurationMatchesFFprobe(info, path, expected: 1)
  }

  /// HEVC's HDR10 metadata is read from its SEI without decoding a picture: in Matroska and MP4 (NAL units after
  /// their lengths), in MPEG-TS and in a raw stream (Annex B start codes) alike, it is what FFmpeg attaches to the
  /// decoded picture. The raw stream, which has no timestamps, then plays from its start (a seek back by time read it
  /// to its end, and nothing played).
  func testHEVCStaticMetadataFromSEIIsTheDecodedPicturesInEveryContainer() throws {
    let mkv = try Clips.hevcHDR10()
    let mp4 = try TestMedia.path("hevc10-hdr10.mp4", ["-i", mkv, "-c", "copy", "-tag:v", "hvc1"])
    let ts = try TestMedia.path("hevc10-hdr10.ts", ["-i", mkv, "-c", "copy"])
    let raw = try TestMedia.path("hevc10-hdr10.hevc", ["-i", mkv, "-c", "copy"])
    for path in [mkv, mp4, ts, raw] {
      let video = try XCTUnwrap(try MediaSource(path).info.video.first, path)
      let pipeline = try MediaPipeline(source: path)
      defer { pipeline.close() }
      let frame = try XCTUnwrap(pipeline.nextFrame(), path)
      XCTAssertEqual(frame.time, 0, accuracy: 0.01, "\(path): plays from its first picture")
      let decoded = try XCTUnwrap(frame.hdr.mastering, "\(path): FFmpeg's decoder found the SEI")
      XCTAssertEqual(video.mastering, decoded, path)
      XCTAssertEqual(video.maxCll, frame.hdr.maxCLL, path)
      XCTAssertEqual(video.maxFall, frame.hdr.maxFALL, path)
      XCTAssertEqual(video.maxCll, 1000, path)
      assertChromaticity(decoded.red, 0.68, 0.32, "red in \(path)")
    }
  }

  /// An HEVC stream with PQ but no HDR10 messages says nothing of a mastering display (and is read to its first
  /// key picture only).
  func testHEVCWithoutStaticMetadataReportsNone() throws {
    let path = try TestMedia.path(
      "hevc10-pq-bare.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=24", "-t", "1", "-vf", "format=yuv420p10le", "-c:v",
        "libx265", "-preset", "ultrafast", "-x265-params",
        "colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:log-level=error",
      ])
    let video = try XCTUnwrap(try MediaSource(path).info.video.first)
    XCTAssertEqual(video.colorTransfer, "smpte2084")
    XCTAssertNil(video.mastering)
    XCTAssertNil(video.maxCll)
    XCTAssertNil(video.maxFall)
  }

  func testVP9InWebMWithOpus() throws {
    let path = try Media.vp9()
    let info = try MediaSource(path).info
    XCTAssertEqual(info.container, "matroska,webm")
    let video = try XCTUnwrap(info.video.first)
    XCTAssertEqual(video.codec, "vp9")
    XCTAssertEqual(video.width, 320)
    XCTAssertEqual(video.height, 240)
    XCTAssertEqual(video.pixelFormat, "yuv420p")
    XCTAssertEqual(try XCTUnwrap(video.frameRate), 25, accuracy: 0.001)
    let audio = try XCTUnwrap(info.audio.first)
    XCTAssertEqual(audio.codec, "opus")
    XCTAssertEqual(audio.sampleRate, 48000)
    try assertDurationMatchesFFprobe(info, path, expected: 2)
  }

  func testMPEG2InTransportStream() throws {
    let path = try Media.mpeg2()
    let info = try MediaSource(path).info
    XCTAssertEqual(info.container, "mpegts")
    let video = try XCTUnwrap(info.video.first)
    XCTAssertEqual(video.codec, "mpeg2video")
    XCTAssertEqual(video.width, 320)
    XCTAssertEqual(video.height, 240)
    XCTAssertEqual(try XCTUnwrap(video.frameRate), 25, accuracy: 0.001)
    XCTAssertEqual(info.audio.first?.codec, "mp2")
    try assertDurationMatchesFFprobe(info, path, expected: 2)
  }

  func testMPEG4Part2InAVI() throws {
    let path = try Media.mpeg4()
    let info = try MediaSource(path).info
    XCTAssertEqual(info.container, "avi")
    let video = try XCTUnwrap(info.video.first)
    XCTAssertEqual(video.codec, "mpeg4")
    XCTAssertEqual(try XCTUnwrap(video.frameRate), 25, accuracy: 0.001)
    XCTAssertEqual(info.audio.first?.codec, "mp3")
    try assertDurationMatchesFFprobe(info, path, expected: 2)
  }

  func testAVideoCodecFFmpegDoesNotKnowIsNamedByTheTagTheFileGivesIt() throws {
    let files = try Corpus.unknownCodecs()
    let avi = try XCTUnwrap(files.first { $0.name == "fourcc-ZZZZ.avi" })
    XCTAssertEqual(try MediaSource(avi.path).info.video.first?.codec, "unknown codec 'ZZZZ'")
    let mkv = try XCTUnwrap(files.first { $0.name == "unknown-codecid.mkv" })
    let info = try MediaSource(mkv.path).info
    XCTAssertEqual(info.video.first?.codec, "unknown codec")
    XCTAssertEqual(info.audio.first?.codec, "aac")
  }

  /// An MPEG-TS recording whose start (with the H.264 parameters) is damaged: no picture size can be found, so its
  /// video cannot be shown. It says so, where the video was silently left out (and the window played the sound
  /// alone without a word); with no sound beside it, that is the reason it cannot be played.
  func testAVideoWithoutAPictureSizeIsNamedAndWhy() throws {
    let whole = try TestMedia.path(
      "one-key-frame-5s.ts",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=5", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=44100:duration=5", "-c:v", "libx264", "-preset", "ultrafast", "-g", "250",
        "-c:a", "mp2",
      ])
    var data = try Data(contentsOf: URL(fileURLWithPath: whole))
    data.replaceSubrange(0..<4096, with: Data(count: 4096))
    let damaged = try TestMedia.file(named: "one-key-frame-5s-start-zeroed.ts", contents: data)
    let info = try MediaSource(damaged).info
    XCTAssertTrue(info.video.isEmpty)
    XCTAssertEqual(info.audio.first?.codec, "mp2")
    XCTAssertEqual(info.warnings, ["its video (h264) gives no picture size: it cannot be shown (damaged?)"])
    let silent = try TestMedia.path("one-key-frame-5s-video.ts", ["-i", whole, "-map", "0:v", "-c", "copy"])
    var video = try Data(contentsOf: URL(fileURLWithPath: silent))
    video.replaceSubrange(0..<4096, with: Data(count: 4096))
    let alone = try TestMedia.file(named: "one-key-frame-5s-video-start-zeroed.ts", contents: video)
    XCTAssertThrowsError(try MediaSource(alone)) { error in
      XCTAssertEqual(
        (error as? MediaError)?.reason, "its video (h264) gives no picture size: it cannot be shown (damaged?)")
    }
  }

  func testMultiTrackMKVListsEveryTrackWithLanguageTitleAndDisposition() throws {
    let path = try Media.multiTrack()
    let info = try MediaSource(path).info
    XCTAssertEqual(info.video.count, 1)
    XCTAssertEqual(info.audio.count, 2)
    XCTAssertEqual(info.subtitles.count, 1)
    guard info.audio.count == 2, let subtitle = info.subtitles.first else { return }
    let (english, japanese) = (info.audio[0], info.audio[1])
    XCTAssertEqual(english.index, 1)
    XCTAssertEqual(english.codec, "opus")
    XCTAssertEqual(english.language, "eng")
    XCTAssertEqual(english.title, "English")
    XCTAssertTrue(english.isDefault)
    XCTAssertEqual(japanese.index, 2)
    XCTAssertEqual(japanese.language, "jpn")
    XCTAssertEqual(japanese.title, "Japanese dub")
    XCTAssertFalse(japanese.isDefault)

    XCTAssertEqual(subtitle.index, 3)
    XCTAssertEqual(subtitle.codec, "subrip")
    XCTAssertEqual(subtitle.language, "eng")
    XCTAssertEqual(subtitle.title, "Signs")
    XCTAssertTrue(subtitle.isForced)
    XCTAssertFalse(subtitle.isDefault)
    XCTAssertTrue(subtitle.isText)

    // The same dispositions as ffprobe sees them.
    let probed = try FFprobe.streams(path)
    for (index, isDefault) in [(1, english.isDefault), (2, japanese.isDefault), (3, subtitle.isDefault)] {
      let disposition = probed[index]["disposition"] as? [String: Any]
      XCTAssertEqual(disposition?["default"] as? Int, isDefault ? 1 : 0, "stream \(index) default")
    }
    XCTAssertEqual((probed[3]["disposition"] as? [String: Any])?["forced"] as? Int, 1)
  }

  func testAnamorphicVideoIsShownWiderThanStored() throws {
    let path = try Media.anamorphic()
    let video = try XCTUnwrap(MediaSource(path).info.video.first)
    XCTAssertEqual(try probedStream(path, 0)["sample_aspect_ratio"] as? String, "2:1", "ffmpeg made it anamorphic")
    XCTAssertEqual(video.width, 320)
    XCTAssertEqual(video.height, 240)
    XCTAssertEqual(video.sampleAspectRatio, "2:1")
    XCTAssertEqual(video.displayWidth, 640)
    XCTAssertEqual(video.displayHeight, 240)

    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let frame = try XCTUnwrap(pipeline.nextFrame())
    XCTAssertEqual(frame.width, 320)
    XCTAssertEqual(frame.sampleAspect, 2, accuracy: 1e-9)
    XCTAssertEqual(frame.displayAspect, 640.0 / 240, accuracy: 1e-9)
  }

  /// ffmpeg 5.1 writes `-metadata:s:v:0 rotate=90` under `-c copy` as a display matrix that ffprobe prints as
  /// rotation 90 (counter-clockwise), so ffmpeg's own autorotation turns the picture a quarter counter-clockwise:
  /// 270 degrees clockwise. The test takes ffprobe's matrix and ffmpeg's rendering as the truth.
  func testRotatedMP4ReportsTheTurnFFmpegShowsAndSwapsTheDisplaySize() throws {
    let path = try Media.rotated()
    let counterClockwise = try XCTUnwrap(FFprobe.rotation(path), "ffmpeg wrote no display matrix")
    XCTAssertEqual(abs(counterClockwise), 90, "a quarter turn either way")
    let expectedClockwise = ((-counterClockwise % 360) + 360) % 360

    let video = try XCTUnwrap(MediaSource(path).info.video.first)
    XCTAssertEqual(video.rotation, expectedClockwise, "degrees clockwise")
    XCTAssertEqual(video.width, 320)
    XCTAssertEqual(video.height, 240)
    XCTAssertEqual(video.displayWidth, 240)
    XCTAssertEqual(video.displayHeight, 320)

    let pipeline = try MediaPipeline(source: path)
    defer { pipeline.close() }
    let frame = try XCTUnwrap(pipeline.nextFrame())
    XCTAssertEqual(frame.rotation, expectedClockwise)
    XCTAssertEqual(frame.displayAspect, 240.0 / 320, accuracy: 1e-9)

    // Independent of sign conventions: turning the stored picture by `rotation` clockwise must give what
    // ffmpeg shows, and turning it the other way must not.
    let stored = try RGBImage(png: path, ffmpegInputOptions: ["-noautorotate"])
    let shown = try RGBImage(png: path)
    XCTAssertEqual(shown.width, 240)
    XCTAssertEqual(shown.height, 320)
    let right = meanDistance(shown, stored, turnedClockwise: video.rotation)
    let wrong = meanDistance(shown, stored, turnedClockwise: (video.rotation + 180) % 360)
    XCTAssertLessThan(right, 4, "the picture turned by \(video.rotation)° clockwise should match ffmpeg's")
    XCTAssertGreaterThan(wrong, 20, "the test picture should tell the two directions apart")
  }

  func testProbeJSONIsValidAndNamesEveryField() throws {
    let path = try Clips.hevcHDR10()
    let text = try MediaSource(path).info.json()
    let object = try XCTUnwrap(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "json() should be an object: \(text)")
    XCTAssertEqual(object["source"] as? String, path)
    XCTAssertEqual(object["container"] as? String, "matroska,webm")
    XCTAssertNotNil(object["duration_ms"] as? Int)
    let video = try XCTUnwrap((object["video"] as? [[String: Any]])?.first)
    for key in [
      "index", "codec", "profile", "width", "height", "frame_rate", "sample_aspect_ratio", "rotation",
      "display_width", "display_height", "pixel_format", "bit_depth", "color_primaries", "color_transfer",
      "color_matrix", "color_range", "effective_color", "mastering", "max_cll", "max_fall", "is_default",
    ] {
      XCTAssertNotNil(video[key], "video.\(key) missing from \(text)")
    }
    let mastering = try XCTUnwrap(video["mastering"] as? [String: Any])
    XCTAssertEqual(mastering["max_luminance"] as? Double, 1000)
    XCTAssertNotNil(mastering["white_point"] as? [String: Any])
    XCTAssertEqual(video["max_cll"] as? Int, 1000)
    XCTAssertEqual((video["effective_color"] as? [String: Any])?["transfer"] as? String, "smpte2084")
    XCTAssertEqual((object["audio"] as? [Any])?.count, 0, "no audio tracks: an empty list")

    let multi = try MediaSource(try Media.multiTrack()).info.json()
    let multiObject = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(multi.utf8)) as? [String: Any])
    let audio = try XCTUnwrap(multiObject["audio"] as? [[String: Any]])
    XCTAssertEqual(audio.map { $0["language"] as? String }, ["eng", "jpn"])
    for key in ["index", "codec", "channels", "sample_rate", "title", "is_default"] {
      XCTAssertNotNil(audio.first?[key], "audio.\(key) missing from \(multi)")
    }
    let subtitle = try XCTUnwrap((multiObject["subtitles"] as? [[String: Any]])?.first)
    XCTAssertEqual(subtitle["is_forced"] as? Bool, true)
    XCTAssertEqual(subtitle["is_text"] as? Bool, true)
    XCTAssertEqual(subtitle["language"] as? String, "eng")
  }

  // MARK: helpers

  private func assertDurationMatchesFFprobe(
    _ info: MediaInfo, _ path: String, expected seconds: Double, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let ms = try XCTUnwrap(info.durationMs, "no duration", file: file, line: line)
    XCTAssertEqual(Double(ms) / 1000, seconds, accuracy: 0.1, "duration", file: file, line: line)
    let format = try FFprobe.json(path)["format"] as? [String: Any]
    let probed = try XCTUnwrap(Double(format?["duration"] as? String ?? ""), file: file, line: line)
    XCTAssertEqual(Double(ms), probed * 1000, accuracy: 1, "duration against ffprobe's", file: file, line: line)
  }

  private func assertChromaticity(
    _ c: HDRMetadata.Chromaticity, _ x: Double, _ y: Double, _ name: String, file: StaticString = #filePath,
    line: UInt = #line
  ) {
    XCTAssertEqual(c.x, x, accuracy: 1e-6, "\(name) x", file: file, line: line)
    XCTAssertEqual(c.y, y, accuracy: 1e-6, "\(name) y", file: file, line: line)
  }

  /// Mean per-pixel distance between `shown` and `stored` turned `degrees` clockwise.
  private func meanDistance(_ shown: RGBImage, _ stored: RGBImage, turnedClockwise degrees: Int) -> Double {
    let (w, h) = (stored.width, stored.height)
    var total = 0
    var count = 0
    for y in 0..<shown.height {
      for x in 0..<shown.width {
        let source: (Int, Int)
        switch degrees {
        case 90: source = (y, h - 1 - x)
        case 180: source = (w - 1 - x, h - 1 - y)
        case 270: source = (w - 1 - y, x)
        default: source = (x, y)
        }
        guard source.0 >= 0 && source.0 < w && source.1 >= 0 && source.1 < h else { return .infinity }
        total += shown.pixel(x: x, y: y).distance(to: stored.pixel(x: source.0, y: source.1))
        count += 1
      }
    }
    return Double(total) / Double(max(count, 1))
  }
}
