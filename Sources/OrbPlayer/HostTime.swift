import Foundation

extension HostTime {
  /// When this process started, on CLOCK_MONOTONIC: the kernel's start time of the process (/proc/self/stat field
  /// 22, clock ticks since boot) moved from CLOCK_BOOTTIME to CLOCK_MONOTONIC; the time of the first use when /proc
  /// cannot be read. What "from launch" latencies are measured from. Thread-safety: Safe; a static let.
  public static let launch: UInt64 = {
    let monotonic = now()
    guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return monotonic }
    // The command name (field 2) may hold spaces: the fields after it are counted from field 3.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    guard fields.count > 19, let ticks = Double(fields[19]), ticksPerSecond > 0 else { return monotonic }
    var boot = timespec()
    clock_gettime(CLOCK_BOOTTIME, &boot)
    let sinceStart = max(0, Double(boot.tv_sec) * 1e9 + Double(boot.tv_nsec) - ticks / ticksPerSecond * 1e9)
    return monotonic > UInt64(sinceStart) ? monotonic - UInt64(sinceStart) : monotonic
  }()
}
