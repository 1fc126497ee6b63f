import Foundation
import XCTest

@testable import OrbDecode

/// Which subtitle tracks a viewer can choose, what they are called, and which one playback starts with.
final class SubtitleChoiceTests: XCTestCase {
  private var folder = ""

  override func setUpWithError() throws {
    folder = NSTemporaryDirectory() + "orb-choice-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for name in ["film.mkv", "film.en.srt", "film.de.forced.ass", "other.srt"] {
      XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder)/\(name)", contents: Data("x".utf8)))
    }
  }

  override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

  private func info(subtitles: [SubtitleStreamInfo]) -> MediaInfo {
    var info = MediaInfo(source: "\(folder)/film.mkv", container: "matroska,webm")
    info.subtitles = subtitles
    return info
  }

  private func stream(_ index: Int, _ codec: String, _ language: String?, title: String? = nil, isDefault: Bool = false)
    -> SubtitleStreamInfo
  {
    SubtitleStreamInfo(
      index: index, codec: codec, language: language, title: title, isDefault: isDefault, isForced: false,
      isText: codec != "hdmv_pgs_subtitle")
  }

  func testTheMediasStreamsComeFirstThenSidecarsThenGivenFiles() {
    let extra = "\(folder)/other.srt"
    let tracks = SubtitleChoice.list(
      info: info(subtitles: [stream(2, "subrip", "eng"), stream(3, "hdmv_pgs_subtitle", "fre", title: "Commentary")]),
      files: [extra])
    XCTAssertEqual(
      tracks.map(\.displayName),
      ["English (SRT)", "French, “Commentary” (PGS)", "German, forced (ASS)", "English (SRT)", "SRT"])
    XCTAssertEqual(tracks[0].origin, .embedded(index: 2))
    XCTAssertEqual(tracks[2].origin, .file(path: "\(folder)/film.de.forced.ass"))
    XCTAssertEqual(tracks[4].origin, .file(path: extra))
  }

  /// A file:// URL is local: its sidecars are listed, as for the path it names (a name that is not UTF-8 travels as
  /// one, `SubtitlePartsTests.testSidecarsOfAVideoNamedInLatin1`).
  func testAFileURLHasItsSidecars() {
    let url = MediaSource.fileURL(absolute: Array("\(folder)/film.mkv".utf8))
    let local = MediaInfo(source: url, container: "matroska")
    XCTAssertEqual(
      SubtitleChoice.list(info: local, files: []).map(\.displayName), ["German, forced (ASS)", "English (SRT)"])
  }

  func testNetworkMediaHasNoSidecars() {
    var remote = MediaInfo(source: "https://example.com/film.mkv", container: "matroska,webm")
    remote.subtitles = [stream(2, "subrip", nil)]
    XCTAssertEqual(SubtitleChoice.list(info: remote, files: []).count, 1)
  }

  func testTheStartChoiceFollowsSidThenFilesThenForcedThenDefault() {
    let tracks = SubtitleChoice.list(info: info(subtitles: [stream(2, "subrip", "eng")]), files: [])
    // A forced sidecar wins over the default ones.
    XCTAssertEqual(SubtitleChoice.initial(tracks, request: .automatic, files: []), 2)
    XCTAssertNil(SubtitleChoice.initial(tracks, request: .off, files: []))
    XCTAssertEqual(SubtitleChoice.initial(tracks, request: .track(3), files: []), 3)
    XCTAssertNil(SubtitleChoice.initial(tracks, request: .track(9), files: []), "a track that is not there is none")
    let extra = "\(folder)/other.srt"
    let withFile = SubtitleChoice.list(info: info(subtitles: []), files: [extra])
    XCTAssertEqual(SubtitleChoice.initial(withFile, request: .automatic, files: [extra]), 3, "--sub-file is asked for")
    // Without sidecars: only a stream marked default or forced shows unasked.
    var bare = MediaInfo(source: "https://example.com/film.mkv", container: "matroska,webm")
    bare.subtitles = [stream(2, "subrip", "eng"), stream(3, "subrip", "fre")]
    XCTAssertNil(SubtitleChoice.initial(SubtitleChoice.list(info: bare, files: []), request: .automatic, files: []))
    bare.subtitles = [stream(2, "subrip", "eng"), stream(3, "subrip", "fre", isDefault: true)]
    XCTAssertEqual(
      SubtitleChoice.initial(SubtitleChoice.list(info: bare, files: []), request: .automatic, files: []), 2)
  }
}
