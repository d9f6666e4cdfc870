import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

@testable import KioskStore

/// The console's subscriptions dashboard over HTTP on both engines: a scripted sandbox history (free trials that
/// convert and one that fails, yearly subscriptions in two storefronts, a refund, an expiry, renewals on the sandbox
/// clock) and the page's numbers, which must equal both the story's and what the ledger's signed transactions add
/// up to.
@Suite struct SubscriptionDashboardTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09-21T14:13:20Z
    static let monthly = "com.example.dash.monthly"
    static let yearly = "com.example.dash.yearly"
    /// The testers and their storefronts.
    static let testers = [
        ("a@example.com", "USA"), ("b@example.com", "GBR"), ("c@example.com", "USA"), ("d@example.com", "GBR"),
        ("e@example.com", "GBR"), ("g@example.com", "USA"),
    ]

    // Proves the dashboard's figures for a scripted sandbox history are the story's and the ledger's, in total, by
    // product and by storefront; and that production, where nothing happened, shows none of it.
    @Test(arguments: TestDatabase.available)
    func dashboardNumbersEqualTheLedgers(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(Self.start)) { store in
            try await Self.prepareCatalog(store)
            let now = try await Self.playStory(store)
            let ledger = try await Self.ledger(store)
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let page = try await visitor.get("/console/subscriptions?environment=sandbox")
            #expect(page.status == 200, "\(page.text)")
            Self.checkStory(page.text)
            Self.checkAgainstLedger(page.text, ledger: ledger, now: now)
            let production = try await visitor.get("/console/subscriptions")
            #expect(production.status == 200 && production.text.contains("<h1>Subscriptions</h1>"))
            #expect(Self.cell("total-active", in: production.text) == "0")
            #expect(Self.cell("total-mrr", in: production.text) == "USD 0.00")
            #expect(Self.cell("total-refunds", in: production.text) == "0")
        }
    }

    // Proves a subscription bought at the very instant the page is read counts: the store's clock does not move
    // between the two (a manual clock, as in every test and the browser's walkthrough), and a period bought at
    // `now` is bought by then.
    @Test(arguments: TestDatabase.available)
    func aSubscriptionBoughtThisInstantIsActive(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(Self.start)) { store in
            try await Self.prepareCatalog(store)
            let bought = try await store.pay(Self.yearly, token: try await store.signIn("c@example.com"))
            #expect(bought.transactionId != nil, "\(bought.text)")
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let page = try await visitor.get("/console/subscriptions?environment=sandbox")
            #expect(Self.cell("total-active", in: page.text) == "1", "\(page.text)")
            #expect(Self.cell("total-mrr", in: page.text) == "USD 9.99", "\(page.text)")
        }
    }

    // Proves the page is in the navigation after Money and needs what Money needs to read.
    @Test func pageIsASectionThatNeedsReadSales() {
        let paths = ConsoleRenderer.sections.map(\.path)
        let money = paths.firstIndex(of: "/console/money") ?? -1
        #expect(paths.firstIndex(of: "/console/subscriptions") == money + 1)
        #expect(ConsoleAccess.permission(method: .get, path: "/console/subscriptions") == .readSales)
        #expect(
            ConsoleAccess.permission(method: .get, path: "/console/subscriptions")
                == ConsoleAccess.permission(method: .get, path: "/console/money"))
    }

    // MARK: The story

    /// One app, the group "Dash": monthly (USD 0.99, GBP 0.99) with a one-week free trial, yearly (USD 119.88,
    /// GBP 95.88) without an offer; GBP at 1.25 US dollars; the six testers.
    static func prepareCatalog(_ store: TestStore) async throws {
        try await store.preparePurchaseCatalog()
        let group = try await store.request(
            .POST, "/admin/v1/apps/\(TestStore.bundleId)/subscription-groups",
            json: ["referenceName": "Dash", "localizations": [["locale": "en-US", "name": "Dash"]]])
        #expect(group.status == 201, "\(group.text)")
        let trial: [[String: Any]] = [["paymentMode": "free_trial", "period": "P1W", "numberOfPeriods": 1]]
        for (productId, level, duration, pricing, offers) in [
            (monthly, 1, "P1M", ["tier": 1] as [String: Any], trial),
            (yearly, 2, "P1Y", ["tier": 1, "customPrices": ["USA": 11_988, "GBR": 9_588]], []),
        ] {
            let created = try await store.createProduct(
                productId, type: "auto_renewable",
                fields: [
                    "subscription": ["group": "Dash", "level": level], "duration": duration, "pricing": pricing,
                    "introductoryOffers": offers,
                ])
            #expect(created.status == 201, "\(created.text)")
        }
        let rate = try await store.request(
            .PUT, "/admin/v1/exchange-rates/GBP", json: ["usdPerUnit": "1.25", "effectiveFrom": "2026-01-01T00:00:00Z"])
        #expect(rate.status == 200, "\(rate.text)")
        for (email, storefront) in testers {
            try await store.createTester(email, settings: ["storefront": storefront])
        }
    }

    /// On the sandbox clock (a week's trial lasts 3 minutes, a month 5): a, b and g start trials of the monthly; c,
    /// d and e buy the yearly. b's first renewal fails; d is refunded at +1m; at +3m the trials end (a and g renew,
    /// b goes into billing retry and is expired); g is expired at +5m; a renews again at +8m. Returns the sandbox
    /// time at the end, +9m.
    static func playStory(_ store: TestStore) async throws -> Date {
        var originals: [String: String] = [:]
        for (email, _) in testers {
            let product = ["a", "b", "g"].contains(email.prefix(1)) ? monthly : yearly
            let bought = try await store.pay(product, token: try await store.signIn(email))
            let originalTransactionId = try #require(bought.transactionId, "\(bought.text)")
            originals[String(email.prefix(1))] = originalTransactionId
        }
        let (b, d, g) = (originals["b"] ?? "", originals["d"] ?? "", originals["g"] ?? "")
        #expect(try await store.subscriptionControl(b, "fail-renewal").status == 200)
        #expect(try await store.advanceSandboxClock("1m").status == 200)
        let refunded = try await RefundTests.control(store, d, "refund", ["reason": 1])
        #expect(refunded.status == 200, "\(refunded.text)")
        let trialsEnd = try await store.advanceSandboxClock("2m")
        #expect(trialsEnd.json["renewed"] as? Int == 2, "\(trialsEnd.text)")
        let expiredB = try await store.subscriptionControl(b, "expire")
        #expect(expiredB.status == 200, "\(expiredB.text)")
        #expect(try await store.advanceSandboxClock("2m").status == 200)
        #expect(try await store.subscriptionControl(g, "expire").status == 200)
        let last = try await store.advanceSandboxClock("4m")
        #expect(last.json["renewed"] as? Int == 1, "\(last.text)")
        let now = try #require(last.json["now"] as? Int, "\(last.text)")
        return Date(millisecondsSince1970: Int64(now))
    }

    /// The figures the story makes, by hand.
    static func checkStory(_ page: String) {
        #expect(cell("total-active", in: page) == "3", "a, c and e")
        #expect(cell("total-trials", in: page) == "0")
        #expect(cell("total-mrr", in: page) == "USD 20.97", "0.99 + 119.88 / 12 + GBP 95.88 / 12 × 1.25")
        #expect(cell("total-mrr-as-sold", in: page) == "GBP 7.99, USD 10.98")
        #expect(cell("total-churn", in: page) == "2 of 5 (40.0%)", "d refunded, g expired; a, c, d, e, g paid")
        #expect(cell("total-trial-conversion", in: page) == "2 of 3 (66.7%)", "a and g of a, b and g")
        #expect(cell("total-renewal-rate", in: page) == "1 of 2 (50.0%)", "a's first paid period; g's did not")
        #expect(cell("total-refunds", in: page) == "1")
        #expect(cell("total-refunded", in: page) == "USD 119.85 (GBP 95.88)")
        let columns = [
            "active", "trials", "mrr", "asSold", "churn", "conversion", "renewals", "refunds", "refunded",
        ]
        func row(_ table: String, _ key: String) -> [String: String] {
            Dictionary(uniqueKeysWithValues: zip(columns, rowCells(table, key: key, in: page).dropFirst()))
        }
        #expect(
            row("subscriptions-by-product", monthly) == [
                "active": "1", "trials": "0", "mrr": "USD 0.99", "asSold": "USD 0.99", "churn": "1 of 2 (50.0%)",
                "conversion": "2 of 3 (66.7%)", "renewals": "1 of 2 (50.0%)", "refunds": "0", "refunded": "USD 0.00",
            ])
        #expect(
            row("subscriptions-by-product", yearly) == [
                "active": "2", "trials": "0", "mrr": "USD 19.98", "asSold": "GBP 7.99, USD 9.99",
                "churn": "1 of 3 (33.3%)", "conversion": "0 of 0", "renewals": "0 of 0", "refunds": "1",
                "refunded": "USD 119.85 (GBP 95.88)",
            ])
        #expect(
            row("subscriptions-by-storefront", "USA") == [
                "active": "2", "trials": "0", "mrr": "USD 10.98", "asSold": "USD 10.98", "churn": "1 of 3 (33.3%)",
                "conversion": "2 of 2 (100.0%)", "renewals": "1 of 2 (50.0%)", "refunds": "0",
                "refunded": "USD 0.00",
            ])
        #expect(
            row("subscriptions-by-storefront", "GBR") == [
                "active": "1", "trials": "0", "mrr": "USD 9.99", "asSold": "GBP 7.99", "churn": "1 of 2 (50.0%)",
                "conversion": "0 of 1 (0.0%)", "renewals": "0 of 0", "refunds": "1",
                "refunded": "USD 119.85 (GBP 95.88)",
            ])
        #expect(page.contains("id=\"active-chart\"") && page.contains("id=\"mrr-chart\""))
        #expect(page.contains("data-value=\"2097\""), "today's bar of the MRR chart, in US cents")
    }

    // MARK: The ledger, independently

    /// One period as the store signed it.
    struct Period {
        var original: String
        var product: String
        var storefront: String
        var currency: String
        /// Minor units (the payload's price is in thousandths of the currency's unit).
        var price: Int
        var purchased: Int64
        var expires: Int64
        var revoked: Int64?
        var trial: Bool
        var renewal: Bool
    }

    /// Every tester's periods, decoded from the signed transactions the test controls list.
    static func ledger(_ store: TestStore) async throws -> [Period] {
        var periods: [Period] = []
        let root = store.built.signing.identity(.sandbox).root
        for (email, _) in testers {
            let listed = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(email)",
                token: .some(store.adminToken))
            for entry in listed.json["transactions"] as? [[String: Any]] ?? [] {
                let payload = try await verifiedPayload(
                    try #require(entry["signedTransaction"] as? String), as: JWSTransactionDecodedPayload.self,
                    root: root, clock: ManualClock(start))
                periods.append(
                    Period(
                        original: payload.originalTransactionId, product: payload.productId,
                        storefront: payload.storefront, currency: payload.currency, price: Int(payload.price / 10),
                        purchased: payload.purchaseDate, expires: payload.expiresDate ?? 0,
                        revoked: payload.revocationDate, trial: payload.offerDiscountType == "FREE_TRIAL",
                        renewal: payload.transactionReason == "RENEWAL"))
            }
        }
        return periods.sorted { ($0.purchased, $0.original) < ($1.purchased, $1.original) }
    }

    /// The headline figures worked out from `ledger` with the page's definitions, written out again here.
    static func checkAgainstLedger(_ page: String, ledger: [Period], now: Date) {
        let instant = now.millisecondsSince1970
        let chains = Dictionary(grouping: ledger, by: \.original).values.map {
            $0.sorted { $0.purchased < $1.purchased }
        }
        var active = 0
        var mrrCents = 0
        var (trials, converted, due, renewed, churned, subscribers, refunds) = (0, 0, 0, 0, 0, 0, 0)
        for chain in chains {
            if let latest = chain.last(where: { $0.purchased <= instant }), latest.expires > instant,
                (latest.revoked ?? .max) > instant, !latest.trial
            {
                active += 1
                let months = latest.product == yearly ? 12 : 1
                let dollars = latest.currency == "GBP" ? 1.25 : 1
                mrrCents += Int((Double(latest.price) / Double(months) * dollars).rounded())
            }
            var churnedHere = false
            for (index, period) in chain.enumerated() {
                let next = index + 1 < chain.count ? chain[index + 1] : nil
                let renews = next?.renewal ?? false
                let ended = min(period.expires, period.revoked ?? .max)
                if period.revoked != nil { refunds += 1 }
                if period.trial {
                    trials += ended <= instant ? 1 : 0
                    converted += ended <= instant && renews ? 1 : 0
                    continue
                }
                if period.revoked == nil, period.expires <= instant {
                    due += 1
                    renewed += renews ? 1 : 0
                }
                if ended <= instant, !renews { churnedHere = true }
            }
            churned += churnedHere ? 1 : 0
            subscribers += chain.contains { !$0.trial } ? 1 : 0
        }
        #expect(cell("total-active", in: page) == "\(active)")
        #expect(cell("total-mrr", in: page) == Currency.text(minorUnits: mrrCents, code: "USD"))
        #expect(cell("total-trial-conversion", in: page)?.hasPrefix("\(converted) of \(trials) ") == true)
        #expect(cell("total-renewal-rate", in: page)?.hasPrefix("\(renewed) of \(due) ") == true)
        #expect(cell("total-churn", in: page)?.hasPrefix("\(churned) of \(subscribers) ") == true)
        #expect(cell("total-refunds", in: page) == "\(refunds)")
        // The whole story happened today, so the span holds all of it.
        let today = Calendar.utc.startOfDay(for: now).millisecondsSince1970
        #expect(ledger.allSatisfy { $0.purchased >= today }, "\(ledger.map(\.purchased))")
    }

    // MARK: Reading the page

    /// The text of the cell with `id`.
    static func cell(_ id: String, in page: String) -> String? {
        guard let open = page.range(of: "id=\"\(id)\">"),
            let close = page.range(of: "</td>", range: open.upperBound..<page.endIndex)
        else { return nil }
        return String(page[open.upperBound..<close.lowerBound])
    }

    /// The cells' texts of the row keyed `key` in the table with id `table`.
    static func rowCells(_ table: String, key: String, in page: String) -> [String] {
        guard let start = page.range(of: "id=\"\(table)\""),
            let row = page.range(of: "<tr data-key=\"\(key)\">", range: start.upperBound..<page.endIndex),
            let end = page.range(of: "</tr>", range: row.upperBound..<page.endIndex)
        else { return [] }
        return page[row.upperBound..<end.lowerBound].components(separatedBy: "</td>").compactMap { part in
            part.range(of: "<td>").map { String(part[$0.upperBound...]) }
        }
    }
}
