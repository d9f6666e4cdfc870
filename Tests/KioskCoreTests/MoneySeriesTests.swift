import Foundation
import KioskCore
import Testing

/// Exchange rates as integers (millionths of a dollar per unit), conversions rounded half away from zero for
/// currencies with 0 or 2 decimals, rates in force from their dates, and the chart series built on them.
@Suite struct MoneySeriesTests {
    static let start = Date(timeIntervalSince1970: 1_795_478_400)  // 2026-11-24

    @Test func ratesParseAsMillionthsAndConvertMinorUnits() {
        #expect(ExchangeRate.micros(decimal: "1.27") == 1_270_000)
        #expect(ExchangeRate.micros(decimal: "0.0064") == 6_400)
        #expect(ExchangeRate.micros(decimal: "3") == 3_000_000)
        for bad in ["", "0", "1.", ".5", "1.2345678", "-1", "1e3", "１.2", "99999999", "1,27"] {
            #expect(ExchangeRate.micros(decimal: bad) == nil, "\(bad)")
        }
        #expect(ExchangeRate.decimal(micros: 1_270_000) == "1.27" && ExchangeRate.decimal(micros: 6_400) == "0.0064")
        let pound = ExchangeRate(currency: "GBP", effectiveFrom: Self.start, usdMicros: 1_270_000)
        #expect(pound.usCents(99, exponent: 2) == 126, "£0.99 × 1.27 = $1.2573")
        #expect(pound.usCents(-99, exponent: 2) == -126, "refunds convert symmetrically")
        let yen = ExchangeRate(currency: "JPY", effectiveFrom: Self.start, usdMicros: 6_400)
        #expect(yen.usCents(160, exponent: 0) == 102, "¥160 × 0.0064 = $1.024")
    }

    @Test func seriesAddUpByKeyAndKeepUnconvertedCurrenciesApart() {
        func event(_ id: Int64, _ storefront: String, _ currency: String, units: Int = 1, day: Double = 0) -> MoneyEvent
        {
            let split = Proceeds.of(
                priceMinorUnits: 99, tax: TaxRule.defaultRule(for: storefront),
                commissionBasisPoints: Proceeds.standardCommission)
            return MoneyEvent(
                environment: .production, transactionId: id, revision: 1, kind: units < 0 ? .refund : .purchase,
                occurredAt: Self.start + day * 86_400, appId: 1, accountId: UUID(), originalTransactionId: id,
                productId: "coins", productType: .consumable, storefront: storefront, currency: currency, units: units,
                amounts: units < 0 ? split.negated : split)
        }
        let rates = [ExchangeRate(currency: "GBP", effectiveFrom: Self.start + 86_400, usdMicros: 1_250_000)]
        let events = [
            event(1, "USA", "USD"), event(2, "GBR", "GBP"), event(3, "GBR", "GBP", day: 1),
            event(4, "USA", "USD", units: -1, day: 1), event(5, "DEU", "EUR", day: 1),
        ]
        let byDay = MoneySeries.make(events, by: .day, rates: rates)
        #expect(byDay.points.map(\.key) == ["2026-11-24", "2026-11-25"])
        #expect(byDay.points.map(\.units) == [2, 1])
        // Day one: $0.99 and a pound sale before the rate took effect (left out of the dollars).
        #expect(byDay.points[0].customerPriceUSCents == 99 && byDay.points[0].proceedsUSCents == 69)
        // Day two: £0.99 × 1.25 = $1.2375 → 124, less the refunded $0.99; proceeds 58p → 73¢, less 69¢.
        #expect(byDay.points[1].customerPriceUSCents == 124 - 99 && byDay.points[1].proceedsUSCents == 73 - 69)
        #expect(byDay.unconverted == ["EUR", "GBP"])
        #expect(byDay.points[1].byCurrency["EUR"] == ["customerPrice": 99, "proceeds": 58])
        let byStorefront = MoneySeries.make(events, by: .storefront, rates: rates)
        #expect(byStorefront.points.map { "\($0.key) \($0.units)" } == ["DEU 1", "GBR 2", "USA 0"])
    }

    @Test func extremeAmountsHoldAtTheBoundsInsteadOfTrapping() throws {
        // The largest price a catalog takes (10¹² minor units) times ten, at the largest rate (a million dollars a
        // unit): 10²¹ cents does not fit an Int; the series and reports hold at its bounds and the server lives.
        let split = Proceeds.of(
            priceMinorUnits: 10 * Pricing.maximumMinorUnits, tax: TaxRule.defaultRule(for: "GBR"),
            commissionBasisPoints: Proceeds.standardCommission)
        let events = (1...3).map { id in
            MoneyEvent(
                environment: .production, transactionId: Int64(id), revision: 1, kind: .purchase,
                occurredAt: Self.start, appId: 1, accountId: UUID(), originalTransactionId: Int64(id),
                productId: "coins", productType: .consumable, storefront: "GBR", currency: "GBP", units: 10,
                amounts: split)
        }
        let rate = ExchangeRate(
            currency: "GBP", effectiveFrom: .distantPast, usdMicros: ExchangeRate.microsRange.upperBound)
        let series = MoneySeries.make(events, by: .product, rates: [rate])
        #expect(series.points.first?.customerPriceUSCents == Int.max && series.points.first?.units == 30)
        #expect(rate.usCents(-10 * Pricing.maximumMinorUnits, exponent: 2) == Int.min)
        let month = try #require(ReportFrequency.monthly.span(named: "2026-11"))
        let report = FinancialReport.make(
            events: events, month: month, regionCode: "GB", developer: "Kiosk", products: [:])
        #expect(report.contains("Total_Units\t30"))
        let refund = split.scaled(by: 1, of: 3).negated
        #expect(refund.customerPriceMinorUnits == -3_333_333_333_333)
    }
}
