import Foundation

extension Calendar {
    /// The Gregorian calendar in UTC: the store's days, months and report periods.
    public static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? .current
        return calendar
    }()
}
