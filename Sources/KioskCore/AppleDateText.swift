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
        wallClock(date, in: nil, zone: " Etc/GMT")
    }

    /// `2012-04-30 08:05:55 America/Los_Angeles`: Los Angeles wall-clock time, daylight saving included.
    public static func pacific(_ date: Date) -> String {
        wallClock(date, in: losAngeles, zone: " America/Los_Angeles")
    }

    /// Foundation ships this zone on every platform, so its absence would be a broken installation.
    private static let losAngeles = TimeZone(identifier: "America/Los_Angeles")!

    /// `2012-04-30 15:05:55` and `zone`: the wall clock of `timeZone` (GMT when nil) at `date`, the milliseconds left
    /// out.
    ///
    /// Computed from the seconds since 1970 (the Gregorian calendar's days to year, month and day, as in Howard
    /// Hinnant's `civil_from_days`), not by Foundation's format styles: a `verifyReceipt` answer writes two of these
    /// per date, and the style's `Calendar` took a sixth of the time to write one. A date outside
    /// ``Foundation/Date/kioskRange`` (which only an unchecked value could give) is written as its nearest bound, and
    /// a NaN one as its lower bound: held there, the conversion to whole seconds cannot trap and the year has four
    /// digits.
    private static func wallClock(_ date: Date, in timeZone: TimeZone?, zone: StaticString) -> String {
        let (earliest, latest) = (Date.kioskRange.lowerBound, Date.kioskRange.upperBound)
        let date = date.timeIntervalSince1970.isNaN ? earliest : min(max(date, earliest), latest)
        let offset = Int64(timeZone?.secondsFromGMT(for: date) ?? 0)
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down)) + offset
        let (days, secondOfDay) = (seconds.floorDivided(by: 86_400), seconds.floorModulo(86_400))
        // Days from 0000-03-01, in 400-year eras of 146,097 days, so that leap days fall at the end of a year.
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let fields: [(value: Int64, digits: Int, after: UInt8)] = [
            (year, 4, UInt8(ascii: "-")), (month, 2, UInt8(ascii: "-")), (day, 2, UInt8(ascii: " ")),
            (secondOfDay / 3_600, 2, UInt8(ascii: ":")), (secondOfDay / 60 % 60, 2, UInt8(ascii: ":")),
            (secondOfDay % 60, 2, 0),
        ]
        return String(unsafeUninitializedCapacity: 19 + zone.utf8CodeUnitCount) { text in
            var end = 0
            for field in fields {
                var value = field.value
                for index in stride(from: end + field.digits - 1, through: end, by: -1) {
                    text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                end += field.digits
                if field.after != 0 {
                    text[end] = field.after
                    end += 1
                }
            }
            zone.withUTF8Buffer { suffix in
                for byte in suffix {
                    text[end] = byte
                    end += 1
                }
            }
            return end
        }
    }
}

extension Int64 {
    /// The quotient rounded toward negative infinity (`/` rounds toward zero).
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder of ``floorDivided(by:)``: in `0..<divisor` for a positive divisor.
    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        self - floorDivided(by: divisor) * divisor
    }
}
