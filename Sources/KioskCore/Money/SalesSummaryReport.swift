import Foundation

/// The period a sales report covers, as App Store Connect's Sales and Trends reports name them. Days are UTC days
/// (Apple's are Pacific); a week runs Monday to Sunday.
public enum ReportFrequency: String, Codable, Sendable, CaseIterable {
    case daily = "DAILY"
    case weekly = "WEEKLY"
    case monthly = "MONTHLY"
    case yearly = "YEARLY"

    /// The latest period of this frequency over by `date`.
    public func latestSpan(endingBy date: Date) -> DateInterval? {
        let calendar = Calendar.utc
        let component: Calendar.Component =
            switch self {
            case .daily: .day
            case .weekly: .weekOfYear
            case .monthly: .month
            case .yearly: .year
            }
        guard let earlier = calendar.date(byAdding: component, value: -1, to: date) else { return nil }
        let parts = calendar.dateComponents([.year, .month, .day], from: earlier)
        let day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        let name =
            switch self {
            case .daily, .weekly: day
            case .monthly: String(day.prefix(7))
            case .yearly: String(day.prefix(4))
            }
        return span(named: name)
    }

    /// How a report date of this frequency is written.
    public var example: String {
        switch self {
        case .daily, .weekly: "2026-11-24"
        case .monthly: "2026-11"
        case .yearly: "2026"
        }
    }

    /// The span `date` names: for daily and weekly reports a day (`2026-11-24`, any day of the week), for monthly
    /// `2026-11`, for yearly `2026`; nil for text that is not one.
    public func span(named date: String) -> DateInterval? {
        let calendar = Calendar.utc
        let parts = date.split(separator: "-", omittingEmptySubsequences: false)
        let expected =
            switch self {
            case .daily, .weekly: 3
            case .monthly: 2
            case .yearly: 1
            }
        let widths = [4, 2, 2]
        guard parts.count == expected,
            parts.enumerated().allSatisfy({ $1.count == widths[$0] && $1.allSatisfy { ("0"..."9").contains($0) } }),
            let year = Int(parts[0]), (2000...2100).contains(year)
        else { return nil }
        let month = parts.count > 1 ? Int(parts[1]) ?? 0 : 1
        let day = parts.count > 2 ? Int(parts[2]) ?? 0 : 1
        guard (1...12).contains(month), (1...31).contains(day),
            let start = calendar.date(from: DateComponents(year: year, month: month, day: day)),
            calendar.component(.day, from: start) == day
        else { return nil }
        let (begin, component): (Date, Calendar.Component) =
            switch self {
            case .daily: (start, .day)
            case .weekly:
                // Back to Monday (weekday 2 in the Gregorian calendar).
                (
                    calendar.date(
                        byAdding: .day, value: -((calendar.component(.weekday, from: start) + 5) % 7), to: start)!,
                    .weekOfYear
                )
            case .monthly: (start, .month)
            case .yearly: (start, .year)
            }
        guard let end = calendar.date(byAdding: component, value: 1, to: begin) else { return nil }
        return DateInterval(start: begin, end: end)
    }
}

/// App Store Connect's *Sales Summary* report (Sales and Trends, report type SALES, sub-type SUMMARY, version 1_1):
/// tab-separated, one header line, one row per product, country, price, proceeds and kind of sale, units summed
/// (negative for refunds), amounts per unit. Built from production money events only.
public enum SalesSummaryReport {
    /// What a row needs to know of a product beyond its money events.
    public struct ProductInfo: Sendable {
        public var referenceName: String
        public var bundleId: String
        /// The product's Apple identifier (the receipt's item id).
        public var appleIdentifier: UInt32
        public var duration: SubscriptionDuration?

        public init(referenceName: String, bundleId: String, appleIdentifier: UInt32, duration: SubscriptionDuration?) {
            self.referenceName = referenceName
            self.bundleId = bundleId
            self.appleIdentifier = appleIdentifier
            self.duration = duration
        }
    }

    /// Apple's columns, in Apple's order.
    public static let columns = [
        "Provider", "Provider Country", "SKU", "Developer", "Title", "Version", "Product Type Identifier", "Units",
        "Developer Proceeds", "Begin Date", "End Date", "Customer Currency", "Country Code", "Currency of Proceeds",
        "Apple Identifier", "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category",
        "CMB", "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client", "Order Type",
    ]

    /// Apple's product type identifiers for in-app purchases: IA1 for consumables and non-consumables, IA9 for
    /// non-renewing subscriptions, IAY for auto-renewable subscriptions.
    public static func typeIdentifier(_ type: ProductType) -> String {
        switch type {
        case .consumable, .nonConsumable: "IA1"
        case .nonRenewing: "IA9"
        case .autoRenewable: "IAY"
        }
    }

    /// A report's row as a line of tab-separated cells, each cell safe to open in a spreadsheet: text a spreadsheet
    /// would run as a formula (starting with `=`, `+`, `-` or `@`, and not a number) gets a leading `'`, and tabs and
    /// line breaks become spaces. Names come from whoever edits the catalog; a report goes to whoever reads money.
    public static func line(_ cells: some Sequence<String>) -> String {
        cells.map { cell in
            var text = cell.replacing(/[\t\r\n]/, with: " ")
            if let first = text.first, "=+-@".contains(first), Double(text) == nil { text = "'" + text }
            return text
        }.joined(separator: "\t")
    }

    /// The report of `events` in `span` (production events only; others are skipped), `developer` in its Developer
    /// column, `products` keyed by "appId/productId". Rows are sorted, so one ledger always gives the same file.
    public static func make(
        events: [MoneyEvent], span: DateInterval, developer: String, products: [String: ProductInfo]
    ) -> String {
        var units: [[String]: Int] = [:]
        for event in events
        where event.environment == .production && span.contains(event.occurredAt)
            && event.occurredAt < span.end
        {
            guard event.units != 0 else { continue }
            let product = products["\(event.appId)/\(event.productId)"]
            let subscription: String =
                switch (event.productType, event.kind) {
                case (.autoRenewable, .renewal): "Renewal"
                case (.autoRenewable, _): "New"
                default: ""
                }
            // Amounts are per unit; proceeds that do not divide evenly go to rows one minor unit apart, so units
            // times amounts add up to the ledger exactly. As Apple writes refunds: negative units and customer
            // price, positive proceeds.
            for (count, proceeds) in perUnit(event.amounts.proceedsMinorUnits, units: event.units) {
                let row = [
                    "APPLE", "US", event.productId, developer, product?.referenceName ?? event.productId, "",
                    typeIdentifier(event.productType), "", amount(proceeds, in: event.currency), date(span.start),
                    date(span.end.addingTimeInterval(-1)), event.currency, countryCode(event.storefront),
                    event.currency, product.map { String($0.appleIdentifier) } ?? "",
                    amount(
                        event.amounts.customerPriceMinorUnits / event.units * event.units.signum(), in: event.currency),
                    "",
                    product?.bundleId ?? "",
                    subscription, event.productType == .autoRenewable ? billedPeriod(event, product?.duration) : "",
                    "", "", "",
                    "ios", event.amounts.reason ?? "", "", "", "",
                ]
                // Refunds keep rows of their own (Apple's negative units), whatever sales of the same price did.
                let key = row + [event.units < 0 ? "refund" : "sale"]
                units[key] = units[key, default: 0].saturatingAdding(count)
            }
        }
        let lines = units.map { key, count in
            var row = key.dropLast() as ArraySlice
            row[7] = String(count)
            return line(row)
        }
        return ([columns.joined(separator: "\t")] + lines.sorted()).joined(separator: "\n") + "\n"
    }

    /// `amount` spread over `units` (non-zero, same sign as the amount or zero amount): (units, amount each) pairs
    /// whose products add up to `amount` exactly.
    static func perUnit(_ amount: Int, units: Int) -> [(units: Int, each: Int)] {
        let each = amount / units
        let rest = amount - each * units
        guard rest != 0 else { return [(units, each)] }
        let step = rest.signum() * units.signum()
        let bumped = rest / step
        return [(units - bumped, each), (bumped, each + step)]
    }

    /// `minorUnits` of the currency `code` as reports write amounts: a plain decimal ("0.99", "120"), or the bare
    /// integer for a currency no built-in storefront uses.
    static func amount(_ minorUnits: Int, in code: String) -> String {
        guard let currency = Storefront.all.first(where: { $0.currency.code == code })?.currency else {
            return String(minorUnits)
        }
        return currency.decimalString(minorUnits: minorUnits)
    }

    /// `MM/dd/yyyy` in UTC, as Apple writes report dates.
    static func date(_ date: Date) -> String {
        let calendar = Calendar.utc
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        return "\(two(parts.month))/\(two(parts.day))/\(parts.year ?? 0)"
    }

    /// The Period of an auto-renewable's row: the period the charge paid for, so a payment of the monthly plan (one
    /// month of a one-year subscription's 12-month commitment) is a "1 Month" row of its own beside the product's
    /// "1 Year" up-front sales.
    static func billedPeriod(_ event: MoneyEvent, _ duration: SubscriptionDuration?) -> String {
        period(event.billingPlan == .monthly ? MonthlyPlan.billingPeriod : duration)
    }

    /// Apple's Period column: "7 Days", "1 Month", "2 Months", "3 Months", "6 Months", "1 Year".
    static func period(_ duration: SubscriptionDuration?) -> String {
        switch duration {
        case .oneWeek: "7 Days"
        case .oneMonth: "1 Month"
        case .twoMonths: "2 Months"
        case .threeMonths: "3 Months"
        case .sixMonths: "6 Months"
        case .oneYear: "1 Year"
        case nil: ""
        }
    }

    /// The two-letter ISO 3166-1 code of a storefront's three-letter one, as Apple's Country Code column has it.
    public static func countryCode(_ storefront: String) -> String {
        alpha2[storefront] ?? String(storefront.prefix(2))
    }

    static let alpha2: [String: String] = [
        "ARE": "AE", "AUS": "AU", "AUT": "AT", "BEL": "BE", "BRA": "BR", "CAN": "CA", "CHE": "CH", "CHL": "CL",
        "CHN": "CN", "COL": "CO", "CYP": "CY", "CZE": "CZ", "DEU": "DE", "DNK": "DK", "EGY": "EG", "ESP": "ES",
        "EST": "EE", "FIN": "FI", "FRA": "FR", "GBR": "GB", "GRC": "GR", "HKG": "HK", "HRV": "HR", "HUN": "HU",
        "IDN": "ID", "IND": "IN", "IRL": "IE", "ISR": "IL", "ITA": "IT", "JPN": "JP", "KAZ": "KZ", "KOR": "KR",
        "LTU": "LT", "LUX": "LU", "LVA": "LV", "MEX": "MX", "MLT": "MT", "MYS": "MY", "NGA": "NG", "NLD": "NL",
        "NOR": "NO", "NZL": "NZ", "PAK": "PK", "PER": "PE", "PHL": "PH", "POL": "PL", "PRT": "PT", "QAT": "QA",
        "ROU": "RO", "RUS": "RU", "SAU": "SA", "SGP": "SG", "SVK": "SK", "SVN": "SI", "SWE": "SE", "THA": "TH",
        "TUR": "TR", "TWN": "TW", "USA": "US", "VNM": "VN", "ZAF": "ZA",
    ]
}
