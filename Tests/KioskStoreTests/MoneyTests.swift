import Foundation
import KioskCore
import KioskTesting
import Testing

@testable import KioskStore

/// Money over HTTP on both engines: each purchase, refund and refund reversal records its price, tax, commission
/// and proceeds when it happens; tax rules and the Small Business Program apply from their dates; the prices list
/// shows what a sale earns.
@Suite struct MoneyTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// The sandbox's money events of the test's days.
    static func events(_ store: TestStore) async throws -> [[String: Any]] {
        let answer = try await store.request(
            .GET, "/admin/v1/money/events?environment=sandbox&from=2026-09-20&to=2026-09-30")
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(answer.json["events"] as? [[String: Any]], "\(answer.text)")
    }

    /// Units, price, tax, commission and proceeds of an event.
    static func figures(_ event: [String: Any]) -> [Int] {
        let amounts = event["amounts"] as? [String: Any] ?? [:]
        return [
            event["units"] as? Int ?? 0, amounts["customerPriceMinorUnits"] as? Int ?? 0,
            amounts["taxMinorUnits"] as? Int ?? 0, amounts["commissionMinorUnits"] as? Int ?? 0,
            amounts["proceedsMinorUnits"] as? Int ?? 0,
        ]
    }

    @Test(arguments: TestDatabase.available)
    func salesRefundsAndReversalsRecordTheirProceeds(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.preparePurchaseCatalog()
            try await store.createTester("uk@example.com", settings: ["storefront": "GBR"])
            let american = try await store.signIn()
            let british = try await store.signIn("uk@example.com")

            // US$0.99, tax added at checkout: 30% of 99 → 30, proceeds 69. £0.99 with 20% VAT inside: 83 net,
            // 16 tax, 25 commission, 58 proceeds.
            let coins = try #require(try await store.pay(TestStore.coins, token: american).transactionId)
            _ = try #require(try await store.pay(TestStore.coins, token: british).transactionId)
            var events = try await Self.events(store)
            #expect(events.map(Self.figures) == [[1, 99, 0, 30, 69], [1, 99, 16, 25, 58]])
            #expect(events.map { $0["kind"] as? String } == ["purchase", "purchase"])
            #expect(events.map { $0["storefront"] as? String } == ["USA", "GBR"])
            #expect(events.map { $0["currency"] as? String } == ["USD", "GBP"])

            // Half refunded (49 of 99), then the refund taken back: negative units, then the same amounts back.
            clock.advance(by: 60)
            let refunded = try await RefundTests.control(store, coins, "refund", ["reason": 1, "percentage": 50])
            #expect(refunded.status == 200, "\(refunded.text)")
            #expect(try await RefundTests.control(store, coins, "refund", ["percentage": 50]).status == 200)
            clock.advance(by: 60)
            #expect(try await RefundTests.control(store, coins, "reverse-refund", [:]).status == 200)
            events = try await Self.events(store)
            let ofCoins = events.filter { $0["transactionId"] as? Int == Int(coins) }
            #expect(ofCoins.map { $0["kind"] as? String } == ["purchase", "refund", "refund_reversal"])
            #expect(ofCoins.map(Self.figures) == [[1, 99, 0, 30, 69], [-1, -49, 0, -15, -34], [1, 49, 0, 15, 34]])
            let worth = ofCoins.map { Self.figures($0)[4] }.reduce(0, +)
            #expect(worth == 69, "after the reversal the sale is worth its proceeds again")

            // A 25% rule from tomorrow leaves today's sales at 20%; the Small Business Program from now lowers
            // the commission to 15%.
            let tomorrow = Self.start + 86_400
            let rule = try await store.request(
                .PUT, "/admin/v1/tax-rules/gbr",
                json: [
                    "pricesIncludeTax": true, "rateBasisPoints": 2_500,
                    "effectiveFrom": ISO8601DateFormatter().string(from: tomorrow),
                ])
            #expect(rule.status == 200, "\(rule.text)")
            let enrolled = try await store.request(
                .PUT, "/admin/v1/agreements/small-business",
                json: ["since": ISO8601DateFormatter().string(from: clock.now())])
            #expect(enrolled.status == 200, "\(enrolled.text)")
            #expect(enrolled.json["smallBusinessProgramSince"] is String)
            _ = try await store.pay(TestStore.coins, token: british)
            clock.advance(by: 86_400)
            _ = try await store.pay(TestStore.coins, token: british)
            events = try await Self.events(store)
            // 15% of 83 = 12.45 → 12; at 25%: 99 / 1.25 = 79.2 → 79 net, 20 tax, 11.85 → 12 commission.
            #expect(events.suffix(2).map(Self.figures) == [[1, 99, 16, 12, 71], [1, 99, 20, 12, 67]])

            // The production store saw none of it.
            let production = try await store.request(.GET, "/admin/v1/money/events?from=2026-09-20&to=2026-09-30")
            #expect((production.json["events"] as? [Any])?.isEmpty == true, "\(production.text)")
        }
    }

    @Test(arguments: TestDatabase.available)
    func pricesShowWhatASaleEarnsAndRulesAreChecked(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(Self.start)) { store in
            try await store.preparePurchaseCatalog()
            let prices = try await store.request(
                .GET, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.coins)/prices")
            let rows = try #require(prices.json["prices"] as? [[String: Any]], "\(prices.text)")
            let british = try #require(rows.first { $0["storefront"] as? String == "GBR" })
            #expect(british["proceedsMinorUnits"] as? Int == 58 && british["proceeds"] as? String == "0.58")
            #expect(british["taxMinorUnits"] as? Int == 16 && british["commissionBasisPoints"] as? Int == 3_000)

            let list = try await store.request(.GET, "/admin/v1/tax-rules")
            #expect((list.json["inForce"] as? [Any])?.count == Storefront.all.count, "\(list.text)")
            for (body, code) in [
                (["pricesIncludeTax": true, "rateBasisPoints": 10_001] as [String: Any], "invalid_tax_rate"),
                (["pricesIncludeTax": true, "rateBasisPoints": -1], "invalid_tax_rate"),
                (["pricesIncludeTax": true, "rateBasisPoints": 1e30], "invalid_value"),
            ] {
                let refused = try await store.request(.PUT, "/admin/v1/tax-rules/GBR", json: body)
                #expect(refused.status == 400, "\(refused.text)")
                #expect(refused.errorCode == code, "\(refused.text)")
            }
            let unknown = try await store.request(
                .PUT, "/admin/v1/tax-rules/XYZ", json: ["pricesIncludeTax": true, "rateBasisPoints": 100])
            #expect(unknown.status == 400 && unknown.errorCode == "unknown_storefront", "\(unknown.text)")
            for (query, code) in [
                ("from=2026-09-20", "invalid_date"), ("from=2026-09-20&to=2028-01-01", "invalid_span"),
                ("from=yesterday&to=2026-09-30", "invalid_date"),
            ] {
                let refused = try await store.request(.GET, "/admin/v1/money/events?" + query)
                #expect(refused.status == 400 && refused.errorCode == code, "\(query): \(refused.text)")
            }
        }
    }

    /// The Sales Summary report of a day: Apple's columns, the production sales only, and proceeds that add up to
    /// the ledger's; bad frequencies and dates are refused.
    @Test(arguments: TestDatabase.available)
    func salesReportAddsUpToTheLedger(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(Self.start)) { store in
            try await store.preparePurchaseCatalog()
            try await store.buyCoinsInProduction()
            _ = try await store.pay(TestStore.coins, token: try await store.signIn())

            let report = try await store.request(.GET, "/admin/v1/reports/sales?frequency=daily&date=2026-09-21")
            #expect(report.status == 200, "\(report.text)")
            #expect(report.header("Content-Type")?.hasPrefix("text/tab-separated-values") == true)
            let lines = report.text.split(separator: "\n").map {
                $0.split(separator: "\t", omittingEmptySubsequences: false)
            }
            #expect(lines.first?.map(String.init) == SalesSummaryReport.columns)
            let rows: [[String: String]] = lines.dropFirst().map { fields in
                Dictionary(uniqueKeysWithValues: zip(SalesSummaryReport.columns, fields.map(String.init)))
            }
            let summary: [String] = rows.map { row in
                [row["Country Code"], row["Units"], row["Developer Proceeds"]].map { $0 ?? "" }.joined(separator: " ")
            }
            #expect(summary.sorted() == ["GB 1 0.58", "US 2 0.69"])
            #expect(rows.allSatisfy { $0["SKU"] == TestStore.coins && $0["Product Type Identifier"] == "IA1" })
            let ledger = try await store.request(.GET, "/admin/v1/money/events?from=2026-09-21&to=2026-09-22")
            let events = (ledger.json["events"] as? [[String: Any]]) ?? []
            let proceeds: [Int] = events.compactMap { event in
                (event["amounts"] as? [String: Any])?["proceedsMinorUnits"] as? Int
            }
            let expected = 2 * 69 + 58
            #expect(proceeds.reduce(0, +) == expected, "the report's totals are the production ledger's")

            let empty = try await store.request(.GET, "/admin/v1/reports/sales?frequency=monthly&date=2026-08")
            #expect(empty.status == 200 && empty.text.split(separator: "\n").count == 1, "\(empty.text)")
            for (query, code) in [
                ("frequency=hourly&date=2026-09-21", "invalid_frequency"),
                ("frequency=daily&date=2026-09-31", "invalid_report_date"), ("frequency=daily", "invalid_report_date"),
            ] {
                let refused = try await store.request(.GET, "/admin/v1/reports/sales?" + query)
                #expect(refused.status == 400 && refused.errorCode == code, "\(query): \(refused.text)")
            }
        }
    }

    /// The Subscription Event report of a day: a production subscription's start, in Apple's columns; the sandbox's
    /// never; a day that is no day refused.
    @Test(arguments: TestDatabase.available)
    func subscriptionEventReportTellsTheDaysStarts(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(Self.start)) { store in
            try await store.prepareSubscriptionCatalog()
            for action in ["submit", "approve"] {
                let review = try await store.request(
                    .POST, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)/review",
                    json: ["action": action])
                #expect(review.status == 200, "\(review.text)")
            }
            let account = try await store.request(
                .POST, "/admin/v1/accounts",
                json: ["email": "us@example.com", "password": TestStore.password, "storefront": "USA"])
            #expect(account.status == 201, "\(account.text)")
            let production = try await store.signIn("us@example.com", sandbox: false)
            #expect(try await store.pay(TestStore.monthly, token: production, sandbox: false).transactionId != nil)
            _ = try await store.pay(TestStore.monthly, token: try await store.signIn())

            let report = try await store.request(.GET, "/admin/v1/reports/subscription-events?date=2026-09-21")
            #expect(report.status == 200, "\(report.text)")
            let lines = report.text.split(separator: "\n").map {
                $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            }
            #expect(lines.first == SubscriptionEventReport.columns)
            let rows = lines.dropFirst().map {
                Dictionary(uniqueKeysWithValues: zip(SubscriptionEventReport.columns, $0))
            }
            #expect(rows.count == 1, "one production start; the sandbox's is not reported: \(report.text)")
            let row = rows.first ?? [:]
            #expect(row["Event"] == "Subscribe" && row["Quantity"] == "1" && row["Country"] == "US", "\(row)")
            #expect(row["Event Date"] == "2026-09-21" && row["Original Start Date"] == "2026-09-21")
            #expect(row["Standard Subscription Duration"] == "1 Month" && row["Consecutive Paid Periods"] == "1")
            #expect(row["Subscription Group ID"] == "21000001" && row["App Name"] == "Example", "\(row)")

            // The console's Money page offers both of the day's reports to download, as the API serves them.
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            for (path, filename, api) in [
                ("subscription-events.tsv", "Subscription_Event_20260921.txt", report.text),
                (
                    "sales.tsv", "S_D_20260921.txt",
                    try await store.request(.GET, "/admin/v1/reports/sales?frequency=daily&date=2026-09-21").text
                ),
            ] {
                let download = try await visitor.get("/console/money/\(path)?date=2026-09-21")
                #expect(download.status == 200 && download.text == api, "\(path): \(download.text)")
                #expect(download.headers.first(name: "Content-Disposition")?.contains(filename) == true, "\(path)")
            }
            let badDay = try await visitor.get("/console/money/subscription-events.tsv?date=09-21")
            #expect(badDay.status == 400 && badDay.text.contains("is not a day."), "\(badDay.text)")
            #expect(try await visitor.get("/console/money").text.contains("subscription-events.tsv?date="))

            let quiet = try await store.request(.GET, "/admin/v1/reports/subscription-events?date=2026-09-20")
            #expect(quiet.status == 200 && quiet.text.split(separator: "\n").count == 1)
            for date in ["2026-09", "2026-02-30", ""] {
                let refused = try await store.request(.GET, "/admin/v1/reports/subscription-events?date=\(date)")
                #expect(refused.status == 400 && refused.errorCode == "invalid_report_date", "\(date)")
            }
        }
    }

    /// The charts' series: sandbox sales by storefront, converted to dollars with a configured rate; bad rates and
    /// groupings are refused.
    @Test(arguments: TestDatabase.available)
    func seriesConvertWithConfiguredRates(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(Self.start)) { store in
            try await store.preparePurchaseCatalog()
            try await store.createTester("uk@example.com", settings: ["storefront": "GBR"])
            let rate = try await store.request(
                .PUT, "/admin/v1/exchange-rates/gbp",
                json: ["usdPerUnit": "1.25", "effectiveFrom": "2026-01-01T00:00:00Z"])
            #expect(rate.status == 200 && rate.json["usdPerUnit"] as? String == "1.25", "\(rate.text)")
            _ = try await store.pay(TestStore.coins, token: try await store.signIn())
            _ = try await store.pay(TestStore.coins, token: try await store.signIn("uk@example.com"))

            let series = try await store.request(
                .GET, "/admin/v1/money/series?environment=sandbox&from=2026-09-01&to=2026-10-01&by=storefront")
            #expect(series.status == 200, "\(series.text)")
            let points = try #require(series.json["points"] as? [[String: Any]], "\(series.text)")
            // £0.99 × 1.25 = $1.2375 → 124¢; its 58p of proceeds → 73¢.
            #expect(points.map { $0["key"] as? String } == ["GBR", "USA"])
            #expect(points.map { $0["customerPriceUSCents"] as? Int } == [124, 99])
            #expect(points.map { $0["proceedsUSCents"] as? Int } == [73, 69])
            #expect((series.json["unconverted"] as? [String])?.isEmpty == true)
            let rates = try await store.request(.GET, "/admin/v1/exchange-rates")
            #expect((rates.json["rates"] as? [[String: Any]])?.count == 1, "\(rates.text)")

            for (path, body, code) in [
                ("gbp", ["usdPerUnit": "1.2345678"], "invalid_exchange_rate"),
                ("gbp", ["usdPerUnit": "-1"], "invalid_exchange_rate"),
                ("usd", ["usdPerUnit": "1"], "unknown_currency"),
                ("XYZ", ["usdPerUnit": "1"], "unknown_currency"),
            ] {
                let refused = try await store.request(.PUT, "/admin/v1/exchange-rates/" + path, json: body)
                #expect(refused.status == 400 && refused.errorCode == code, "\(path) \(body): \(refused.text)")
            }
            // The largest price a catalog takes, ten at once, at the largest rate: the dollars hold at their bound.
            let largest = try await store.request(
                .PATCH, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.coins)",
                json: ["pricing": ["tier": 1, "customPrices": ["GBR": Pricing.maximumMinorUnits]]])
            #expect(largest.status == 200, "\(largest.text)")
            #expect(
                try await store.request(
                    .PUT, "/admin/v1/exchange-rates/GBP",
                    json: ["usdPerUnit": "1000000", "effectiveFrom": "2026-01-01T00:00:00Z"]
                ).status == 200)
            let bought = try await store.pay(
                TestStore.coins, token: try await store.signIn("uk@example.com"), quantity: 10)
            #expect(bought.transactionId != nil, "\(bought.text)")
            let extreme = try await store.request(
                .GET, "/admin/v1/money/series?environment=sandbox&from=2026-09-01&to=2026-10-01&by=storefront")
            let british = (extreme.json["points"] as? [[String: Any]])?.first { $0["key"] as? String == "GBR" }
            #expect(british?["customerPriceUSCents"] as? Int == Int.max, "\(extreme.text)")
            #expect(try await store.request(.GET, "/health").status == 200)

            let badGrouping = try await store.request(
                .GET, "/admin/v1/money/series?from=2026-09-01&to=2026-10-01&by=hour")
            #expect(badGrouping.status == 400 && badGrouping.errorCode == "invalid_grouping", "\(badGrouping.text)")
        }
    }

    /// The one-year rule on a subscription's own history: a renewal after 390 paid days across a 45-day lapse pays
    /// 15% ("Rate After One Year"); after a 75-day lapse the count started over and it pays 30%.
    @Test func renewalsCountPaidDaysAcrossLapses() {
        let day: TimeInterval = 86_400
        func period(_ id: Int64, startDay: Double, price: Int = 99) -> StoreTransaction {
            let purchased: Date = Self.start.addingTimeInterval(startDay * day)
            let expires: Date = purchased.addingTimeInterval(30 * day)
            return StoreTransaction(
                id: id, environment: .production, appId: 1, accountId: UUID(), productId: "monthly",
                productType: .autoRenewable, originalTransactionId: 1, purchaseDate: purchased,
                originalPurchaseDate: Self.start, quantity: 1, priceMinorUnits: price, currency: "USD",
                storefront: "USA", storefrontId: 143_441, applicationUsername: nil, appAccountToken: nil,
                orderId: "O\(id)", expiresDate: expires,
                signedTransaction: "")
        }
        for (gap, commission) in [(45.0, 1_500), (75.0, 3_000)] {
            let first = (0..<7).map { period(Int64($0 + 1), startDay: Double($0) * 30) }
            let second = (0..<6).map { period(Int64($0 + 10), startDay: 210 + gap + Double($0) * 30) }
            let renewal = period(20, startDay: 210 + gap + 180)
            let event = SalesLedger.sale(
                renewal, kind: .renewal, chain: first + second + [renewal], taxRules: [],
                agreement: PaidAppsAgreement())
            #expect(event.amounts.commissionBasisPoints == commission, "after a \(gap)-day lapse")
            #expect(event.amounts.reason == (commission == 1_500 ? "Rate After One Year" : nil))
        }
        // A free trial is no paid service.
        let trial = period(1, startDay: 0, price: 0)
        #expect(SalesLedger.paidPeriods([trial], before: period(2, startDay: 30)).isEmpty)
    }
}
