import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// Monthly plans with a 12-month commitment on the sandbox clock, over HTTP on both engines (Apple's "Supporting
/// monthly subscriptions with a 12-month commitment" and "Managing the life cycle of monthly subscriptions with a
/// 12-month commitment"): a payment each month, each its own transaction with `billingPlanType` `MONTHLY` and
/// `commitmentInfo`; cancelling stops the commitment's renewal, not its payments; the commitment renews into another
/// (or the plan the customer chose); an upgrade ends it now, a downgrade waits for its end. Every notification, with
/// its transaction and renewal info, and every signed transaction passes Apple's own verifier and decodes field for
/// field (`AppleVerifier`, where Python is present).
@Suite struct SubscriptionCommitmentTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    /// A sandbox month at Apple's rate, in milliseconds; the commitment lasts 12 of them.
    static let month: Int64 = 5 * 60_000
    /// Level 2 of "Orbit": US$59.99 a year up front, or 12 monthly payments of US$5.99.
    static let pro = "com.example.orbit.pro.annual"
    /// Level 1: US$99.99 a year, up front only (an upgrade from pro).
    static let max = "com.example.orbit.max.annual"
    /// Level 3: US$29.99 a year, or 12 × US$2.99 (a downgrade from pro).
    static let lite = "com.example.orbit.lite.annual"

    /// The app, the group "Orbit" and its three one-year subscriptions, the tester (USA) and the notification URL.
    static func prepare(_ store: TestStore, receiver: NotificationReceiver, testerSettings: [String: Any] = [:])
        async throws
    {
        try await store.preparePurchaseCatalog(testerSettings: testerSettings)
        let group = try await store.request(
            .POST, "/admin/v1/apps/\(TestStore.bundleId)/subscription-groups",
            json: ["referenceName": "Orbit", "localizations": [["locale": "en-US", "name": "Orbit"]]])
        #expect(group.status == 201, "\(group.text)")
        for (productId, level, upFront, monthly) in [(pro, 2, 5999, 599), (max, 1, 9999, nil), (lite, 3, 2999, 299)]
            as [(String, Int, Int, Int?)]
        {
            var fields: [String: Any] = [
                "subscription": ["group": "Orbit", "level": level], "duration": "P1Y",
                "pricing": ["customPrices": ["USA": upFront]],
            ]
            if let monthly { fields["monthlyPlan"] = ["pricing": ["customPrices": ["USA": monthly]]] }
            let created = try await store.createProduct(productId, type: "auto_renewable", fields: fields)
            #expect(created.status == 201, "\(created.text)")
            if let monthly {
                let plan = created.json["monthlyPlan"] as? [String: Any]
                #expect(
                    (plan?["pricing"] as? [String: Any])?["customPrices"] as? [String: Int] == ["USA": monthly],
                    "\(created.text)")
            }
        }
        try await store.setNotificationURLs([receiver.url])
    }

    /// Buys `productId` as the signed-in account under `plan` (nil: names none).
    static func buy(
        _ productId: String, plan: String?, store: TestStore, token: String, extra: [String: Any] = [:],
        sandbox: Bool = true
    ) async throws -> TestStore.Answer {
        var body: [String: Any] = ["productId": productId, "quantity": 1, "idempotencyKey": UUID().uuidString]
        if let plan { body["billingPlanType"] = plan }
        body.merge(extra) { $1 }
        return try await store.client(.POST, "/payments", token: token, json: body, sandbox: sandbox)
    }

    /// The tester's auto-renewable transactions, oldest first, decoded from their verified JWS; each signed form also
    /// passes Apple's verifier and decodes field for field.
    static func transactions(_ store: TestStore, clock: any KioskClock, tester: String = TestStore.testerEmail)
        async throws -> [JWSTransactionDecodedPayload]
    {
        let listed = try await store.request(
            .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(tester)",
            token: .some(store.adminToken))
        let signed = (listed.json["transactions"] as? [[String: Any]] ?? []).compactMap {
            $0["signedTransaction"] as? String
        }
        try await AppleVerifier.expectAccepts(signed, kind: .transaction, store: store)
        let root = store.built.signing.identity(.sandbox).root
        var payloads: [JWSTransactionDecodedPayload] = []
        for jws in signed {
            let payload = try await verifiedPayload(
                jws, as: JWSTransactionDecodedPayload.self, root: root, clock: clock)
            if payload.expiresDate != nil { payloads.append(payload) }
        }
        return payloads.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
    }

    /// The done-when story: bought under `MONTHLY`, the subscription bills a payment each sandbox month, each a
    /// transaction with its period's number, the commitment's end and total; auto-renew off in month 6 turns the
    /// commitment's renewal off (the renewal info says so) but the payments go on to the 12th; then it expires.
    @Test(arguments: TestDatabase.available)
    func monthlyPaymentsThroughTheCommitmentThenExpiry(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                let products = try await store.client(
                    .POST, "/products", token: token, json: ["identifiers": [Self.pro, Self.max]])
                let listed = (products.json["products"] as? [[String: Any]] ?? []).first {
                    $0["productId"] as? String == Self.pro
                }
                let terms = try #require(listed?["pricingTerms"] as? [[String: Any]], "\(products.text)")
                #expect(terms.map { $0["billingPlanType"] as? String } == ["BILLED_UPFRONT", "MONTHLY"])
                #expect((terms[1]["billingPrice"] as? [String: Any])?["minorUnits"] as? Int == 599)
                #expect((terms[1]["commitmentPrice"] as? [String: Any])?["minorUnits"] as? Int == 7188)
                #expect(terms[1]["billingPeriod"] as? String == "P1M")
                #expect(terms[1]["commitmentPeriod"] as? String == "P1Y")
                #expect(terms[1]["billingPeriodCount"] as? Int == 12)

                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                let first = try #require(try await Self.transactions(store, clock: clock).first)
                let purchased = first.purchaseDate
                let commitmentEnd = purchased + 12 * Self.month
                #expect(first.billingPlanType == "MONTHLY")
                #expect(first.price == 5990, "one monthly payment, not the year")
                #expect(first.expiresDate == purchased + Self.month, "a billing period entitles for a month")
                #expect(
                    first.commitmentInfo
                        == TransactionCommitmentInfo(
                            billingPeriodNumber: 1, commitmentExpiresDate: commitmentEnd, commitmentPrice: 71880,
                            totalBillingPeriods: 12))
                try await receiver.drain(1, from: store)

                let five = try await store.advanceSandboxClock("25m")
                #expect(five.json["renewed"] as? Int == 5, "\(five.text)")
                // A second later, so the notifications' signed dates order them.
                #expect(try await store.advanceSandboxClock("1s").status == 200)
                let off = try await store.subscriptionControl(first.transactionId, "auto-renew-off")
                #expect(off.status == 200, "\(off.text)")
                let cancelled = try await store.subscriptionStatus(of: first.transactionId, clock: clock)
                #expect(cancelled.status == 1)
                #expect(cancelled.renewal.autoRenewStatus == 1, "the monthly payments go on")
                #expect(cancelled.renewal.renewalBillingPlanType == "MONTHLY")
                #expect(cancelled.renewal.autoRenewProductId == Self.pro)
                #expect(cancelled.renewal.renewalPrice == 5990)
                #expect(cancelled.renewal.renewalDate == purchased + 6 * Self.month)
                #expect(
                    cancelled.renewal.commitmentInfo
                        == RenewalCommitmentInfo(
                            commitmentAutoRenewProductId: Self.pro, commitmentAutoRenewStatus: 0,
                            commitmentRenewalBillingPlanType: "MONTHLY", commitmentRenewalDate: commitmentEnd,
                            commitmentRenewalPrice: 5990))
                try await AppleVerifier.expectAccepts(
                    [try #require(try await Self.signedRenewalInfo(of: first.transactionId, store, clock: clock))],
                    kind: .renewal, store: store, bundleId: TestStore.bundleId)

                let rest = try await store.advanceSandboxClock("35m")
                #expect(rest.json["renewed"] as? Int == 6, "\(rest.text)")
                #expect(rest.json["expired"] as? Int == 1, "the commitment's end expires it")
                let periods = try await Self.transactions(store, clock: clock)
                #expect(periods.count == 12)
                for (index, period) in periods.enumerated() {
                    let number = index + 1
                    #expect(period.originalTransactionId == first.transactionId)
                    #expect(period.transactionReason == (number == 1 ? "PURCHASE" : "RENEWAL"))
                    #expect(period.purchaseDate == purchased + Int64(index) * Self.month)
                    #expect(period.expiresDate == purchased + Int64(number) * Self.month)
                    #expect(period.price == 5990)
                    #expect(period.billingPlanType == "MONTHLY")
                    #expect(period.commitmentInfo?.billingPeriodNumber == number)
                    #expect(period.commitmentInfo?.totalBillingPeriods == 12)
                    #expect(period.commitmentInfo?.commitmentExpiresDate == commitmentEnd)
                    #expect(period.commitmentInfo?.commitmentPrice == 71880)
                }
                #expect(periods.last?.expiresDate == commitmentEnd, "the 12th period ends with the commitment")
                #expect(
                    try await store.notificationKinds(receiver, count: 13, clock: clock)
                        == Array(repeating: "DID_RENEW", count: 5) + ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"]
                        + Array(repeating: "DID_RENEW", count: 6) + ["EXPIRED/VOLUNTARY"])
                let ended = try await store.subscriptionStatus(of: first.transactionId, clock: clock)
                #expect(ended.status == 2)
                #expect(ended.renewal.autoRenewStatus == 0)
                #expect(ended.renewal.expirationIntent == 1)
                #expect(ended.renewal.commitmentInfo == nil, "no commitment is in progress")
                #expect(try await store.advanceSandboxClock("1h").json["renewed"] as? Int == 0)
            }
        }
    }

    /// With auto-renew on, the 12th payment's end renews into a new commitment (period 1 of 12, a new end);
    /// buying the plan billed up front in the meantime makes the next commitment's renewal a year billed up front.
    @Test(arguments: TestDatabase.available)
    func theCommitmentRenewsIntoAnotherOrTheChosenPlan(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                let bought = try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                try await receiver.drain(1, from: store)
                let renewed = try await store.advanceSandboxClock("1h")
                #expect(renewed.json["renewed"] as? Int == 12, "11 payments, then the next commitment's first")
                var periods = try await Self.transactions(store, clock: clock)
                let purchased = try #require(periods.first?.purchaseDate)
                let next = try #require(periods.last)
                #expect(periods.count == 13)
                #expect(next.purchaseDate == purchased + 12 * Self.month)
                #expect(next.billingPlanType == "MONTHLY")
                #expect(
                    next.commitmentInfo
                        == TransactionCommitmentInfo(
                            billingPeriodNumber: 1, commitmentExpiresDate: purchased + 24 * Self.month,
                            commitmentPrice: 71880, totalBillingPeriods: 12))

                // The plan billed up front, bought now, is the renewal's plan from the commitment's end.
                let upFront = try await Self.buy(Self.pro, plan: "BILLED_UPFRONT", store: store, token: token)
                #expect(upFront.json["state"] as? String == "purchased", "\(upFront.text)")
                let status = try await store.subscriptionStatus(of: next.originalTransactionId, clock: clock)
                #expect(status.transaction.transactionId == next.transactionId, "nothing is charged now")
                #expect(status.renewal.renewalBillingPlanType == "MONTHLY", "the commitment's payments go on")
                #expect(status.renewal.commitmentInfo?.commitmentRenewalBillingPlanType == "BILLED_UPFRONT")
                #expect(status.renewal.commitmentInfo?.commitmentRenewalPrice == 59990)
                #expect(status.renewal.commitmentInfo?.commitmentAutoRenewStatus == 1)
                let again = try await Self.buy(Self.pro, plan: "BILLED_UPFRONT", store: store, token: token)
                #expect(again.json["state"] as? String == "failed", "\(again.text)")
                #expect((again.json["error"] as? [String: Any])?["code"] as? String == "already_subscribed")

                #expect(try await store.advanceSandboxClock("1h").json["renewed"] as? Int == 12)
                periods = try await Self.transactions(store, clock: clock)
                let year = try #require(periods.last)
                #expect(periods.count == 25)
                #expect(year.purchaseDate == purchased + 24 * Self.month)
                #expect(year.billingPlanType == "BILLED_UPFRONT")
                #expect(year.commitmentInfo == nil)
                #expect(year.price == 59990)
                #expect(year.expiresDate == year.purchaseDate + 12 * Self.month)
                let upFrontStatus = try await store.subscriptionStatus(of: year.originalTransactionId, clock: clock)
                #expect(upFrontStatus.renewal.renewalBillingPlanType == "BILLED_UPFRONT")
                #expect(upFrontStatus.renewal.commitmentInfo == nil)
                let kinds = try await store.notificationKinds(receiver, count: 25, clock: clock)
                #expect(kinds.filter { $0 == "DID_RENEW" }.count == 24)
                #expect(kinds.contains("DID_CHANGE_RENEWAL_PREF"), "\(kinds)")
            }
        }
    }

    /// Inside a commitment an upgrade takes effect now: the commitment ends, the unused part of the month is
    /// refunded, and the new product bills from today; a downgrade waits for the commitment's end, the monthly
    /// payments going on meanwhile.
    @Test(arguments: TestDatabase.available)
    func upgradesEndTheCommitmentDowngradesWaitForItsEnd(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                #expect(
                    try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token).json["state"] as? String
                        == "purchased")
                try await receiver.drain(1, from: store)
                #expect(try await store.advanceSandboxClock("10m").json["renewed"] as? Int == 2)

                // The downgrade (lite, monthly) waits for the commitment's end.
                let down = try await Self.buy(Self.lite, plan: "MONTHLY", store: store, token: token)
                #expect(down.json["state"] as? String == "purchased", "\(down.text)")
                var periods = try await Self.transactions(store, clock: clock)
                #expect(periods.count == 3, "a downgrade charges nothing now")
                let waiting = try await store.subscriptionStatus(
                    of: try #require(periods.first).transactionId, clock: clock)
                #expect(waiting.renewal.autoRenewProductId == Self.pro, "the commitment bills pro until its end")
                #expect(waiting.renewal.commitmentInfo?.commitmentAutoRenewProductId == Self.lite)
                #expect(waiting.renewal.commitmentInfo?.commitmentRenewalPrice == 2990)
                #expect(try await store.advanceSandboxClock("5m").json["renewed"] as? Int == 1)
                periods = try await Self.transactions(store, clock: clock)
                #expect(periods.last?.productId == Self.pro)
                #expect(periods.last?.commitmentInfo?.billingPeriodNumber == 4)

                // The upgrade (max, up front) ends the commitment now.
                #expect(try await store.advanceSandboxClock("150s").status == 200)
                let up = try await Self.buy(Self.max, plan: nil, store: store, token: token)
                #expect(up.json["state"] as? String == "purchased", "\(up.text)")
                periods = try await Self.transactions(store, clock: clock)
                let upgraded = try #require(periods.dropLast().last)
                let now = try #require(periods.last)
                #expect(upgraded.isUpgraded == true)
                #expect(upgraded.commitmentInfo?.billingPeriodNumber == 4)
                #expect(now.productId == Self.max)
                #expect(now.billingPlanType == "BILLED_UPFRONT")
                #expect(now.commitmentInfo == nil)
                #expect(now.price == 99990)
                #expect(now.expiresDate == now.purchaseDate + 12 * Self.month)
                let status = try await store.subscriptionStatus(of: now.originalTransactionId, clock: clock)
                #expect(status.renewal.commitmentInfo == nil)
                #expect(status.renewal.renewalBillingPlanType == "BILLED_UPFRONT")
                #expect(status.renewal.autoRenewProductId == Self.max)
                let kinds = try await store.notificationKinds(receiver, count: 5, clock: clock)
                #expect(
                    kinds == [
                        "DID_RENEW", "DID_RENEW", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_RENEW",
                        "DID_CHANGE_RENEWAL_PREF/UPGRADE",
                    ])
                #expect(try await store.advanceSandboxClock("10m").json["renewed"] as? Int == 0, "max bills yearly")
            }
        }
    }

    /// A commitment's failed payment has no grace period, even where the app has one; a late recovery moves the
    /// commitment's end by the delay (Apple: read `commitmentExpiresDate` from the latest transaction), the periods
    /// after it following; a payment never recovered ends the commitment after 90 (sandbox) days, not 60.
    @Test(arguments: TestDatabase.available)
    func billingIssuesHaveNoGraceAndMoveTheCommitment(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let grace = try await store.request(
                    .PUT, "/sandbox/test/v1/apps/\(TestStore.bundleId)/grace-period", json: ["days": 3],
                    token: .some(store.adminToken))
                #expect(grace.status == 200, "\(grace.text)")
                let token = try await store.signIn()
                #expect(
                    try await Self.buy(Self.pro, plan: "MONTHLY", store: store, token: token).json["state"] as? String
                        == "purchased")
                try await receiver.drain(1, from: store)
                let first = try #require(try await Self.transactions(store, clock: clock).first)
                let purchased = first.purchaseDate
                #expect(try await store.advanceSandboxClock("5m").json["renewed"] as? Int == 1)
                #expect(try await store.subscriptionControl(first.transactionId, "fail-renewal").status == 200)
                #expect(try await store.advanceSandboxClock("5m").json["billingRetries"] as? Int == 1)
                let retrying = try await store.subscriptionStatus(of: first.transactionId, clock: clock)
                #expect(retrying.status == 3, "billing retry without a grace period")
                #expect(retrying.renewal.gracePeriodExpiresDate == nil)

                // The first retry, a sandbox day (10 seconds) later, recovers.
                #expect(try await store.advanceSandboxClock("10s").json["recovered"] as? Int == 1)
                let recovered = try #require(try await Self.transactions(store, clock: clock).last)
                #expect(recovered.purchaseDate == purchased + 2 * Self.month + 10_000)
                #expect(recovered.commitmentInfo?.billingPeriodNumber == 3)
                #expect(recovered.commitmentInfo?.commitmentExpiresDate == purchased + 12 * Self.month + 10_000)
                #expect(recovered.expiresDate == purchased + 3 * Self.month + 10_000, "the schedule moves with it")

                // Declined from now on: the next payment retries for 90 sandbox days (15 minutes), then it ends.
                let declined = try await store.request(
                    .PATCH, "/admin/v1/testers/\(TestStore.testerEmail)", json: ["paymentOutcome": "decline"])
                #expect(declined.status == 200, "\(declined.text)")
                #expect(try await store.advanceSandboxClock("5m").json["billingRetries"] as? Int == 1)
                #expect(try await store.advanceSandboxClock("11m").json["expired"] as? Int == 0, "past 60 days")
                #expect(try await store.advanceSandboxClock("4m").json["expired"] as? Int == 1, "at 90 days")
                #expect(
                    try await store.notificationKinds(receiver, count: 5, clock: clock) == [
                        "DID_RENEW", "DID_FAIL_TO_RENEW", "DID_RENEW/BILLING_RECOVERY", "DID_FAIL_TO_RENEW",
                        "EXPIRED/BILLING_RETRY",
                    ])
            }
        }
    }

    /// What cannot be bought under the monthly plan fails the payment and charges nothing: a product without the
    /// plan, a consumable, an offer with it; a name that is no plan is a 400. The console shows the plan; the admin
    /// API refuses one priced outside App Store Connect's bounds and removes it given an empty pricing.
    @Test(arguments: TestDatabase.available)
    func whatTheMonthlyPlanRefuses(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepare(store, receiver: receiver)
                let token = try await store.signIn()
                for (productId, extra, code) in [
                    (Self.max, [:], "billing_plan_not_offered"),
                    (TestStore.coins, [:], "billing_plan_not_offered"),
                    (Self.pro, ["offerCode": "SPRING"], "offer_not_applicable"),
                ] as [(String, [String: Any], String)] {
                    let answer = try await Self.buy(
                        productId, plan: "MONTHLY", store: store, token: token, extra: extra)
                    #expect(answer.json["state"] as? String == "failed", "\(answer.text)")
                    #expect((answer.json["error"] as? [String: Any])?["code"] as? String == code, "\(answer.text)")
                }
                let weekly = try await Self.buy(Self.pro, plan: "WEEKLY", store: store, token: token)
                #expect(weekly.status == 400, "\(weekly.text)")
                #expect(weekly.errorCode == "billing_plan_not_supported")
                #expect(weekly.errorField == "billingPlanType")
                #expect(try await Self.transactions(store, clock: clock).isEmpty, "nothing was charged")

                // The console's product page shows the monthly payment beside each storefront's price.
                let visitor = ConsoleTests.Visitor(store)
                _ = try await visitor.signIn()
                let page = try await visitor.get("/console/apps/\(TestStore.bundleId)/products/\(Self.pro)").text
                #expect(page.contains("Monthly plan") && page.contains("USD 5.99 × 12"), "\(page)")

                let invalid = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)/products/\(Self.pro)",
                    json: ["monthlyPlan": ["pricing": ["customPrices": ["USA": 999]]]])
                #expect(invalid.status == 400, "12 × 9.99 is more than 1.5 × 59.99: \(invalid.text)")
                #expect(invalid.errorCode == "invalid_billing_plan")
                // An up-front price far past the maximum is refused, not multiplied against the monthly plan.
                let huge = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)/products/\(Self.pro)",
                    json: [
                        "pricing": ["customPrices": ["USA": 5_000_000_000_000_000_000]],
                        "monthlyPlan": ["pricing": ["customPrices": ["USA": 599]]],
                    ])
                #expect(huge.status == 400 && huge.errorField == "pricing.customPrices.USA", "\(huge.text)")
                let removed = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)/products/\(Self.pro)",
                    json: ["monthlyPlan": ["pricing": ["customPrices": [String: Int]()]]])
                #expect(removed.status == 200, "\(removed.text)")
                #expect(removed.json["monthlyPlan"] == nil, "an empty pricing removes the plan")
            }
        }
    }

    /// The signed renewal info Get All Subscription Statuses answers for the subscription.
    static func signedRenewalInfo(of transactionId: String, _ store: TestStore, clock: any KioskClock) async throws
        -> String?
    {
        let key = try await store.createServerAPIKey()
        let answer = try await store.inApps(.GET, "/inApps/v1/subscriptions/\(transactionId)", key: key, clock: clock)
        return ((answer.json["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first?[
            "signedRenewalInfo"] as? String
    }
}
