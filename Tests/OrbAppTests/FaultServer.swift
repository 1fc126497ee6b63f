import Foundation
import OrbTestSupport
import XCTest

/// A Python HTTP server on a free loopback port, running `script` with `arguments`; the script prints its port.
/// Stopped with `stop()` (or when the test ends, by the caller's defer); neither starting nor stopping waits for
/// ever.
final class LoopbackServer {
  let process = Child()
  let port: Int
  private let file: String

  /// - Parameter timeout: seconds to wait for the script to print its port (python3 starts slowly on a loaded
  ///   machine, but a script that hangs before listening must not hold the test).
  init(script: String, arguments: [String], timeout: Double = 20) throws {
    file = NSTemporaryDirectory() + "orb-server-\(UUID().uuidString).py"
    try script.write(toFile: file, atomically: true, encoding: .utf8)
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", file] + arguments
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let line = Self.firstLine(of: out.fileHandleForReading.fileDescriptor, timeout: timeout)
    port = line.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
    if port == 0 {
      Self.end(process, script: file)
      throw TestMediaError("the test HTTP server did not print its port within \(timeout) s (its stderr says why)")
    }
  }

  /// The first line written to `fd`, or nil when it ends first or `timeout` seconds pass.
  private static func firstLine(of fd: Int32, timeout: Double) -> String? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    var bytes: [UInt8] = []
    while bytes.last != 10 {
      let left = deadline.timeIntervalSinceNow
      guard left > 0 else { return nil }
      var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let n = poll(&ready, 1, Int32(min(left, 0.5) * 1000) + 1)
      if n < 0 && errno != EINTR { return nil }
      guard n > 0 else { continue }
      var byte: UInt8 = 0
      guard read(fd, &byte, 1) == 1 else { return nil }  // the script ended before it listened
      bytes.append(byte)
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  func stop() { Self.end(process, script: file) }

  /// SIGTERM, up to 5 s to go, then SIGKILL and up to 5 s more; removes the script.
  private static func end(_ process: Child, script: String) {
    for signal in [SIGTERM, SIGKILL] where process.isRunning {
      process.signal(signal)
      let deadline = Date(timeIntervalSinceNow: 5)
      while process.isRunning && Date() < deadline { usleep(20_000) }
    }
    try? FileManager.default.removeItem(atPath: script)
  }

  deinit { stop() }
}

/// One HTTP server for every way a network source fails, on the loopback (127.0.0.1 only): it serves the files of a
/// folder with range requests, logs each request (its path and headers) as a JSON line, and answers by the first
/// part of the path, `/MODE/NAME` (`NAME` a file of the folder; `/NAME` alone is `/file/NAME`):
///
/// - `file`: the file, with range requests (401 without the header `--need` names, `"Name: value"`, when given);
///   `norange`: the whole file whatever the `Range` (a server that cannot seek); `token`: 401 unless
///   `Authorization: Bearer <--token>`, else the file;
/// - three digits (`401`, `403`, `404`, `410`, `400`, `503`…): that status, always;
/// - `500-once`: 500 the first time the path is asked for, the file after; `503-for`: 503 for `--down` seconds from
///   the first request of the path, the file after; `503-while`: 503 while the folder holds `NAME.down`, the file
///   after (the test says when the server is back);
/// - `stall`: the first answer that covers the byte at `--cut` (a fraction of the file) stops there for `--stall`
///   seconds, then sends the rest; `disconnect`: that answer ends there and closes the connection (and the path
///   answers 503 for `--down` seconds after, -1: for good; each of those answers `--slow` seconds late; with
///   `--moved`, every later answer is a redirect to `--other` + `/file/NAME`; with `--moved-home`, to this server's
///   `http://127.0.0.1:PORT/file/NAME`; `--moved-name` names another file of the folder there); `reset`: the same,
///   closed with a TCP reset (SO_LINGER 0).
///   `--cut` may list fractions ("0.3,0.7"): a break at each in turn. Each break is logged with the byte (`cut`);
///   `shrunk`: `disconnect`'s break, after which the file is cut short there (a part past it is a 416); `short`:
///   every answer says it sends the rest of the file and ends at the first `--cut` (a server that always breaks
///   there);
/// - `trickle`: the file (or playlist) at `--rate` bytes a second;
/// - `silent`: no answer at all for a minute (a server that accepted the connection and hangs);
/// - `page`: a web page (a sign-in form) with 200; `html`: the file, as `file` serves it, labelled `text/html`;
/// - `setcookie`: a redirect to `/needcookie/NAME` that sets a session cookie; `needcookie`: 403 without it, the
///   file with it (a sign-in that hands over a session on the way);
/// - `here`: a redirect to `/file/NAME` on this host; `elsewhere`: one to `--other` + `/file/NAME` (by default this
///   server under its other loopback name, `http://localhost:PORT`: another host to the player; `?to=MODE`:
///   `/MODE/NAME` there); `loop-a` and `loop-b` redirect to each other for ever;
/// - `live`: an `.m3u8` of the folder as a live playlist: a window of `--live-window` segments that slides one
///   segment on every segment's length from the first request, starting with `--live-start` published, with no
///   `#EXT-X-ENDLIST` until all of them are; with `--live-stop N`, the first N segments and then no change and no
///   end mark ever (a stream whose packager stopped).
///
/// A playlist (`.m3u8`) has its segment lines rewritten by its query: `?segments=other` puts them at
/// `--other`/file/, `?segments=elsewhere` at this host's `/elsewhere/` (each a redirect to `--other`), any other value
/// is a prefix; `?missing=NAME` (repeatable) makes that segment a 404.
///
/// Every wait is bounded: sockets time out after 30 s, a stall lasts `--stall` s, and the server exits by itself when
/// the test process that started it is gone or after `--lifetime` seconds.
final class FaultServer {
  static let script = #"""
    import argparse, http.server, json, os, re, socket, struct, sys, threading, time, urllib.parse

    p = argparse.ArgumentParser()
    p.add_argument("folder")
    p.add_argument("log")
    p.add_argument("--other", default="")
    p.add_argument("--cut", default="0.5")
    p.add_argument("--stall", type=float, default=6)
    p.add_argument("--down", type=float, default=0)
    p.add_argument("--slow", type=float, default=0)
    p.add_argument("--moved", action="store_true")
    p.add_argument("--moved-home", action="store_true")
    p.add_argument("--moved-name", default="")
    p.add_argument("--rate", type=int, default=10000)
    p.add_argument("--token", default="orb-test")
    p.add_argument("--need", default="")
    p.add_argument("--live-window", type=int, default=5)
    p.add_argument("--live-start", type=int, default=6)
    p.add_argument("--live-stop", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=900)
    p.add_argument("--parent", type=int, default=0)
    p.add_argument("--tls", default="")
    p.add_argument("--retry-after", default="")
    a = p.parse_args()
    cuts = [float(c) for c in a.cut.split(",")]
    lock = threading.Lock()
    paths = {}
    types = {".mp4": "video/mp4", ".m4a": "audio/mp4", ".mkv": "video/x-matroska", ".mka": "audio/x-matroska",
             ".ts": "video/mp2t", ".m3u8": "application/vnd.apple.mpegurl"}

    def log(entry):
        with lock, open(a.log, "a") as f:
            f.write(json.dumps(dict(entry, time=time.time())) + "\n")

    def watchdog():
        parent, started = a.parent or os.getppid(), time.time()
        while os.path.exists("/proc/%d" % parent) and time.time() - started < a.lifetime:
            time.sleep(0.5)
        os._exit(0)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30

        def log_message(self, *args):
            pass

        def do_GET(self):
            log({"path": self.path, "headers": dict(self.headers)})
            try:
                self.answer()
            except (OSError, socket.timeout):
                self.close_connection = True

        def plain(self, code, body=b"", kind="text/plain", extra=()):
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in extra:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def redirect(self, to):
            self.plain(302, extra=[("Location", to)])

        def answer(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            parts = url.path.lstrip("/").split("/", 1)
            mode, name = (parts[0], parts[1]) if len(parts) == 2 else ("file", parts[0])
            with lock:
                state = paths.setdefault(url.path, {"hits": 0, "cuts": 0, "down_since": None, "first": time.time()})
                state["hits"] += 1
                hits = state["hits"]
            if re.fullmatch(r"[1-5][0-9][0-9]", mode):
                return self.plain(int(mode), ("status %s\n" % mode).encode())
            if mode == "500-once" and hits == 1:
                return self.plain(500)
            if mode == "503-for" and time.time() - state["first"] < a.down:
                return self.plain(503, extra=[("Retry-After", a.retry_after)] if a.retry_after else [])
            if mode == "setcookie":
                to = "/needcookie/" + name + ("?" + url.query if url.query else "")
                return self.plain(302, extra=[("Location", to), ("Set-Cookie", "sess=abc123; Path=/")])
            if mode == "needcookie" and "sess=abc123" not in self.headers.get("Cookie", ""):
                return self.plain(403)
            if mode == "token" and self.headers.get("Authorization") != "Bearer " + a.token:
                return self.plain(401)
            if mode == "file" and a.need and self.headers.get(a.need.split(":")[0]) != a.need.split(":", 1)[1].strip():
                return self.plain(401)
            if mode == "silent":
                time.sleep(60)
                self.close_connection = True
                return
            if mode == "page":
                return self.plain(200, b"<html><body><form>Sign in</form></body></html>\n", "text/html")
            if mode == "here":
                return self.redirect("/file/" + name)
            if mode == "elsewhere":
                return self.redirect(other + "/" + query.get("to", ["file"])[0] + "/" + name)
            if mode in ("loop-a", "loop-b"):
                return self.redirect("/%s/%s" % ("loop-b" if mode == "loop-a" else "loop-a", name))
            path = os.path.join(a.folder, os.path.normpath("/" + name).lstrip("/"))
            if mode == "503-while" and os.path.exists(path + ".down"):
                return self.plain(503)
            if not os.path.isfile(path):
                return self.plain(404)
            if path.endswith(".m3u8"):
                return self.playlist(mode, path, query, state)
            self.media(mode, path, state, url.path)

        def playlist(self, mode, path, query, state):
            lines = open(path).read().splitlines()
            if mode == "live":
                lines = live(lines, state)
            where = query.get("segments", [""])[0]
            prefix = {"other": other + "/file/", "elsewhere": "/elsewhere/"}.get(where, where)
            missing = set(query.get("missing", []))
            lines = [l if not l or l.startswith("#") else ("/404/" + l if l in missing else prefix + l) for l in lines]
            body = ("\n".join(lines) + "\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", types[".m3u8"])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.send(mode, body)

        def send(self, mode, body):
            if mode != "trickle":
                return self.wfile.write(body)
            step = max(1, a.rate // 10)
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                self.wfile.flush()
                time.sleep(step / a.rate)

        def media(self, mode, path, state, key):
            since = state["down_since"]
            if since is not None and a.slow > 0:
                time.sleep(a.slow)
            if since is not None and (a.moved or a.moved_home):
                home = "http://127.0.0.1:%d" % port
                name = a.moved_name or os.path.basename(path)
                return self.redirect((home if a.moved_home else other) + "/file/" + name)
            if since is not None and (a.down < 0 or time.time() - since < a.down):
                return self.plain(503)
            data = open(path, "rb").read()
            if mode == "short":  # every answer claims the whole file and ends at the cut
                data = open(path, "rb").read()
                m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
                first = int(m.group(1)) if m else 0
                cut = int(len(data) * cuts[0])
                self.send_response(206 if m else 200)
                self.send_header("Content-Type", types.get(os.path.splitext(path)[1], "application/octet-stream"))
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(data) - first))
                if m:
                    self.send_header("Content-Range", "bytes %d-%d/%d" % (first, len(data) - 1, len(data)))
                self.end_headers()
                if first < cut:
                    self.wfile.write(data[first:cut])
                self.close_connection = True
                return
            if mode == "shrunk" and state["cuts"] > 0:
                data = data[:int(len(data) * cuts[0])]  # its copy is cut short since
            m = None if mode == "norange" else re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
            first = int(m.group(1)) if m else 0
            last = min(int(m.group(2)), len(data) - 1) if m and m.group(2) else len(data) - 1
            if first >= len(data):
                return self.plain(416, extra=[("Content-Range", "bytes */%d" % len(data))])
            self.send_response(206 if m else 200)
            kind = types.get(os.path.splitext(path)[1], "application/octet-stream")
            self.send_header("Content-Type", "text/html" if mode == "html" else kind)
            if mode != "norange":
                self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(last + 1 - first))
            if m:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(data)))
            self.end_headers()
            body = data[first:last + 1]
            stop = None
            if mode in ("stall", "disconnect", "reset", "shrunk"):
                with lock:
                    at = int(len(data) * cuts[state["cuts"]]) if state["cuts"] < len(cuts) else -1
                    if first < at <= last:
                        stop = at
                        state["cuts"] += 1
            if stop is None:
                return self.send(mode, body)
            self.wfile.write(body[:stop - first])
            self.wfile.flush()
            log({"cut": stop, "of": key})
            if mode == "stall":
                time.sleep(a.stall)
                self.wfile.write(body[stop - first:])
                return
            with lock:
                state["down_since"] = time.time()
            self.close_connection = True
            if mode == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()

    def live(lines, state):
        head = [l for l in lines if l.startswith("#") and not l.startswith(("#EXTINF", "#EXT-X-ENDLIST",
                "#EXT-X-PLAYLIST-TYPE", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-DISCONTINUITY"))]
        segments = [(lines[i], lines[i + 1]) for i in range(len(lines) - 1) if lines[i].startswith("#EXTINF")]
        length = float(segments[0][0].split(":")[1].split(",")[0])
        published = min(len(segments), a.live_start + int((time.time() - state["first"]) / length))
        if a.live_stop:
            return head + ["#EXT-X-MEDIA-SEQUENCE:0"] + [l for s in segments[:min(published, a.live_stop)] for l in s]
        start = max(0, published - a.live_window)
        out = head + ["#EXT-X-MEDIA-SEQUENCE:%d" % start] + [l for s in segments[start:published] for l in s]
        return out + (["#EXT-X-ENDLIST"] if published == len(segments) else [])

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

    threading.Thread(target=watchdog, daemon=True).start()
    server = Server(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    if a.tls:  # HTTPS, with the certificate and key in that file; a failed handshake is the client's business
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(a.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.handle_error = lambda request, address: None
    other = a.other or "%s://localhost:%d" % ("https" if a.tls else "http", port)
    print(port, flush=True)
    server.serve_forever()
    """#

  /// One request as the server saw it.
  struct Request {
    var path: String
    var headers: [String: String]
    /// Unix time, seconds.
    var time: Double

    /// The header `name` (in any case), nil when it was not sent.
    func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
    /// The `Host` header: which name of the server the request was made to ("127.0.0.1:PORT", "localhost:PORT").
    var host: String { header("Host") ?? "" }
  }

  private let server: LoopbackServer
  /// A folder of the test's own: the log, and the files served unless `serving` named a folder.
  let directory: String
  private var log: String { directory + "/requests.log" }

  /// - Parameters:
  ///   - files: names served (keys) and the files they are (links in a folder of the server's own).
  ///   - folder: a folder to serve instead (an HLS playlist and its segments).
  ///   - options: the script's options (`--cut 0.3`, `--down 4`, `--other URL`, …).
  ///   - tls: a PEM file of a certificate and its key: the server speaks HTTPS with them.
  init(files: [String: String] = [:], serving folder: String? = nil, options: [String] = [], tls: String? = nil)
    throws
  {
    scheme = tls == nil ? "http" : "https"
    directory = NSTemporaryDirectory() + "orb-fault-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for (name, path) in files {
      try FileManager.default.createSymbolicLink(atPath: "\(directory)/\(name)", withDestinationPath: path)
    }
    do {
      server = try LoopbackServer(
        script: Self.script,
        arguments: [folder ?? directory, directory + "/requests.log", "--parent", "\(getpid())"] + options
          + (tls.map { ["--tls", $0] } ?? []))
    } catch {
      try? FileManager.default.removeItem(atPath: directory)
      throw error
    }
  }

  /// A folder of its own (`orb-PREFIX-…` in the temporary folder) to serve: `clip.mp4` (3 s, moving) and the same
  /// as HLS in 1 s segments (`index.m3u8`, `seg0.ts` …).
  static func mediaFolder(_ prefix: String) throws -> String {
    let folder = NSTemporaryDirectory() + "orb-\(prefix)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: try Clips.moving(seconds: 3), toPath: "\(folder)/clip.mp4")
    let hls = Tool.run(
      "ffmpeg",
      [
        "-hide_banner", "-loglevel", "error", "-i", "\(folder)/clip.mp4", "-c", "copy", "-f", "hls", "-hls_time", "1",
        "-hls_segment_filename", "\(folder)/seg%d.ts", "\(folder)/index.m3u8",
      ])
    guard hls.succeeded else { throw TestMediaError("ffmpeg made no HLS of the clip: \(hls.stderr)") }
    return folder
  }

  var port: Int { server.port }
  /// "http" or "https".
  let scheme: String
  /// "http://127.0.0.1:PORT": the origin the tests' media is at.
  var origin: String { "\(scheme)://127.0.0.1:\(port)" }
  /// The Host header of a request to `origin`.
  var originHost: String { "127.0.0.1:\(port)" }

  /// `http://HOST:PORT/MODE/NAME`.
  func url(_ mode: String, _ name: String, host: String = "127.0.0.1") -> String {
    "\(scheme)://\(host):\(port)/\(mode)/\(name)"
  }

  private var entries: [[String: Any]] {
    ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  /// Every request so far, in order.
  var requests: [Request] {
    entries.compactMap { e in
      guard let path = e["path"] as? String, let headers = e["headers"] as? [String: String] else { return nil }
      return Request(path: path, headers: headers, time: e["time"] as? Double ?? 0)
    }
  }

  /// The requests whose path begins with `prefix`.
  func requests(_ prefix: String) -> [Request] { requests.filter { $0.path.hasPrefix(prefix) } }

  /// The bytes at which answers broke off (`stall`, `disconnect`, `reset`), in order.
  var cuts: [Int] { entries.compactMap { $0["cut"] as? Int } }

  func stop() {
    server.stop()
    try? FileManager.default.removeItem(atPath: directory)
  }
}
