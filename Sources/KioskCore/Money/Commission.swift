import Foundation

/// Which commission applies to a sale, by Apple's rules: 30%; 15% for a developer enrolled in the Small Business
/// Program from its effective date; 15% for an auto-renewable subscription once the subscriber has a year of paid
/// service in the subscription group.
public enum Commission {
    /// Days of paid service after which a subscription's commission drops to 15%.
    public static let oneYearInDays = 365
    /// Apple's rule: a lapse of up to 60 days keeps the days already accumulated; a longer one starts them over.
    public static let allowedGapInDays = 60

    /// The rate (basis points) and `Proceeds Reason` for a sale at `date`. `smallBusinessSince` is the program's
    /// effective date when enrolled; `paidPeriods` are the subscriber's earlier paid periods in the group (nil for
    /// anything but an auto-renewable subscription).
    public static func rate(
        at date: Date, smallBusinessSince: Date?, paidPeriods: [DateInterval]?
    ) -> (basisPoints: Int, reason: String?) {
        if let paidPeriods, paidDays(paidPeriods, before: date) >= oneYearInDays {
            return (Proceeds.reducedCommission, Proceeds.rateAfterOneYear)
        }
        if let smallBusinessSince, smallBusinessSince <= date {
            return (Proceeds.reducedCommission, nil)
        }
        return (Proceeds.standardCommission, nil)
    }

    /// Whole days of paid service accumulated by `date` through `periods` (in any order, overlaps counted once):
    /// the count starts over after a gap of more than ``allowedGapInDays``, including the gap up to `date` itself.
    public static func paidDays(_ periods: [DateInterval], before date: Date) -> Int {
        let day: TimeInterval = 86_400
        var seconds: TimeInterval = 0
        var coveredUntil: Date?
        for period in periods.sorted(by: { $0.start < $1.start }) where period.start < date {
            let end = min(period.end, date)
            if let until = coveredUntil, period.start.timeIntervalSince(until) > Double(allowedGapInDays) * day {
                seconds = 0
                coveredUntil = nil
            }
            let start = max(period.start, coveredUntil ?? period.start)
            if end > start { seconds += end.timeIntervalSince(start) }
            coveredUntil = max(coveredUntil ?? end, end)
        }
        if let until = coveredUntil, date.timeIntervalSince(until) > Double(allowedGapInDays) * day { return 0 }
        return Int((seconds / day).rounded(.down))
    }
}
