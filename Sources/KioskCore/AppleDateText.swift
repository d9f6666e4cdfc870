import Foundation

/// The three ways Apple's receipts and `verifyReceipt` write a date: epoch milliseconds as text
/// (`1536123832000`), GMT wall-clock time (`2018-09-05 05:18:33 Etc/GMT`) and Los Angeles wall-clock time with
/// daylight saving (`2018-09-04 22:18:33 America/Los_Angeles`).
public enum AppleDateText {
    /// Epoch milliseconds, rounded.
    public static func milliseconds(_ date: Date) -> String {
        String(date.millisecondsSince1970)
    }

    /// `2012-04-30 15:05:55 Etc/GMT`.
    public static func gmt(_ date: Date) -> String {
        wallClock(date, in: .gmt) + " Etc/GMT"
    }

    /// `2012-04-30 08:05:55 America/Los_Angeles`: Los Angeles wall-clock time, daylight saving included.
    public static func pacific(_ date: Date) -> String {
        wallClock(date, in: losAngeles) + " America/Los_Angeles"
    }

    /// Foundation ships this zone on every platform, so its absence would be a broken installation.
    private static let losAngeles = TimeZone(identifier: "America/Los_Angeles")!

    private static func wallClock(_ date: Date, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func padded(_ number: Int?, _ width: Int) -> String {
            let digits = String(number ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(parts.year, 4))-\(padded(parts.month, 2))-\(padded(parts.day, 2)) "
            + "\(padded(parts.hour, 2)):\(padded(parts.minute, 2)):\(padded(parts.second, 2))"
    }
}
