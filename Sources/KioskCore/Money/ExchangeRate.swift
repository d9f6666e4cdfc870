import Foundation

/// What one unit of a currency is worth in US dollars from `effectiveFrom` on, as the operator configured it: the
/// money charts add sales in many currencies up in dollars with these. Kiosk fetches nothing from the network and
/// ships no rates: a currency without one stays apart, shown as unconverted.
public struct ExchangeRate: Codable, Sendable, Hashable {
    /// ISO 4217, e.g. `GBP`.
    public var currency: String
    public var effectiveFrom: Date
    /// US dollars per unit of `currency`, in millionths: 1.27 is 1_270_000.
    public var usdMicros: Int

    public init(currency: String, effectiveFrom: Date, usdMicros: Int) {
        self.currency = currency
        self.effectiveFrom = effectiveFrom
        self.usdMicros = usdMicros
    }

    /// The currency money is converted to.
    public static let reportingCurrency = "USD"
    /// Rates from a millionth of a dollar to a million dollars per unit.
    public static let microsRange = 1...1_000_000_000_000

    /// The rate in force for `currency` at `date` among `rates` (USD is always 1), or nil when none is.
    public static func inForce(for currency: String, at date: Date, among rates: [ExchangeRate]) -> ExchangeRate? {
        if currency == reportingCurrency {
            return ExchangeRate(currency: currency, effectiveFrom: .distantPast, usdMicros: 1_000_000)
        }
        return rates.filter { $0.currency == currency && $0.effectiveFrom <= date }
            .max { $0.effectiveFrom < $1.effectiveFrom }
    }

    /// `minorUnits` of `currency` (with `exponent` digits after the point, at most 4) in US cents, rounded half away
    /// from zero; held at `Int`'s bounds past them (a price of 10¹² minor units at a million dollars a unit).
    public func usCents(_ minorUnits: Int, exponent: Int) -> Int {
        // cents = minor × micros × 10^2 / (10^6 × 10^exponent)
        var divisor: Int128 = 10_000
        for _ in 0..<min(max(0, exponent), 4) { divisor *= 10 }
        return Int(clamping: Proceeds.rounded(Int128(minorUnits) * Int128(usdMicros), dividedBy: divisor))
    }

    /// "1.27" or "0.0064" (at most six decimals) as millionths; nil for anything else or outside ``microsRange``.
    public static func micros(decimal text: String) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let digits = parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
        guard digits, (1...2).contains(parts.count), parts[0].count <= 7, let whole = Int(parts[0]) else { return nil }
        let decimals = parts.count == 2 ? String(parts[1]) : ""
        guard decimals.count <= 6 else { return nil }
        let fraction = Int(decimals + String(repeating: "0", count: 6 - decimals.count)) ?? 0
        let value = whole * 1_000_000 + fraction
        return microsRange.contains(value) ? value : nil
    }

    /// Millionths as the shortest decimal: 1_270_000 → "1.27".
    public static func decimal(micros: Int) -> String {
        let whole = micros / 1_000_000
        var fraction = String(micros % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)"
    }
}

/// Sales added up for the console's charts: per day, product or storefront, units and US-dollar amounts (through
/// the configured exchange rates), and per currency the amounts as sold.
public struct MoneySeries: Codable, Sendable, Hashable {
    public enum Grouping: String, Codable, Sendable, CaseIterable {
        case day
        case product
        case storefront
    }

    public struct Point: Codable, Sendable, Hashable {
        /// The day (`2026-11-24`, UTC), the product id or the storefront code.
        public var key: String
        public var units: Int
        /// Converted where a rate was in force; sales in currencies without one are left out of these two.
        public var customerPriceUSCents: Int
        public var proceedsUSCents: Int
        /// Per currency: the customer price and proceeds in its minor units, as sold.
        public var byCurrency: [String: [String: Int]]
    }

    public var grouping: Grouping
    public var reportingCurrency: String
    public var points: [Point]
    /// Currencies with sales and no exchange rate in force: their amounts are only in `byCurrency`.
    public var unconverted: [String]

    /// The series of `events` (one environment's) grouped by `grouping`, converted with `rates`.
    public static func make(_ events: [MoneyEvent], by grouping: Grouping, rates: [ExchangeRate]) -> MoneySeries {
        var points: [String: Point] = [:]
        var unconverted: Set<String> = []
        let days = ISO8601DateFormatter()
        for event in events {
            let key: String =
                switch grouping {
                case .day: String(days.string(from: event.occurredAt).prefix(10))
                case .product: event.productId
                case .storefront: event.storefront
                }
            var point =
                points[key]
                ?? Point(
                    key: key, units: 0, customerPriceUSCents: 0, proceedsUSCents: 0, byCurrency: [:])
            point.units = point.units.saturatingAdding(event.units)
            var sums = point.byCurrency[event.currency] ?? ["customerPrice": 0, "proceeds": 0]
            sums["customerPrice"] = sums["customerPrice", default: 0]
                .saturatingAdding(event.amounts.customerPriceMinorUnits)
            sums["proceeds"] = sums["proceeds", default: 0].saturatingAdding(event.amounts.proceedsMinorUnits)
            point.byCurrency[event.currency] = sums
            let exponent = Storefront.named(event.storefront)?.currency.minorUnitExponent ?? 2
            if let rate = ExchangeRate.inForce(for: event.currency, at: event.occurredAt, among: rates) {
                point.customerPriceUSCents = point.customerPriceUSCents.saturatingAdding(
                    rate.usCents(event.amounts.customerPriceMinorUnits, exponent: exponent))
                point.proceedsUSCents = point.proceedsUSCents.saturatingAdding(
                    rate.usCents(event.amounts.proceedsMinorUnits, exponent: exponent))
            } else {
                unconverted.insert(event.currency)
            }
            points[key] = point
        }
        return MoneySeries(
            grouping: grouping, reportingCurrency: ExchangeRate.reportingCurrency,
            points: points.values.sorted { $0.key < $1.key }, unconverted: unconverted.sorted())
    }
}
