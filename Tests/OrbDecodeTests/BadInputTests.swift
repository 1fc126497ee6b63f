import Foundation
import OrbDecode
import OrbTestSupport
import XCTest

/// Files a user might hand the player by mistake: each is a `MediaError` with words they can act on, never a crash.
final class BadInputTests: XCTestCase {
  /// What is opened as a URL and what as a local path: a scheme (a letter, then letters, digits, + . -) and `://`.
  func testURLsAreToldFromPaths() {
    for url in ["https://example.com/a.mkv", "test://bars", "file:///tmp/a.mkv", "HTTP://X", "a+b.c-d://x", "rtmp://h"]
    {
      XCTAssertTrue(MediaSource.isURL(url), url)
    }
    for path in [
      "/tmp/a://b.mkv", "movie.mkv", "1abc://x", "://x", "http:/x", "c:/films/a.mkv", "a:b://x",
      "my film: part 2.mkv", "", "h_ttp://x",
    ] {
      XCTAssertFalse(MediaSource.isURL(path), path)
    }
  }

  /// What the window and the host call a source: the file's name; standard input and bash's <(…) pipes by what
  /// they are (a pipe's number alone, "63", said nothing).
  func testSourcesAreNamedForPeople() {
    XCTAssertEqual(MediaSource.displayName("/films/a b.mkv"), "a b.mkv")
    XCTAssertEqual(MediaSource.displayName("-"), "standard input")
    XCTAssertEqual(MediaSource.displayName("/dev/fd/63"), "pipe (/dev/fd/63)")
    XCTAssertEqual(MediaSource.displayName("https://h/films/A%20b.mkv?api_key=k1"), "A b.mkv")
  }

  /// A URL as it is shown and told: without a password in it, nor a media server's sign-in in its query; the rest as
  /// given, and anything else untouched.
  func testAURLIsShownWithoutItsSecrets() {
    let cases = [
      ("http://qa:pw-5521@127.0.0.1:18080/basic/f.mp4", "http://127.0.0.1:18080/basic/f.mp4"),
      ("https://u@h/a@b.mkv", "https://h/a@b.mkv"),
      (
        "https://jf.example/Videos/1/stream?Static=true&api_key=abc123&MediaSourceId=9",
        "https://jf.example/Videos/1/stream?Static=true&api_key=***&MediaSourceId=9"
      ),
      (
        "http://p:32400/library/parts/1/file.mkv?X-Plex-Token=zz#t=5",
        "http://p:32400/library/parts/1/file.mkv?X-Plex-Token=***#t=5"
      ),
      ("http://h/f.mkv?a=1&&tokens=2&access%5Ftoken=q", "http://h/f.mkv?a=1&&tokens=2&access%5Ftoken=***"),
      ("http://h/f.mkv", "http://h/f.mkv"),
      ("/films/a@b:c.mkv", "/films/a@b:c.mkv"),
      ("-", "-"),
    ]
    for (given, shown) in cases { XCTAssertEqual(MediaSource.withoutSecrets(given), shown, given) }
    let error = MediaError(.signIn, source: cases[0].0, reason: "the server refused access")
    XCTAssertEqual(error.description, "cannot open 'http://127.0.0.1:18080/basic/f.mp4': the server refused access")
    XCTAssertEqual(error.source, cases[0].0, "the source itself is kept for asking the server again")
    let probe = MediaInfo(source: cases[0].0, container: "mov,mp4,m4a,3gp,3g2,mj2").json()
    XCTAssertTrue(probe.contains("\"source\" : \"http://127.0.0.1:18080/basic/f.mp4\""), probe)
  }

  func testMissingFileSaysNoSuchFile() {
    let path = "\(TestMedia.directory)/no-such-clip-\(UUID().uuidString).mkv"
    assertOpenFails(path, kind: .missing, reasonContains: "no such file")
    do {
      _ = try MediaSource(path)
    } catch let error as MediaError {
      XCTAssertEqual(error.reason, "no such file")
      XCTAssertEqual(error.description, "cannot open '\(path)': no such file")
    } catch {
      XCTFail("\(error)")
    }
  }

  func testMissingFolderInPathIsMissing() {
    assertOpenFails("\(TestMedia.directory)/no-such-folder/clip.mp4", kind: .missing, reasonContains: "no such file")
  }

  func testDirectoryIsNotAMediaFile() {
    assertOpenFails(TestMedia.directory, kind: .unplayable, reasonContains: "directory")
  }

  func testEmptyFile() throws {
    let path = try TestMedia.file(named: "empty.mp4", contents: Data())
    assertOpenFails(path, kind: .unplayable, reasonContains: "empty file")
  }

  /// A file of the kernel's says it is empty (size 0) and is not: it is called what it is not, media.
  func testAKernelFileIsNotCalledEmpty() {
    assertOpenFails("/proc/self/status", kind: .unplayable, reasonContains: "not a media file")
  }

  func testTextFileNamedMKV() throws {
    let text = String(repeating: "This is a shopping list, not a film.\nMilk, eggs, bread.\n", count: 40)
    let path = try TestMedia.file(named: "notes.mkv", contents: text)
    assertOpenFails(path, kind: .unplayable)
  }

  func testRandomBytesNamedMP4() throws {
    // The same noise every run (SplitMix64, a fixed seed): FFmpeg's probe takes some draws of noise for a raw H.263
    // stream, so fresh noise each run failed now and then.
    var rng = SplitMix64(seed: 0x0dd_b1a5)
    let bytes = Data((0..<65536).map { _ in UInt8(truncatingIfNeeded: rng.next() >> 56) })
    let path = try TestMedia.file(named: "random.mp4", contents: bytes)
    assertOpenFails(path, kind: .unplayable)
  }

  func testTruncatedMP4WithoutItsIndexIsUnplayable() throws {
    // ffmpeg writes the moov box (the index) last unless told +faststart; cut early, the file has no index.
    let full = try Media.h264()
    let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: full)[.size] as? Int)
    let path = try TestMedia.truncated(full, bytes: min(100_000, size / 2))
    let head = try Data(contentsOf: URL(fileURLWithPath: path))
    XCTAssertNil(head.range(of: Data("moov".utf8)), "the cut copy should hold no moov box")
    assertOpenFails(path, kind: .unplayable)
  }

  func testHugeY4MHeaderDoesNotCrash() throws {
    // Claims 100000x100000 pictures (15 GB each) with no data behind it.
    let path = try TestMedia.file(
      named: "huge.y4m", contents: "YUV4MPEG2 W100000 H100000 F25:1 Ip A1:1 C420jpeg\nFRAME\n")
    do {
      let source = try MediaSource(path)
      // Opening may succeed (the header is well formed); decoding must then fail cleanly or end.
      if let pipeline = try? MediaPipeline(media: source) {
        let (_, finished) = decodeAll(pipeline, timeout: 30)
        pipeline.close()
        XCTAssertTrue(finished, "a header with no pictures should end, not hang")
      }
    } catch let error as MediaError {
      XCTAssertEqual(error.kind, .unplayable, "\(error)")
    }
  }
}
