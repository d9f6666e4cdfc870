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
        date.formatted(gmtWallClock) + " Etc/GMT"
    }

    /// `2012-04-30 08:05:55 America/Los_Angeles`: Los Angeles wall-clock time, daylight saving included.
    public static func pacific(_ date: Date) -> String {
        date.formatted(pacificWallClock) + " America/Los_Angeles"
    }

    /// Foundation ships this zone on every platform, so its absence would be a broken installation.
    private static let losAngeles = TimeZone(identifier: "America/Los_Angeles")!

    /// `2012-04-30 15:05:55` in GMT. A format style, not a `Calendar`: a receipt's answer writes two of these per date,
    /// and a calendar's components took a twentieth of `verifyReceipt`'s time (a twelfth as long through the style).
    private static let gmtWallClock = wallClock(in: .gmt)
    private static let pacificWallClock = wallClock(in: losAngeles)

    private static func wallClock(in timeZone: TimeZone) -> Date.ISO8601FormatStyle {
        Date.ISO8601FormatStyle(
            dateSeparator: .dash, dateTimeSeparator: .space, timeSeparator: .colon, timeZone: timeZone
        ).year().month().day().time(includingFractionalSeconds: false)
    }
}
