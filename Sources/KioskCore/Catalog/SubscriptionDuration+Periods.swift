import Foundation

extension SubscriptionDuration {
    /// When one period of this duration that starts at `start` ends.
    ///
    /// Production counts calendar periods in UTC (a month from 31 January ends on the last day of February).
    /// The sandbox uses Apple's accelerated durations, ``sandboxSeconds``.
    public func end(from start: Date, environment: StoreEnvironment) -> Date {
        switch environment {
        case .sandbox:
            return start + sandboxSeconds
        case .production:
            let calendar = Calendar.utc
            let components: DateComponents =
                switch self {
                case .oneWeek: DateComponents(day: 7)
                case .oneMonth: DateComponents(month: 1)
                case .twoMonths: DateComponents(month: 2)
                case .threeMonths: DateComponents(month: 3)
                case .sixMonths: DateComponents(month: 6)
                case .oneYear: DateComponents(year: 1)
                }
            return calendar.date(byAdding: components, to: start)!
        }
    }

    /// Apple's sandbox subscription durations: 1 week lasts 3 minutes, 1 month 5, 2 months 10, 3 months 15,
    /// 6 months 30 and 1 year an hour.
    public var sandboxSeconds: TimeInterval {
        switch self {
        case .oneWeek: 3 * 60
        case .oneMonth: 5 * 60
        case .twoMonths: 10 * 60
        case .threeMonths: 15 * 60
        case .sixMonths: 30 * 60
        case .oneYear: 60 * 60
        }
    }
}
