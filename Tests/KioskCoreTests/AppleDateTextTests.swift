import Foundation
import KioskCore
import Testing

@Suite struct AppleDateTextTests {
    /// Each date as Apple writes its triple: milliseconds, GMT wall clock, Los Angeles wall clock.
    static let triples: [(milliseconds: Int64, gmt: String, pacific: String)] = [
        // Apple's own example from the verifyReceipt documentation.
        (1_536_124_713_000, "2018-09-05 05:18:33 Etc/GMT", "2018-09-04 22:18:33 America/Los_Angeles"),
        // The last second of standard time in 2025 and the first of daylight time, an hour later on the wall.
        (1_741_514_399_000, "2025-03-09 09:59:59 Etc/GMT", "2025-03-09 01:59:59 America/Los_Angeles"),
        (1_741_514_400_000, "2025-03-09 10:00:00 Etc/GMT", "2025-03-09 03:00:00 America/Los_Angeles"),
        // The last second of daylight time and the first of standard time: the wall clock goes back an hour.
        (1_762_073_999_000, "2025-11-02 08:59:59 Etc/GMT", "2025-11-02 01:59:59 America/Los_Angeles"),
        (1_762_074_000_000, "2025-11-02 09:00:00 Etc/GMT", "2025-11-02 01:00:00 America/Los_Angeles"),
        // Both ends of the dates Kiosk stores; the milliseconds below a second are left out, not rounded.
        (0, "1970-01-01 00:00:00 Etc/GMT", "1969-12-31 16:00:00 America/Los_Angeles"),
        (253_402_300_799_999, "9999-12-31 23:59:59 Etc/GMT", "9999-12-31 15:59:59 America/Los_Angeles"),
    ]

    @Test(arguments: triples.indices)
    func writesTheTripleAsApple(_ index: Int) {
        let (milliseconds, gmt, pacific) = Self.triples[index]
        let date = Date(millisecondsSince1970: milliseconds)
        #expect(AppleDateText.milliseconds(date) == String(milliseconds))
        #expect(AppleDateText.gmt(date) == gmt)
        #expect(AppleDateText.pacific(date) == pacific)
    }

    /// The wall clocks are computed by arithmetic; Foundation's ISO 8601 style, which they replaced, is the oracle:
    /// every whole hour of 2025 (both daylight-saving changes) and 20,000 instants drawn across the whole range.
    @Test
    func wallClocksAgreeWithFoundation() {
        var random = SplitMix64(seed: 37, stream: 0, salt: 0)
        let hoursOf2025 = (0..<(365 * 24)).map { 1_735_689_600_000 + Int64($0) * 3_600_000 }
        let drawn = (0..<20_000).map { _ in Int64.random(in: Date.kioskMilliseconds, using: &random) }
        let losAngeles = TimeZone(identifier: "America/Los_Angeles")!
        for milliseconds in hoursOf2025 + drawn + [Date.kioskMilliseconds.upperBound] {
            let date = Date(millisecondsSince1970: milliseconds)
            #expect(AppleDateText.gmt(date) == Self.foundationWallClock(date, in: .gmt) + " Etc/GMT")
            #expect(
                AppleDateText.pacific(date) == Self.foundationWallClock(date, in: losAngeles) + " America/Los_Angeles")
        }
    }

    /// Outside ``Date/kioskRange`` (an unchecked value), the nearest bound is written rather than trapping; NaN is
    /// written as the lower bound.
    @Test
    func datesOutsideTheRangeAreWrittenAsItsBounds() {
        #expect(AppleDateText.gmt(.distantPast) == "1970-01-01 00:00:00 Etc/GMT")
        #expect(AppleDateText.gmt(Date(timeIntervalSince1970: 1e300)) == "9999-12-31 23:59:59 Etc/GMT")
        #expect(AppleDateText.pacific(Date(timeIntervalSince1970: 1e300)) == "9999-12-31 15:59:59 America/Los_Angeles")
        #expect(AppleDateText.gmt(Date(timeIntervalSince1970: .nan)) == "1970-01-01 00:00:00 Etc/GMT")
        #expect(
            AppleDateText.pacific(Date(timeIntervalSince1970: .nan)) == "1969-12-31 16:00:00 America/Los_Angeles")
        // Every Double reaches the conversion to whole seconds only within the range, infinities included.
        #expect(AppleDateText.gmt(Date(timeIntervalSince1970: .infinity)) == "9999-12-31 23:59:59 Etc/GMT")
        #expect(AppleDateText.gmt(Date(timeIntervalSince1970: -.infinity)) == "1970-01-01 00:00:00 Etc/GMT")
        #expect(
            AppleDateText.pacific(Date(timeIntervalSince1970: .infinity)) == "9999-12-31 15:59:59 America/Los_Angeles")
        #expect(
            AppleDateText.pacific(Date(timeIntervalSince1970: -.infinity)) == "1969-12-31 16:00:00 America/Los_Angeles")
    }

    private static func foundationWallClock(_ date: Date, in timeZone: TimeZone) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(
                dateSeparator: .dash, dateTimeSeparator: .space, timeSeparator: .colon, timeZone: timeZone
            ).year().month().day().time(includingFractionalSeconds: false))
    }
}
