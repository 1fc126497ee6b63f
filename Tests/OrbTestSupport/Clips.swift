import Foundation

/// Clips with known colours, shared by the renderer's and the app's tests.
public enum Clips {
  /// 100% bars, 80 px each on a 640x240 picture: white, yellow, cyan, green, magenta, red, blue, black.
  public static let bars: [RGB] = [.white, .yellow, .cyan, .green, .magenta, .red, .blue, .black]

  /// A lossless H.264 clip of `bars`, converted from RGB by swscale with `matrix` ("bt709", "bt601") and
  /// `range` ("tv", "pc"), and tagged with `tag` ("bt709", "smpte170m").
  public static func bars(matrix: String, range: String, tag: String) throws -> String {
    let graph = barsGraph(then: "scale=out_color_matrix=\(matrix):out_range=\(range),format=yuv420p")
    return try TestMedia.path(
      "bars-\(matrix)-\(range).mp4",
      [
        "-filter_complex", graph, "-frames:v", "5", "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast",
        "-colorspace", tag, "-color_range", range == "pc" ? "pc" : "tv", "-color_primaries",
        tag == "bt709" ? "bt709" : "smpte170m", "-color_trc", tag == "bt709" ? "bt709" : "smpte170m",
      ])
  }

  /// An ffmpeg filter graph of `bars` as RGB, 640x240, followed by `then` (a conversion and a `format=`).
  public static func barsGraph(then: String) -> String {
    let sources = bars.enumerated().map { i, c in
      String(format: "color=c=0x%02X%02X%02X:s=80x240:d=1:r=25,format=rgb24[c%d]", c.r, c.g, c.b, i)
    }
    let stack = (0..<8).map { "[c\($0)]" }.joined()
    return sources.joined(separator: ";") + ";\(stack)hstack=inputs=8,\(then)"
  }

  /// Left half red, right half blue, 320x240 BT.709 lossless H.264; `filters` are appended (e.g. ",setsar=2").
  public static func halves(_ name: String, filters: String = "") throws -> String {
    try TestMedia.path(
      name,
      [
        "-filter_complex",
        "color=c=red:s=160x240:d=1:r=25,format=rgb24[l];color=c=blue:s=160x240:d=1:r=25,format=rgb24[r];"
          + "[l][r]hstack=inputs=2,scale=out_color_matrix=bt709:out_range=tv,format=yuv420p\(filters)",
        "-frames:v", "5", "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-colorspace", "bt709",
        "-color_range", "tv",
      ])
  }

  /// `seconds` of a tone in `name`'s container with an attached picture of `size` (WxH: red on the left half, blue on
  /// the right) coded by `picture` (png, mjpeg) as its cover; `audio` codes the tone. Tagged "Orb Song" by "The
  /// Testers".
  public static func song(
    _ name: String, cover size: (Int, Int), picture: String, audio: String, seconds: Int = 1
  ) throws -> String {
    let (w, h) = size
    return try TestMedia.path(
      name,
      [
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-f", "lavfi", "-i",
        "color=c=red:size=\(w)x\(h):duration=1,drawbox=x=\(w / 2):y=0:w=\(w / 2):h=\(h):color=blue:t=fill",
        "-map", "0", "-map", "1", "-frames:v", "1", "-c:a", audio, "-c:v", picture, "-disposition:v", "attached_pic",
        "-metadata", "title=Orb Song", "-metadata", "artist=The Testers",
      ])
  }

  /// `moving(seconds: 12)` in Matroska with three chapters: "Opening" from 0, "Middle" from 4 s, "End" from 8 s.
  public static func chaptered() throws -> String {
    var metadata = ";FFMETADATA1\n"
    for (start, title) in [(0, "Opening"), (4000, "Middle"), (8000, "End")] {
      metadata += "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(start)\nEND=\(start + 4000)\ntitle=\(title)\n"
    }
    let chapters = try TestMedia.file(named: "chapters-3.txt", contents: metadata)
    return try TestMedia.path(
      "chaptered-12s.mkv",
      ["-i", try moving(seconds: 12), "-i", chapters, "-map", "0", "-map_chapters", "1", "-c", "copy"])
  }

  /// A white bar 40 px wide crossing black at 600 px a second (its left edge at `mod(t * 600, 680)`), 720x576, 2 s:
  /// filmed at 50 pictures a second and woven two by two into 25 interlaced H.264 pictures (top field first,
  /// coded as fields), as a TV recording is; `progressive`: the same 25 pictures neither woven nor marked.
  public static func interlacedBar(progressive: Bool = false) throws -> String {
    let bar =
      "color=black:s=720x576:r=50,format=yuv420p[bg];color=white:s=40x576:r=50[bar];"
      + "[bg][bar]overlay=x='mod(t*600,680)':y=0"
    let weave = progressive ? ["-vf", "fps=25"] : ["-vf", "tinterlace=mode=interleave_top,setfield=tff"]
    let coding =
      progressive ? ["-x264-params", "log-level=error"] : ["-flags", "+ildct+ilme", "-x264-params", "tff=1"]
    return try TestMedia.path(
      progressive ? "bar-25p.mkv" : "bar-25i.mkv",
      ["-f", "lavfi", "-i", bar, "-t", "2"] + weave + ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"]
        + coding)
  }

  /// ffmpeg's inputs for `seconds` of a moving 320x240 testsrc2 at 25 fps and a 440 Hz tone at 48 kHz: the usual
  /// picture and sound of a clip, before its codecs.
  public static func pictureAndTone(seconds: Int) -> [String] {
    [
      "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=\(seconds)", "-f", "lavfi", "-i",
      "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
    ]
  }

  /// A 640x360 H.264 clip of testsrc2 (moving, with a frame counter) of `seconds`, 30 fps.
  public static func moving(seconds: Int = 3) throws -> String {
    try TestMedia.path(
      "moving-\(seconds)s.mp4",
      [
        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=\(seconds)", "-c:v", "libx264", "-preset",
        "veryfast", "-pix_fmt", "yuv420p",
      ])
  }

  /// HEVC Main 10 in Matroska with HDR10 static metadata in SEI (x265's master-display and max-cll parameters): a
  /// second of 320x240 testsrc2 at 24 fps.
  public static func hevcHDR10() throws -> String {
    try TestMedia.path(
      "hevc10-hdr10.mkv",
      [
        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=24", "-t", "1", "-vf", "format=yuv420p10le", "-c:v",
        "libx265", "-preset", "ultrafast", "-x265-params",
        "hdr10=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc"
          + ":master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1)"
          + ":max-cll=1000,400:log-level=error",
      ])
  }
}
