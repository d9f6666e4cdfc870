import Foundation

extension Date {
    /// The instants Kiosk accepts from outside, stores and signs: 1970-01-01T00:00:00.000Z through
    /// 9999-12-31T23:59:59.999Z.
    ///
    /// X.509 (GeneralizedTime), RFC 3339 and Apple's date texts write years up to 9999, and swift-certificates
    /// traps on a validation time it cannot write; Apple's formats count milliseconds from 1970. Every date that
    /// comes from outside (a JSON millisecond count, a receipt's date, a query string, a client's number added to
    /// now) is checked against this range with the `checked…` conversions below before anything else reads it.
    public static let kioskRange: ClosedRange<Date> = {
        let (earliest, latest) = (kioskMilliseconds.lowerBound, kioskMilliseconds.upperBound)
        return Date(millisecondsSince1970: earliest)...Date(millisecondsSince1970: latest)
    }()

    /// ``kioskRange`` in milliseconds since 1970.
    public static let kioskMilliseconds: ClosedRange<Int64> = 0...253_402_300_799_999

    /// ``kioskRange`` in words, for error messages.
    public static let kioskRangeText = "1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z"

    /// Whole milliseconds since 1970: how every timestamp is stored (BIGINT on both engines) and how Apple's
    /// signed payloads write dates. Never traps: a date beyond Int64 milliseconds (which only an unchecked value
    /// could give) is held at Int64's bounds.
    public var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        return Int64(exactly: milliseconds) ?? (milliseconds > 0 ? .max : .min)
    }

    /// The date `milliseconds` after 1970-01-01T00:00:00Z, unchecked: for values Kiosk stored or computed itself.
    /// Values from outside go through the checked initializers below.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// The date `milliseconds` after 1970, or nil outside ``kioskRange``.
    public init?(checkedMillisecondsSince1970 milliseconds: Int64) {
        guard Self.kioskMilliseconds.contains(milliseconds) else { return nil }
        self.init(millisecondsSince1970: milliseconds)
    }

    /// A JSON number of milliseconds since 1970, or nil for NaN, infinities and values outside ``kioskRange``.
    public init?(checkedMillisecondsSince1970 milliseconds: Double) {
        guard milliseconds.isFinite else { return nil }
        let date = Date(timeIntervalSince1970: milliseconds / 1000)
        guard Self.kioskRange.contains(date) else { return nil }
        self = date
    }

    /// Decimal digits of milliseconds since 1970 (as Apple writes `…_ms` fields), or nil for any other text
    /// and values outside ``kioskRange``.
    public init?(checkedMillisecondsSince1970 text: some StringProtocol) {
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let milliseconds = Int64(text)
        else { return nil }
        self.init(checkedMillisecondsSince1970: milliseconds)
    }

    /// An ISO 8601 date (`2026-01-31`, midnight UTC) or date-time (`2026-01-31T12:00:00Z`), or nil for any other
    /// text and values outside ``kioskRange``.
    public init?(iso8601DateOrDateTime text: String) {
        let formatter = ISO8601DateFormatter()
        if text.count == 10 { formatter.formatOptions = [.withFullDate] }
        guard let date = formatter.date(from: text), Self.kioskRange.contains(date) else { return nil }
        self = date
    }

    /// The date `seconds` after 1970, or nil outside ``kioskRange``.
    public init?(checkedSecondsSince1970 seconds: Int64) {
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        self.init(checkedMillisecondsSince1970: milliseconds)
    }

    /// `self` moved by `seconds` (a client's or a configuration's number), or nil when `seconds` is not finite or
    /// the result leaves ``kioskRange``.
    public func checkedAdding(seconds: Double) -> Date? {
        guard seconds.isFinite else { return nil }
        let date = addingTimeInterval(seconds)
        guard Self.kioskRange.contains(date) else { return nil }
        return date
    }

    /// Whole seconds since 1970, rounded down, for texts that carry seconds (tokens, signed URLs). Never traps, as
    /// ``millisecondsSince1970``.
    public var secondsSince1970: Int64 {
        let seconds = timeIntervalSince1970.rounded(.down)
        return Int64(exactly: seconds) ?? (seconds > 0 ? .max : .min)
    }
}
