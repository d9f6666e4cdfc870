import Foundation
import KioskCore
import Testing

/// Kiosk's reports against Apple's own documentation of them, not against Kiosk's column constants: the golden
/// files in `Resources/AppleReports` copy App Store Connect Help's column tables and sample rows (each names its
/// page). The header must begin with Apple's documented columns, in Apple's order, and the events behind Apple's
/// sample rows must come out as Apple's rows, in the columns the samples show.
@Suite struct AppleReportSampleTests {
    static let day = Date(timeIntervalSince1970: 1_795_478_400)  // 2026-11-24

    /// The non-comment lines of a golden file.
    static func golden(_ name: String) throws -> [String] {
        let url = try #require(
            Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources/AppleReports"))
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("#") }
    }

    static func cells(_ line: Substring) -> [String] {
        line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func headersBeginWithApplesDocumentedColumns() throws {
        let sales = try Self.golden("summary-sales-report-columns.txt")
        #expect(sales.count == 8)
        #expect(Array(SalesSummaryReport.columns.prefix(sales.count)) == sales)
        let events = try Self.golden("subscription-event-report-columns.txt")
        #expect(events.count == 16)
        #expect(Array(SubscriptionEventReport.columns.prefix(events.count)) == events)
        // What the files start with, not only the constants.
        let span = try #require(ReportFrequency.daily.span(named: "2026-11-24"))
        let report = SalesSummaryReport.make(events: [], span: span, developer: "Dev", products: [:])
        #expect(Array(Self.cells(report.dropLast()).prefix(sales.count)) == sales)
        #expect(Array(Self.cells(SubscriptionEventReport.make([]).text.dropLast()).prefix(events.count)) == events)
    }

    /// Apple's two samples as the events behind them: an in-app purchase of 50 units in Great Britain and a refund of
    /// 50 units in the United States, each with the sample's price and proceeds per unit.
    @Test func applesSampleRowsComeOutAsApplesRows() throws {
        let sample = try Self.golden("summary-sales-report-sample.tsv")
        let header = Self.cells(Substring(sample[0]))
        let rows = sample.dropFirst().map { Self.cells(Substring($0)) }
        #expect(rows.count == 2)
        func event(
            _ id: Int64, _ title: String, storefront: String, currency: String, units: Int, price: Int, proceeds: Int
        )
            -> MoneyEvent
        {
            MoneyEvent(
                environment: .production, transactionId: id, revision: 1, kind: units < 0 ? .refund : .purchase,
                occurredAt: Self.day + 3_600, appId: 1, accountId: UUID(), originalTransactionId: id,
                productId: title, productType: .consumable, storefront: storefront, currency: currency, units: units,
                amounts: Proceeds(
                    customerPriceMinorUnits: price * units, taxMinorUnits: 0, commissionMinorUnits: 0,
                    proceedsMinorUnits: proceeds * units, pricesIncludeTax: true, taxRateBasisPoints: 0,
                    commissionBasisPoints: Proceeds.standardCommission))
        }
        let events = [
            event(1, "In-App One", storefront: "GBR", currency: "GBP", units: 50, price: 69, proceeds: 42),
            event(2, "App One", storefront: "USA", currency: "USD", units: -50, price: 99, proceeds: 70),
        ]
        let products = Dictionary(
            uniqueKeysWithValues: events.map {
                (
                    "1/\($0.productId)",
                    SalesSummaryReport.ProductInfo(
                        referenceName: $0.productId, bundleId: "com.example.app", appleIdentifier: 42, duration: nil)
                )
            })
        let span = try #require(ReportFrequency.daily.span(named: "2026-11-24"))
        let report = SalesSummaryReport.make(events: events, span: span, developer: "Dev", products: products)
        let written = report.split(separator: "\n").dropFirst().map(Self.cells)
        #expect(written.count == 2, "\(report)")
        for row in rows {
            let expected = Dictionary(uniqueKeysWithValues: zip(header, row))
            let kiosk = try #require(
                written.first { $0[SalesSummaryReport.columns.firstIndex(of: "Title")!] == expected["Title"] },
                "no row for \(row) in \(report)")
            for (column, value) in expected where !value.isEmpty {
                let index = try #require(SalesSummaryReport.columns.firstIndex(of: column), "\(column)")
                // 1F is an app's type identifier; Kiosk sells in-app purchases only, so that sample is reproduced
                // with one (IA1), its numbers the same.
                if column == "Product Type Identifier" && value == "1F" {
                    #expect(kiosk[index] == "IA1")
                } else if let number = Decimal(string: value), column != "Title" {
                    #expect(Decimal(string: kiosk[index]) == number, "\(column): Apple \(value), Kiosk \(kiosk[index])")
                } else {
                    #expect(kiosk[index] == value, "\(column): Apple \(value), Kiosk \(kiosk[index])")
                }
            }
        }
    }
}
