import Foundation
import KioskCore
import Testing

/// The checked conversions every number and date from outside goes through: out-of-range values give nil (the
/// route's refusal), never a trap.
@Suite struct CheckedNumbersTests {
    /// 10000-01-01T00:00:00Z, the first instant past the range.
    static let year10000Milliseconds: Int64 = 253_402_300_800_000

    /// The range is exactly 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, whatever form the number takes.
    @Test func millisecondRangeEdges() {
        #expect(Date(checkedMillisecondsSince1970: Int64(0)) == Date(timeIntervalSince1970: 0))
        #expect(Date(checkedMillisecondsSince1970: Int64(-1)) == nil)
        #expect(Date(checkedMillisecondsSince1970: Self.year10000Milliseconds - 1) == Date.kioskRange.upperBound)
        #expect(Date(checkedMillisecondsSince1970: Self.year10000Milliseconds) == nil)
        #expect(Date(checkedMillisecondsSince1970: Int64.max) == nil)
        #expect(Date(checkedMillisecondsSince1970: Int64.min) == nil)
        #expect(Date.kioskRange.upperBound == Date(timeIntervalSince1970: 253_402_300_799.999))
    }

    /// JSON numbers: NaN, infinities, 1e300, 9.3e18, −1e15 and year 10000 are refused; in-range fractions are kept.
    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300, 9.3e18, -1e15, 253_402_300_800_000, -0.5])
    func hostileJSONNumbersAreRefused(milliseconds: Double) {
        #expect(Date(checkedMillisecondsSince1970: milliseconds) == nil)
    }

    @Test func inRangeJSONNumbersAreKept() {
        #expect(Date(checkedMillisecondsSince1970: 1_767_225_600_000.0) == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(Date(checkedMillisecondsSince1970: 1.5) == Date(timeIntervalSince1970: 0.0015))
    }

    /// Text must be decimal digits: signs, exponents, spaces, `NaN`, `inf` and digits beyond Int64 are refused.
    @Test(arguments: [
        "", "-1", "+1", "1e3", " 1", "1.0", "NaN", "inf", "0x10", "253402300800000", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808",
    ])
    func hostileMillisecondTextIsRefused(text: String) {
        #expect(Date(checkedMillisecondsSince1970: text) == nil)
    }

    @Test func digitTextIsRead() {
        #expect(Date(checkedMillisecondsSince1970: "1767225600000") == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(Date(checkedMillisecondsSince1970: "0") == Date(timeIntervalSince1970: 0))
    }

    /// Seconds (signed URLs, tokens): the multiplication to milliseconds cannot overflow into a trap.
    @Test func secondsAreChecked() {
        #expect(Date(checkedSecondsSince1970: 1_767_225_600) == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(Date(checkedSecondsSince1970: Int64.max) == nil)
        #expect(Date(checkedSecondsSince1970: Int64.min) == nil)
        #expect(Date(checkedSecondsSince1970: 253_402_300_800) == nil)
    }

    /// A client's number of seconds added to now: non-finite values and results outside the range are refused.
    @Test func addingClientSecondsIsChecked() {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        #expect(now.checkedAdding(seconds: 60) == now + 60)
        #expect(now.checkedAdding(seconds: Double(Int64.max)) == nil)
        #expect(now.checkedAdding(seconds: -1e10) == nil)
        #expect(now.checkedAdding(seconds: .nan) == nil)
        #expect(now.checkedAdding(seconds: .infinity) == nil)
    }

    /// Converting a date to milliseconds or seconds never traps, however far it lies (it once did at ±2⁶³).
    @Test func dateConversionsSaturate() {
        #expect(Date(timeIntervalSince1970: 1e300).millisecondsSince1970 == .max)
        #expect(Date(timeIntervalSince1970: -1e300).millisecondsSince1970 == .min)
        #expect(Date(millisecondsSince1970: .max).millisecondsSince1970 == .max)
        #expect(Date(millisecondsSince1970: .min).millisecondsSince1970 == .min)
        #expect(Date(timeIntervalSince1970: 1e300).secondsSince1970 == .max)
        #expect(Date(timeIntervalSince1970: -1e300).secondsSince1970 == .min)
    }

    @Test func conversionsRoundTrip() {
        let date = Date(millisecondsSince1970: 1_767_225_600_123)
        #expect(date.millisecondsSince1970 == 1_767_225_600_123)
        #expect(date.secondsSince1970 == 1_767_225_600)
        #expect(AppleDateText.milliseconds(Date(timeIntervalSince1970: 1e300)) == String(Int64.max))
    }

    /// Saturating arithmetic holds at the bounds instead of trapping.
    @Test func saturatingArithmetic() {
        #expect(Int64.max.saturatingAdding(1) == .max)
        #expect(Int64.min.saturatingAdding(-1) == .min)
        #expect(Int64(2).saturatingAdding(3) == 5)
        #expect(Int64.max.saturatingSubtracting(-100) == .max)
        #expect(Int64.min.saturatingSubtracting(1) == .min)
        #expect(Int64(2).saturatingSubtracting(3) == -1)
        #expect(Int64.max.saturatingMultiplied(by: 2) == .max)
        #expect(Int64.max.saturatingMultiplied(by: -2) == .min)
        #expect(Int64.min.saturatingMultiplied(by: -1) == .max)
        #expect(Int64(-4).saturatingMultiplied(by: 3) == -12)
    }

    /// The sandbox clock's state adds its offset without integer overflow, and its bound leaves room before 10000.
    @Test func sandboxClockStateNeverTraps() {
        let base = Date(timeIntervalSince1970: 1_767_225_600)
        #expect(SandboxClock.State(offsetMilliseconds: 60_000).now(base: base) == base + 60)
        #expect(SandboxClock.State(offsetMilliseconds: .max).now(base: base).millisecondsSince1970 == .max)
        #expect(Date.kioskRange.contains(SandboxClock.latest + 365 * 86_400 * 99))
    }
}
