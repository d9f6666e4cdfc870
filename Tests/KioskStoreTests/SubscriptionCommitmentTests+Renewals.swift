import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// How a commitment's months follow one another: at the tester's renewal rate, through a late recovery, a
/// renewal-date extension, a downgrade and a plan that stopped being sold; and how its payments show in the Sales
/// report.
extension SubscriptionCommitmentTests {
    /// Checks `period` is billing period `number` of the commitment to pro that ends at `commitmentEnd`, starting at
    /// `start` and lasting one `month`.
    static func expectPeriod(
        _ period: JWSTransactionDecodedPayload?, number: Int, start: Int64, month: Int64, commitmentEnd: Int64
    ) {
        #expect(period?.productId == pro)
        #expect(period?.billingPlanType == "MONTHLY")
        #expect(period?.price == 5990)
        #expect(period?.purchaseDate == start, "period \(number) starts where the last ended, not before")
        #expect(period?.expiresDate == start + month, "period \(number) lasts one month")
        #expect(
            period?.commitmentInfo
                == TransactionCommitmentInfo(
                    billingPeriodNumber: number, commitmentExpiresDate: commitmentEnd, commitmentPrice: 71880,
                    totalBillingPeriods: 12))
    }

    /// At the tester's renewal rate (an hour or three minutes a month), the purchase's first month, the commitment's
    /// end and the renewals all follow that rate: advancing the clock one month charges exactly one month, its period
    /// starting where the last ended. A year billed up front lasts 12 such months too.
    @Test(arguments: TestDatabase.available, ["1h", "3m"])
    func theCommitmentFollowsTheTestersRate(database: TestDatabase, rate: String) async throws {
        let month: Int64 = rate == "1h" ? 3_600_000 : 180_000
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver, testerSettings: ["renewalRate": rate])
                let token = try await store.signIn()
                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                let purchased = try #require(try await Self.transactions(store, clock: clock).first).purchaseDate
                let commitmentEnd = purchased + 12 * month
                Self.expectPeriod(
                    try await Self.transactions(store, clock: clock).first, number: 1, start: purchased, month: month,
                    commitmentEnd: commitmentEnd)
                for number in 2...3 {
                    let advanced = try await store.advanceSandboxClock(rate)
                    #expect(advanced.json["renewed"] as? Int == 1, "one month, one payment: \(advanced.text)")
                    let periods = try await Self.transactions(store, clock: clock)
                    #expect(periods.count == number)
                    Self.expectPeriod(
                        periods.last, number: number, start: purchased + Int64(number - 1) * month, month: month,
                        commitmentEnd: commitmentEnd)
                }

                try await store.createTester("second@example.com", settings: ["renewalRate": rate])
                let second = try await store.signIn("second@example.com")
                let year = try await Self.buy(Self.max, plan: nil, store: store, token: second)
                #expect(year.json["state"] as? String == "purchased", "\(year.text)")
                let upFront = try #require(
                    try await Self.transactions(store, clock: clock, tester: "second@example.com").first)
                #expect(upFront.expiresDate == upFront.purchaseDate + 12 * month, "a year is 12 of the tester's months")
            }
        }
    }

    /// A commitment's payment retries for all of Apple's 90 days: a payment method fixed after day 45 still recovers
    /// at the next retry (day 60), the commitment's end moving by the delay.
    @Test(arguments: TestDatabase.available)
    func aPaymentFixedAfterDay45StillRecovers(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                let purchased = try #require(try await Self.transactions(store, clock: clock).first).purchaseDate
                for (outcome, advance, field, count) in [
                    ("decline", "5m", "billingRetries", 1),
                    // A sandbox day is 10 seconds: day 50, after the retries of days 1 to 45.
                    ("decline", "500s", "billingRetries", 7),
                    ("approve", "100s", "recovered", 1),
                ] {
                    let changed = try await store.request(
                        .PATCH, "/admin/v1/testers/\(TestStore.testerEmail)", json: ["paymentOutcome": outcome])
                    #expect(changed.status == 200, "\(changed.text)")
                    let advanced = try await store.advanceSandboxClock(advance)
                    #expect(advanced.json[field] as? Int == count, "\(advance): \(advanced.text)")
                    #expect(advanced.json["expired"] as? Int == 0, "\(advance): \(advanced.text)")
                }
                let delay: Int64 = 600_000
                Self.expectPeriod(
                    try await Self.transactions(store, clock: clock).last, number: 2,
                    start: purchased + Self.month + delay, month: Self.month,
                    commitmentEnd: purchased + 12 * Self.month + delay)
            }
        }
    }

    /// Extending the renewal date (App Store Server API) moves the commitment's end with the period: the re-signed
    /// transaction, the renewal info and the notification agree, and the next payment starts at the new date.
    @Test(arguments: TestDatabase.available)
    func extendingTheRenewalDateMovesTheCommitment(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                try await receiver.drain(1, from: store)
                let first = try #require(try await Self.transactions(store, clock: clock).first)
                let key = try await store.createServerAPIKey()
                let extended = try await store.inApps(
                    .PUT, "/inApps/v1/subscriptions/extend/\(first.transactionId)", key: key,
                    json: ["extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "r1"], clock: clock)
                #expect(extended.status == 200, "\(extended.text)")

                let moved: Int64 = 3 * 86_400_000
                let commitmentEnd = first.purchaseDate + 12 * Self.month + moved
                let renewalDate = first.purchaseDate + Self.month + moved
                let status = try await store.subscriptionStatus(of: first.transactionId, clock: clock)
                Self.expectExtended(
                    status.transaction, status.renewal, renewalDate: renewalDate, commitmentEnd: commitmentEnd)
                let notification = try await verifiedPayload(
                    try #require(try await receiver.payloads(from: store).first), as: NotificationPayload.self,
                    root: store.built.signing.identity(.sandbox).root, clock: clock)
                #expect(notification.notificationType == .renewalExtended)
                let notified = try await verifiedPayload(
                    try #require(notification.data?.signedTransactionInfo), as: JWSTransactionDecodedPayload.self,
                    root: store.built.signing.identity(.sandbox).root, clock: clock)
                #expect(notified.commitmentInfo?.commitmentExpiresDate == commitmentEnd)

                #expect(try await store.advanceSandboxClock("72h5m").json["renewed"] as? Int == 1)
                Self.expectPeriod(
                    try await Self.transactions(store, clock: clock).last, number: 2, start: renewalDate,
                    month: Self.month, commitmentEnd: commitmentEnd)
            }
        }
    }

    /// Checks an extended subscription's transaction and renewal info: the period and the commitment end later.
    static func expectExtended(
        _ transaction: JWSTransactionDecodedPayload, _ renewal: JWSRenewalInfoDecodedPayload, renewalDate: Int64,
        commitmentEnd: Int64
    ) {
        #expect(transaction.expiresDate == renewalDate)
        #expect(transaction.commitmentInfo?.commitmentExpiresDate == commitmentEnd, "the signed transaction moved")
        #expect(renewal.renewalDate == renewalDate)
        #expect(renewal.commitmentInfo?.commitmentRenewalDate == commitmentEnd, "the renewal info agrees")
    }

    /// A downgrade bought during a commitment waits for the 12th month's end: every payment until then bills the
    /// current product, and the commitment's end renews into the lower product's own new commitment.
    @Test(arguments: TestDatabase.available)
    func aDowngradeTakesEffectWhenTheCommitmentEnds(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                #expect(try await store.advanceSandboxClock("10m").json["renewed"] as? Int == 2)
                let down = try await Self.buy(Self.lite, plan: "MONTHLY", store: store, token: token)
                #expect(down.json["state"] as? String == "purchased", "\(down.text)")

                #expect(try await store.advanceSandboxClock("45m").json["renewed"] as? Int == 9)
                var periods = try await Self.transactions(store, clock: clock)
                let purchased = try #require(periods.first?.purchaseDate)
                #expect(periods.count == 12)
                #expect(periods.allSatisfy { $0.productId == Self.pro }, "the commitment bills pro to its end")
                #expect(periods.last?.commitmentInfo?.billingPeriodNumber == 12)

                #expect(try await store.advanceSandboxClock("5m").json["renewed"] as? Int == 1)
                periods = try await Self.transactions(store, clock: clock)
                let lite = try #require(periods.last)
                #expect(lite.productId == Self.lite)
                #expect(lite.billingPlanType == "MONTHLY")
                #expect(lite.price == 2990)
                #expect(lite.purchaseDate == purchased + 12 * Self.month, "at the commitment's end, not before")
                #expect(lite.expiresDate == purchased + 13 * Self.month)
                #expect(
                    lite.commitmentInfo
                        == TransactionCommitmentInfo(
                            billingPeriodNumber: 1, commitmentExpiresDate: purchased + 24 * Self.month,
                            commitmentPrice: 35880, totalBillingPeriods: 12))
                let status = try await store.subscriptionStatus(of: lite.originalTransactionId, clock: clock)
                #expect(status.renewal.autoRenewProductId == Self.lite)
                #expect(status.renewal.renewalPrice == 2990)
            }
        }
    }

    /// A commitment whose renewal plan stops being sold (the monthly plan removed) keeps billing its own months, then
    /// expires at its end as a product no longer for sale (`EXPIRED`/`PRODUCT_NOT_FOR_SALE`, intent 4) instead of
    /// staying due.
    @Test(arguments: TestDatabase.available)
    func aRenewalIntoAMonthlyPlanNoLongerSoldExpires(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                try await receiver.drain(1, from: store)
                let removed = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)/products/\(Self.pro)",
                    json: ["monthlyPlan": ["pricing": ["customPrices": [String: Int]()]]])
                #expect(removed.status == 200, "\(removed.text)")
                let first = try #require(try await Self.transactions(store, clock: clock).first)
                let waiting = try await store.subscriptionStatus(of: first.transactionId, clock: clock)
                #expect(waiting.renewal.renewalPrice == 5990, "the commitment's own payments go on")
                #expect(waiting.renewal.commitmentInfo?.commitmentRenewalPrice == nil, "nothing to renew into")

                let year = try await store.advanceSandboxClock("1h")
                #expect(year.json["renewed"] as? Int == 11, "\(year.text)")
                #expect(year.json["expired"] as? Int == 1, "\(year.text)")
                #expect(
                    try await store.notificationKinds(receiver, count: 12, clock: clock)
                        == Array(repeating: "DID_RENEW", count: 11) + ["EXPIRED/PRODUCT_NOT_FOR_SALE"])
                let ended = try await store.subscriptionStatus(of: first.transactionId, clock: clock)
                #expect(ended.status == 2)
                #expect(ended.renewal.expirationIntent == 4)
            }
        }
    }

    /// The Sales report (production only) shows a payment of the monthly plan as a "1 Month" row at the monthly
    /// price, beside the same product's "1 Year" row billed up front.
    @Test(arguments: TestDatabase.available)
    func monthlyPaymentsAreOneMonthRowsOfTheSalesReport(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                for action in ["submit", "approve"] {
                    let review = try await store.request(
                        .POST, "/admin/v1/apps/\(TestStore.bundleId)/products/\(Self.pro)/review",
                        json: ["action": action])
                    #expect(review.status == 200, "\(review.text)")
                }
                for (email, plan) in [("monthly@example.com", "MONTHLY"), ("yearly@example.com", "BILLED_UPFRONT")] {
                    let created = try await store.request(
                        .POST, "/admin/v1/accounts",
                        json: ["email": email, "password": TestStore.password, "storefront": "USA"])
                    #expect(created.status == 201, "\(created.text)")
                    let token = try await store.signIn(email, sandbox: false)
                    let bought = try await Self.buy(Self.pro, plan: plan, store: store, token: token, sandbox: false)
                    #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                }

                let report = try await store.request(.GET, "/admin/v1/reports/sales?frequency=daily&date=2026-09-21")
                #expect(report.status == 200, "\(report.text)")
                let rows = Self.reportRows(report.text)
                let summary = rows.map { row in
                    ["SKU", "Period", "Units", "Customer Price", "Subscription"].map { row[$0] ?? "" }
                        .joined(separator: " ")
                }
                #expect(summary.sorted() == ["\(Self.pro) 1 Month 1 5.99 New", "\(Self.pro) 1 Year 1 59.99 New"])
            }
        }
    }

    /// The rows of a Sales report, by column.
    static func reportRows(_ text: String) -> [[String: String]] {
        text.split(separator: "\n").dropFirst().map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(SalesSummaryReport.columns, fields))
        }
    }
}
