/// When to try a network source again, by the rule the family's players share: after about 1, 2, 4 and 8 s, then
/// every 30 s, for as long as the budget (five minutes: at most 14 tries; `--retry-for` changes it; 0: no retry).
/// The budget is time spent trying since the first failure, not only the waits: where each try itself takes long (a
/// server that takes the connection and never answers, 15 s a try), fewer tries are made. Time the viewer kept
/// playback paused (`paused(for:)`) is not counted.
/// Thread-safety: a value type, owned by the render thread.
public struct RetrySchedule: Sendable, Equatable {
  /// The wait before each try, seconds: all the tries the budget holds when each fails at once.
  public let delays: [Double]
  /// Seconds of trying after the first failure.
  public let budget: Double
  /// Tries made so far.
  public private(set) var made = 0
  /// When the first failure was reported (`HostTime` nanoseconds).
  private var firstFailure: UInt64?
  /// Seconds paused by the viewer since then.
  private var pausedSeconds = 0.0

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
    self.budget = budget
  }

  /// The most tries there can be, all failing at once.
  public var count: Int { delays.count }

  /// The most tries there can still be at `now`, those made included, should every further one fail at once (the
  /// `of` of a retry event): `count` at the first failure, fewer as tries that take long spend the budget (a server
  /// that never answers, 15 s a try, said "of 14" at every try and made 9).
  public func most(now: UInt64 = HostTime.now()) -> Int {
    var spent = budget - left(now: now)
    var most = made
    while most > 0 && most < delays.count {
      spent += delays[most - 1]  // the wait before the try under way, which then fails at once
      guard spent < budget else { break }
      most += 1
    }
    return most
  }

  /// A failure, at `now` (`HostTime` nanoseconds): the next try, its number (from 1) and the seconds to wait before
  /// it; nil when the tries are spent or the time since the first failure (less pauses) has reached the budget.
  public mutating func next(now: UInt64 = HostTime.now()) -> (attempt: Int, delay: Double)? {
    guard made < delays.count else { return nil }
    if let first = firstFailure {
      let spent = Double(now &- first) / 1e9 - pausedSeconds
      guard spent < budget else { return nil }
    } else {
      firstFailure = now
    }
    made += 1
    return (made, delays[made - 1])
  }

  /// Seconds of the budget left at `now` (all of it before the first failure).
  public func left(now: UInt64 = HostTime.now()) -> Double {
    guard let first = firstFailure else { return budget }
    return max(0, budget - (Double(now &- first) / 1e9 - pausedSeconds))
  }

  /// The viewer kept playback paused this long while it waited to try again: not time spent trying.
  public mutating func paused(for seconds: Double) {
    if firstFailure != nil { pausedSeconds += max(0, seconds) }
  }
}
