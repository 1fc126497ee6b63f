import Foundation
import OrbDecode

/// The command line as Strings, without losing a file whose name is not UTF-8.
/// Linux file names are bytes; one from an old archive or another system may be Latin-1 ("caf\xE9.mkv"). Swift reads
/// such an argument with U+FFFD in place of the odd bytes, a name no file has, so the file would be "missing". Such
/// an argument becomes a file:// URL of its absolute path with the bytes escaped, which `MediaSource` opens byte for
/// byte (`MediaSource.pathBytes`) and names readably (`MediaSource.displayName`). Thread-safety: stateless.
enum LocalName {
  /// argv as the process received it.
  static func arguments(
    count: Int32 = CommandLine.argc, values: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = CommandLine.unsafeArgv
  ) -> [String] {
    (0..<Int(count)).map { i in
      guard let value = values[i] else { return "" }
      let bytes = Array(UnsafeBufferPointer(start: value, count: strlen(value))).map { UInt8(bitPattern: $0) }
      if let text = String(validating: bytes, as: UTF8.self) { return text }
      // An option's value ("--sub-file=…") or an option itself is left as Swift reads it: only sources are kept.
      guard i > 0, bytes.first != UInt8(ascii: "-") else { return String(decoding: bytes, as: UTF8.self) }
      return fileURL(bytes)
    }
  }

  /// A file:// URL of `path` (bytes; relative to the working directory unless it starts with "/"), every byte but
  /// the plain ones escaped.
  static func fileURL(_ path: [UInt8]) -> String {
    var absolute = path
    if path.first != UInt8(ascii: "/") {
      let here = FileManager.default.currentDirectoryPath
      absolute = Array(here.utf8) + (here.hasSuffix("/") ? [] : [UInt8(ascii: "/")]) + path
    }
    return MediaSource.fileURL(absolute: absolute)
  }
}
