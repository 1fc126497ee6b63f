import CGtk
import Foundation

/// Defaults a person sets once: `$XDG_CONFIG_HOME/orb-player/orb-player.conf` (else `~/.config/…`), one option a
/// line as mpv.conf has them: `name=value` with a long option's name (`volume=80`, `tone-mapping=hable`,
/// `sub-scale=1.3`), or a flag's name alone (`mute`; `mute=no` leaves it off). A `#` at a line's start or after white
/// space starts a comment (`sub-file=/films/#1.srt` keeps its `#`); a value in quotes is taken whole, with its `#`s
/// and its spaces at either end (`title="Episode #3"`, mpv's way). The command
/// line wins over the file: a later value replaces the file's, and a flag the file sets is turned off with its
/// `--no-` form (`--no-mute`; `--audio` undoes `no-audio`). A line that is not an option, or whose value the option
/// refuses, is skipped with a warning naming the file and the line; playback never fails for the file.
/// Thread-safety: stateless.
enum ConfigFile {
  /// The file's place.
  static var path: String {
    let base =
      ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? String(cString: g_get_home_dir()) + "/.config"
    return "\(base)/orb-player/orb-player.conf"
  }

  /// Options that only make sense on one command line.
  static let notInFile: Set<String> = ["events-fd", "frame-at", "output", "probe", "benchmark", "version", "resume-ms"]

  /// The file's options as command-line arguments, each checked alone by `check` (nil: fine, else why not), and
  /// a warning for each line left out. No file: nothing.
  static func arguments(at path: String = path, check: ([String]) -> String?) -> (
    arguments: [String], warnings: [String]
  ) {
    guard let data = FileManager.default.contents(atPath: path) else {
      // None is the usual case; one that is there and cannot be read is said.
      let there = FileManager.default.fileExists(atPath: path)
      return ([], there ? ["\(path): cannot be read; ignored"] : [])
    }
    var arguments: [String] = []
    var warnings: [String] = []
    // Line by line, so that a byte that is not UTF-8 (a Latin-1 "é", even in a comment) costs its line, not the file.
    let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    for (number, bytes) in lines.enumerated() {
      guard let raw = String(bytes: bytes, encoding: .utf8) else {
        let text = String(decoding: bytes, as: UTF8.self)
        let comment = text.trimmingCharacters(in: .whitespaces).hasPrefix("#")
        if !comment { warnings.append("\(path) line \(number + 1): not UTF-8 text; ignored") }
        continue
      }
      let where_ = "\(path) line \(number + 1)"
      guard let parts = option(in: raw) else { continue }
      let name = parts[0].hasPrefix("--") ? String(parts[0].dropFirst(2)) : parts[0]
      // (A line of "--" alone ended the options: every option on the command line became a file name.)
      guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
        warnings.append("\(where_): '\(parts[0])' is not an option's name; ignored")
        continue
      }
      if notInFile.contains(name) {
        warnings.append("\(where_): --\(name) belongs on the command line; ignored")
        continue
      }
      let flag = ["--\(name)"]
      guard parts.count == 2 else {
        if let problem = check(flag) { warnings.append("\(where_): \(problem); ignored") } else { arguments += flag }
        continue
      }
      // The value as the option takes it (`sid=no`, `resume=no`); for a flag, yes/no turn it on or leave it off.
      let valued = ["--\(name)=\(parts[1])"]
      let word = parts[1].lowercased()
      let argument: [String]
      if let problem = check(valued) {
        guard check(flag) == nil, ["yes", "true", "on", "no", "false", "off"].contains(word) else {
          warnings.append("\(where_): \(problem); ignored")
          continue
        }
        argument = ["yes", "true", "on"].contains(word) ? flag : []
      } else {
        argument = valued
      }
      arguments += argument
    }
    return (arguments, warnings)
  }

  /// A line's name and, when it has one, its value (unquoted); nil for a blank line or a comment.
  static func option(in line: String) -> [String]? {
    let text = Substring(line)
    let uncommented = withoutComment(text)
    guard let equals = uncommented.firstIndex(of: "=") else {
      let name = uncommented.trimmingCharacters(in: .whitespacesAndNewlines)
      return name.isEmpty ? nil : [name]
    }
    let name = text[..<equals].trimmingCharacters(in: .whitespaces)
    // The value is read from the line itself: a "#" in quotes is the value's.
    let value = text[text.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
    if let quote = value.first, quote == "\"" || quote == "'", let close = value.dropFirst().firstIndex(of: quote) {
      let rest = withoutComment(value[value.index(after: close)...]).trimmingCharacters(in: .whitespacesAndNewlines)
      if rest.isEmpty { return [name, String(value[value.index(after: value.startIndex)..<close])] }
    }
    let before = value.startIndex > text.startIndex ? text[text.index(before: value.startIndex)] : " "
    return [name, withoutComment(value, after: before).trimmingCharacters(in: .whitespacesAndNewlines)]
  }

  /// `text` up to a `#` at its start (when what comes `after` is white space) or after white space.
  private static func withoutComment(_ text: Substring, after: Character = " ") -> Substring {
    var previous = after
    for index in text.indices {
      if text[index] == "#" && (previous == " " || previous == "\t") { return text[..<index] }
      previous = text[index]
    }
    return text
  }
}
