/// The renewal periods App Store Connect offers for auto-renewable subscriptions.
/// The raw value is the ISO 8601 duration Apple writes in `offerPeriod` and `.storekit` files.
public enum SubscriptionDuration: String, Codable, Sendable, CaseIterable, Hashable, NamedValues {
    case oneWeek = "P1W"
    case oneMonth = "P1M"
    case twoMonths = "P2M"
    case threeMonths = "P3M"
    case sixMonths = "P6M"
    case oneYear = "P1Y"
}

/// A period of an introductory or promotional offer: a count of days, weeks, months or years,
/// written as an ISO 8601 duration (`P3D`, `P1W`, `P2M`, `P1Y`).
public struct OfferPeriod: Codable, Sendable, Hashable, CustomStringConvertible {
    public enum Unit: String, Codable, Sendable, CaseIterable {
        case day = "D", week = "W", month = "M", year = "Y"
    }

    public var count: Int
    public var unit: Unit

    public init(count: Int, unit: Unit) {
        self.count = count
        self.unit = unit
    }

    /// Parses `P<n><D|W|M|Y>`; returns nil for anything else.
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.first == "P", let unit = Unit(rawValue: String(text.last!)),
            let count = Int(text.dropFirst().dropLast()), count > 0
        else { return nil }
        self.init(count: count, unit: unit)
    }

    public var iso8601: String { "P\(count)\(unit.rawValue)" }
    public var description: String { iso8601 }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let period = OfferPeriod(iso8601: text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "'\(text)' is not a period such as P1W, P1M or P1Y"))
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
