extension Double {
  /// The seconds as whole milliseconds, rounded; saturated at about ±285,000 years (±9e15 ms), and 0 for NaN. A
  /// conversion that traps past Int64's range would stop the player at a time a file made up (a subtitle lasting
  /// 10^16 s, a timestamp scale of a second).
  public var wholeMilliseconds: Int64 {
    guard !isNaN else { return 0 }
    return Int64(max(-9e15, min(9e15, (self * 1000).rounded())))
  }

  /// The seconds as whole microseconds (MPRIS's unit), saturated at about ±285,000 years (±9e18 µs).
  public var wholeMicroseconds: Int64 {
    guard !isNaN else { return 0 }
    return Int64(max(-9e18, min(9e18, (self * 1e6).rounded())))
  }
}
