/// When to try a network source again, by the rule the family's players share: after about 1, 2, 4 and 8 s, then
/// every 30 s, as long as the waits so far are under the budget (five minutes: 14 tries; `--retry-for` changes it;
/// 0: no retry).
/// Thread-safety: a value type, owned by the render thread.
public struct RetrySchedule: Sendable, Equatable {
  /// The wait before each try, seconds.
  public let delays: [Double]
  /// Tries made so far.
  public private(set) var made = 0

  /// The default budget, seconds.
  public static let fiveMinutes = 300.0

  public init(budget: Double = RetrySchedule.fiveMinutes) {
    var delays: [Double] = []
    var total = 0.0
    var step = 1.0
    while true {
      let wait = min(step, 30)
      // A try is made while the waits so far are under the budget (five minutes: 14 tries, 1+2+4+8+10×30 s).
      guard total < budget else { break }
      delays.append(wait)
      total += wait
      step = step < 8 ? step * 2 : 30
    }
    self.delays = delays
  }

  /// How many tries there are in all.
  public var count: Int { delays.count }

  /// The next try: its number (from 1) and the seconds to wait before it; nil when the budget is spent.
  public mutating func next() -> (attempt: Int, delay: Double)? {
    guard made < delays.count else { return nil }
    made += 1
    return (made, delays[made - 1])
  }
}
