import Foundation
import KioskCore
import Testing

/// App Store Connect's Sales Summary report from money events: Apple's columns, units summed per product, country,
/// price and kind of sale, refunds as negative units, per-unit amounts whose totals equal the ledger's, sandbox
/// never included, and the periods each frequency names.
@Suite struct SalesSummaryReportTests {
    static let day = Date(timeIntervalSince1970: 1_795_478_400)  // 2026-11-24, a Tuesday

    static func event(
        _ id: Int64, storefront: String = "USA", currency: String = "USD", units: Int = 1, price: Int = 99,
        kind: MoneyEvent.Kind = .purchase, type: ProductType = .consumable, environment: StoreEnvironment = .production,
        at offset: TimeInterval = 3_600
    ) -> MoneyEvent {
        let split = Proceeds.of(
            priceMinorUnits: price, tax: TaxRule.defaultRule(for: storefront),
            commissionBasisPoints: Proceeds.standardCommission)
        return MoneyEvent(
            environment: environment, transactionId: id, revision: 1, kind: kind, occurredAt: day + offset, appId: 1,
            accountId: UUID(), originalTransactionId: id, productId: type == .autoRenewable ? "club" : "coins",
            productType: type, storefront: storefront, currency: currency, units: units,
            amounts: kind == .refund ? split.negated : split)
    }

    static let products: [String: SalesSummaryReport.ProductInfo] = [
        "1/coins": .init(referenceName: "Coins", bundleId: "com.example.app", appleIdentifier: 42, duration: nil),
        "1/club": .init(referenceName: "Club", bundleId: "com.example.app", appleIdentifier: 43, duration: .oneMonth),
    ]

    static func rows(_ report: String) -> [[String]] {
        report.split(separator: "\n").dropFirst().map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
    }

    // Proves a name a spreadsheet would run as a formula reaches the report as text (a leading '), while amounts and
    // refunds' negative units stay numbers, and a tab in a name cannot split a cell.
    @Test func cellsAreSafeToOpenInASpreadsheet() throws {
        let span = try #require(ReportFrequency.daily.span(named: "2026-11-24"))
        var products = Self.products
        products["1/coins"] = .init(
            referenceName: "=HYPERLINK(\"http://evil.example\")\tx", bundleId: "com.example.app", appleIdentifier: 42,
            duration: nil)
        let report = SalesSummaryReport.make(
            events: [Self.event(1), Self.event(2, units: -1, kind: .refund)], span: span, developer: "@SUM(1+1)",
            products: products)
        let rows = Self.rows(report)
        let column = { (name: String) in try #require(SalesSummaryReport.columns.firstIndex(of: name)) }
        let (title, developer, units) = (try column("Title"), try column("Developer"), try column("Units"))
        #expect(rows.allSatisfy { $0.count == SalesSummaryReport.columns.count }, "\(rows)")
        #expect(Set(rows.map { $0[title] }) == [#"'=HYPERLINK("http://evil.example") x"#])
        #expect(Set(rows.map { $0[developer] }) == ["'@SUM(1+1)"])
        #expect(rows.map { $0[units] }.sorted() == ["-1", "1"], "negative units stay a number")
        #expect(SalesSummaryReport.line(["-0.99", "+1 gem", "-2+3", "plain"]) == "-0.99\t'+1 gem\t'-2+3\tplain")
    }

    // Proves a payment of the monthly plan is a row of its own whose Period is the month it paid for, beside the
    // one-year subscription's up-front sales, and that its renewals sum like any.
    @Test func monthlyPlanPaymentsAreOneMonthRows() throws {
        let span = try #require(ReportFrequency.daily.span(named: "2026-11-24"))
        var products = Self.products
        products["1/club"] = .init(
            referenceName: "Club", bundleId: "com.example.app", appleIdentifier: 43, duration: .oneYear)
        func sale(_ id: Int64, price: Int, kind: MoneyEvent.Kind, plan: BillingPlanType) -> MoneyEvent {
            var event = Self.event(id, price: price, kind: kind, type: .autoRenewable)
            event.billingPlan = plan
            return event
        }
        let events = [
            sale(1, price: 5999, kind: .purchase, plan: .billedUpFront),
            sale(2, price: 599, kind: .purchase, plan: .monthly),
            sale(3, price: 599, kind: .renewal, plan: .monthly), sale(4, price: 599, kind: .renewal, plan: .monthly),
        ]
        let report = SalesSummaryReport.make(events: events, span: span, developer: "Kiosk", products: products)
        let column = { (name: String) in try #require(SalesSummaryReport.columns.firstIndex(of: name)) }
        let (period, units, price, subscription) = (
            try column("Period"), try column("Units"), try column("Customer Price"), try column("Subscription")
        )
        let rows = Self.rows(report).map { [$0[subscription], $0[period], $0[price], $0[units]] }.sorted {
            $0.lexicographicallyPrecedes($1)
        }
        #expect(
            rows == [
                ["New", "1 Month", "5.99", "1"], ["New", "1 Year", "59.99", "1"], ["Renewal", "1 Month", "5.99", "2"],
            ],
            "\(report)")
    }

    @Test func rowsSumUnitsAndRefundsAreNegative() throws {
        let span = try #require(ReportFrequency.daily.span(named: "2026-11-24"))
        let events = [
            Self.event(1), Self.event(2), Self.event(3, units: -1, kind: .refund),
            Self.event(4, storefront: "GBR", currency: "GBP"),
            Self.event(5, type: .autoRenewable), Self.event(6, kind: .renewal, type: .autoRenewable),
            Self.event(7, environment: .sandbox), Self.event(8, at: 86_400),
        ]
        let report = SalesSummaryReport.make(events: events, span: span, developer: "Kiosk", products: Self.products)
        let header = try #require(report.split(separator: "\n").first)
        #expect(header.split(separator: "\t").map(String.init) == SalesSummaryReport.columns)
        #expect(SalesSummaryReport.columns.count == 28)
        let rows = Self.rows(report)
        #expect(rows.allSatisfy { $0.count == 28 }, "\(rows)")
        let column = { (name: String) in try #require(SalesSummaryReport.columns.firstIndex(of: name)) }
        let units = try column("Units")
        let country = try column("Country Code")
        let type = try column("Product Type Identifier")
        let proceeds = try column("Developer Proceeds")
        let price = try column("Customer Price")
        let subscription = try column("Subscription")
        let period = try column("Period")
        // Two US coin sales in one row, the refund in its own, the British sale, the subscription's new and renewal.
        #expect(rows.count == 5, "\(report)")
        let usCoins = rows.first { $0[country] == "US" && $0[type] == "IA1" && $0[units] == "2" }
        #expect(usCoins?[proceeds] == "0.69" && usCoins?[price] == "0.99", "\(report)")
        let refund = rows.first { $0[units] == "-1" }
        #expect(refund?[proceeds] == "0.69" && refund?[price] == "-0.99", "per unit, as Apple writes refunds")
        #expect(rows.contains { $0[country] == "GB" && $0[proceeds] == "0.58" })
        #expect(
            Set(rows.filter { $0[type] == "IAY" }.map { "\($0[subscription]) \($0[period])" }) == [
                "New 1 Month", "Renewal 1 Month",
            ])
        let begin = try column("Begin Date")
        let end = try column("End Date")
        #expect(rows.allSatisfy { $0[begin] == "11/24/2026" && $0[end] == "11/24/2026" })
    }

    @Test func totalsEqualTheLedgerEvenWhenProceedsDoNotDivide() throws {
        let span = try #require(ReportFrequency.monthly.span(named: "2026-11"))
        // Seven coins at once, 693 → 485.1 → 485 proceeds: not a multiple of 7.
        let events = [Self.event(1, units: 7, price: 693), Self.event(2, units: 3, price: 297)]
        let report = SalesSummaryReport.make(events: events, span: span, developer: "Kiosk", products: Self.products)
        let rows = Self.rows(report)
        let units = try #require(SalesSummaryReport.columns.firstIndex(of: "Units"))
        let proceeds = try #require(SalesSummaryReport.columns.firstIndex(of: "Developer Proceeds"))
        let total = rows.map { Int($0[units])! * Int($0[proceeds].replacingOccurrences(of: ".", with: ""))! }.reduce(
            0, +)
        #expect(total == events.map(\.amounts.proceedsMinorUnits).reduce(0, +), "\(report)")
        #expect(rows.map { Int($0[units])! }.reduce(0, +) == 10)
    }

    @Test func frequenciesNameTheirPeriods() throws {
        let utc = { (text: String) in ISO8601DateFormatter().date(from: text + "T00:00:00Z")! }
        #expect(
            ReportFrequency.daily.span(named: "2026-11-24")
                == DateInterval(start: utc("2026-11-24"), end: utc("2026-11-25")))
        // The week of Tuesday 24 November 2026: Monday the 23rd to Sunday the 29th.
        for day in ["2026-11-23", "2026-11-24", "2026-11-29"] {
            #expect(
                ReportFrequency.weekly.span(named: day)
                    == DateInterval(start: utc("2026-11-23"), end: utc("2026-11-30")))
        }
        #expect(
            ReportFrequency.monthly.span(named: "2026-02")
                == DateInterval(start: utc("2026-02-01"), end: utc("2026-03-01")))
        #expect(
            ReportFrequency.yearly.span(named: "2026") == DateInterval(start: utc("2026-01-01"), end: utc("2027-01-01"))
        )
        for bad in ["2026-02-30", "2026-13-01", "2026-1-01", "26-11-24", "2026-11-24T00", "", "１２３４-11-24", "2026-11"] {
            #expect(ReportFrequency.daily.span(named: bad) == nil, "\(bad)")
        }
        #expect(ReportFrequency.monthly.span(named: "2026-11-24") == nil)
        #expect(ReportFrequency.yearly.span(named: "99999") == nil)
    }

    @Test func financialReportKeepsOneRegionAndEndsWithItsTotals() throws {
        let month = try #require(ReportFrequency.monthly.span(named: "2026-11"))
        let events = [
            Self.event(1), Self.event(2), Self.event(3, units: -1, kind: .refund),
            Self.event(4, storefront: "GBR", currency: "GBP"), Self.event(5, storefront: "DEU", currency: "EUR"),
            Self.event(6, environment: .sandbox),
        ]
        let us = FinancialReport.make(
            events: events, month: month, regionCode: "US", developer: "Kiosk", products: Self.products)
        let lines = us.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == FinancialReport.columns.joined(separator: "\t"))
        let rows = lines.dropFirst().prefix { !$0.isEmpty }.map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
        let quantity = try #require(FinancialReport.columns.firstIndex(of: "Quantity"))
        let kind = try #require(FinancialReport.columns.firstIndex(of: "Sales or Return"))
        let extended = try #require(FinancialReport.columns.firstIndex(of: "Extended Partner Share"))
        #expect(rows.map { "\($0[kind]) \($0[quantity]) \($0[extended])" }.sorted() == ["R -1 -0.69", "S 2 1.38"])
        #expect(rows.allSatisfy { $0[0] == "11/01/2026" && $0[1] == "11/30/2026" })
        #expect(Array(lines.suffix(5)) == ["", "Total_Rows\t2", "Total_Amount\t0.69", "Total_Units\t1", ""])

        let all = FinancialReport.make(
            events: events, month: month, regionCode: FinancialReport.allRegions, developer: "Kiosk",
            products: Self.products)
        #expect(all.contains("Total_Rows\t4") && !all.contains("Total_Amount"), "mixed currencies have no total")
        #expect(FinancialReport.region(of: "DEU") == "EU" && FinancialReport.region(of: "CHE") == "CH")
    }
}
