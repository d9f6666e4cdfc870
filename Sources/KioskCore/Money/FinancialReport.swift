import Foundation

/// App Store Connect's *Financial Report* (Payments and Financial Reports, report type FINANCIAL) of one month and
/// region: tab-separated, Apple's 22 columns, one row per product, country, partner share and sale or return
/// (quantities summed, negative for returns), then the `Total_Rows`, `Total_Amount` and `Total_Units` trailer.
/// Built from production money events only. Months are calendar months in UTC (Apple's fiscal months follow its
/// 4-4-5-week calendar).
public enum FinancialReport {
    /// Apple's columns, in Apple's order.
    public static let columns = [
        "Start Date", "End Date", "UPC", "ISRC/ISBN", "Vendor Identifier", "Quantity", "Partner Share",
        "Extended Partner Share", "Partner Share Currency", "Sales or Return", "Apple Identifier",
        "Artist/Show/Developer/Author", "Title", "Label/Studio/Network/Developer/Publisher", "Grid",
        "Product Type Identifier", "ISAN/Other Identifier", "Country Of Sale", "Pre-order Flag", "Promo Code",
        "Customer Price", "Customer Currency",
    ]

    /// Every region over all storefronts: `ZZ`.
    public static let allRegions = "ZZ"

    /// The region of a storefront's sales, as App Store Connect groups payments: by currency zone (US, EU, GB, JP,
    /// AU, CA, CN), else the storefront's own country.
    public static func region(of storefront: String) -> String {
        let zones = ["USD": "US", "EUR": "EU", "GBP": "GB", "JPY": "JP", "AUD": "AU", "CAD": "CA", "CNY": "CN"]
        guard let currency = Storefront.named(storefront)?.currency.code else {
            return SalesSummaryReport.countryCode(storefront)
        }
        return zones[currency] ?? SalesSummaryReport.countryCode(storefront)
    }

    /// Every region code a report may be asked for: `ZZ` and each built-in storefront's region.
    public static var regionCodes: Set<String> {
        Set(Storefront.all.map { region(of: $0.code) }).union([allRegions])
    }

    /// The report of `events` in `month` for `regionCode` (`ZZ` for all), `developer` in its developer columns.
    /// `Total_Amount` is the extended partner shares' sum when the rows share one currency (0 without rows); it is
    /// left out when a report mixes currencies (`ZZ`), where adding them up would mean nothing.
    public static func make(
        events: [MoneyEvent], month: DateInterval, regionCode: String, developer: String,
        products: [String: SalesSummaryReport.ProductInfo]
    ) -> String {
        var quantities: [[String]: Int] = [:]
        for event in events
        where event.environment == .production && event.occurredAt >= month.start
            && event.occurredAt < month.end && event.units != 0
            && (regionCode == allRegions || region(of: event.storefront) == regionCode)
        {
            let product = products["\(event.appId)/\(event.productId)"]
            for (count, share) in SalesSummaryReport.perUnit(event.amounts.proceedsMinorUnits, units: event.units) {
                let key = [
                    event.productId, event.units < 0 ? "R" : "S", product.map { String($0.appleIdentifier) } ?? "",
                    product?.referenceName ?? event.productId, SalesSummaryReport.typeIdentifier(event.productType),
                    SalesSummaryReport.countryCode(event.storefront), event.currency, String(share),
                    SalesSummaryReport.amount(event.amounts.customerPriceMinorUnits / event.units, in: event.currency),
                ]
                quantities[key] = quantities[key, default: 0].saturatingAdding(count)
            }
        }
        var rows: [String] = []
        var totalUnits = 0
        var totalAmount = 0
        let currencies = Set(quantities.keys.map { $0[6] })
        for (key, quantity) in quantities {
            let share = Int(key[7]) ?? 0
            let extended = quantity.saturatingMultiplied(by: share)
            totalUnits = totalUnits.saturatingAdding(quantity)
            totalAmount = totalAmount.saturatingAdding(extended)
            rows.append(
                SalesSummaryReport.line([
                    SalesSummaryReport.date(month.start), SalesSummaryReport.date(month.end.addingTimeInterval(-1)), "",
                    "", key[0], String(quantity), SalesSummaryReport.amount(share, in: key[6]),
                    SalesSummaryReport.amount(extended, in: key[6]), key[6], key[1], key[2],
                    developer, key[3], developer, "", key[4], "", key[5], "", "", key[8], key[6],
                ]))
        }
        var lines = [columns.joined(separator: "\t")] + rows.sorted()
        lines.append("")
        lines.append("Total_Rows\t\(rows.count)")
        if currencies.isEmpty {
            lines.append("Total_Amount\t0")
        } else if currencies.count == 1, let code = currencies.first {
            lines.append("Total_Amount\t\(SalesSummaryReport.amount(totalAmount, in: code))")
        }
        lines.append("Total_Units\t\(totalUnits)")
        return lines.joined(separator: "\n") + "\n"
    }
}
