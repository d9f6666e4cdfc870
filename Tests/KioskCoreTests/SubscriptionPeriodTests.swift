import Foundation
import KioskCore
import Testing

@Suite struct SubscriptionPeriodTests {
    /// The sandbox uses Apple's accelerated durations: 3, 5, 10, 15 and 30 minutes, and an hour.
    @Test func sandboxPeriodsAreAccelerated() {
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let minutes = SubscriptionDuration.allCases.map {
            $0.end(from: start, environment: .sandbox).timeIntervalSince(start) / 60
        }
        #expect(minutes == [3, 5, 10, 15, 30, 60])
    }

    /// Production counts calendar periods in UTC: a month from 31 January 2026 ends on 28 February, a year
    /// from 29 February 2028 on 28 February 2029.
    @Test func productionPeriodsFollowTheCalendar() throws {
        let formatter = ISO8601DateFormatter()
        let january31 = try #require(formatter.date(from: "2026-01-31T10:00:00Z"))
        #expect(
            SubscriptionDuration.oneMonth.end(from: january31, environment: .production)
                == formatter.date(from: "2026-02-28T10:00:00Z"))
        #expect(
            SubscriptionDuration.oneWeek.end(from: january31, environment: .production)
                == formatter.date(from: "2026-02-07T10:00:00Z"))
        #expect(
            SubscriptionDuration.sixMonths.end(from: january31, environment: .production)
                == formatter.date(from: "2026-07-31T10:00:00Z"))
        let leapDay = try #require(formatter.date(from: "2028-02-29T00:00:00Z"))
        #expect(
            SubscriptionDuration.oneYear.end(from: leapDay, environment: .production)
                == formatter.date(from: "2029-02-28T00:00:00Z"))
    }
}
