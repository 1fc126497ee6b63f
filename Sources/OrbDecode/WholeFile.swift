import Foundation

/// Writes `data` to `file` whole or not at all (a file beside it, renamed over it), so that a reader, this process's
/// or another's, sees the old file or the new one, never half of one; nil, or why not in the system's words
/// (Foundation's called a folder that is a file "The file doesn't exist"). The file beside it is named
/// `file.XXXXXX` (mkstemp), and removed when the write fails.
public func writeWhole(_ data: Data, to file: String) -> String? {
  var template = Array("\(file).XXXXXX".utf8CString)
  let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
  guard fd >= 0 else { return String(cString: strerror(errno)) }
  var failure: Int32 = 0
  data.withUnsafeBytes { bytes in
    var done = 0
    while done < bytes.count && failure == 0 {
      let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
      if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { failure = n < 0 ? errno : EIO }
    }
  }
  if close(fd) != 0 && failure == 0 { failure = errno }
  let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
  if failure == 0 && rename(temporary, file) != 0 { failure = errno }
  if failure != 0 { unlink(temporary) }
  return failure == 0 ? nil : String(cString: strerror(failure))
}
