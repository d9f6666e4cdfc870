import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// Buying auto-renewables through the client protocol and the test controls: one subscription per group and
/// account, introductory offers, upgrades, downgrades, crossgrades, and the notifications each sends; one-time
/// purchases notify `ONE_TIME_CHARGE`.
@Suite struct SubscriptionPurchaseTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    /// Level 1 of the group "Pro": a monthly at tier 2 (US$1.99), with the promotional offer "comeback" (two
    /// months at US$0.99).
    static let premium = "com.example.pro.premium"
    /// Level 2: the monthly of the base catalog (tier 1, US$0.99), here with an introductory offer of three
    /// months at US$0.49.
    static let monthly = TestStore.monthly
    /// Level 2: a yearly at tier 10 (US$9.99).
    static let yearly = "com.example.pro.yearly"
    static let season = "com.example.season"

    /// The group "Pro" at three levels and a non-renewing season pass.
    static func prepareCatalog(_ store: TestStore) async throws {
        try await store.preparePurchaseCatalog()
        let group = try await store.request(
            .POST, "/admin/v1/apps/\(TestStore.bundleId)/subscription-groups",
            json: ["referenceName": "Pro", "localizations": [["locale": "en-US", "name": "Pro"]]])
        #expect(group.status == 201, "\(group.text)")
        for (productId, level, duration, tier, offers) in [
            (premium, 1, "P1M", 2, [[String: Any]]()),
            (
                monthly, 2, "P1M", 1,
                [
                    [
                        "paymentMode": "pay_as_you_go", "period": "P1M", "numberOfPeriods": 3,
                        "pricing": ["customPrices": ["USA": 49]],
                    ]
                ]
            ),
            (yearly, 2, "P1Y", 10, []),
        ] as [(String, Int, String, Int, [[String: Any]])] {
            let created = try await store.createProduct(
                productId, type: "auto_renewable",
                fields: [
                    "subscription": ["group": "Pro", "level": level], "duration": duration, "pricing": ["tier": tier],
                    "introductoryOffers": offers,
                    "promotionalOffers": productId == premium
                        ? [
                            [
                                "identifier": "comeback", "referenceName": "Come back", "paymentMode": "pay_as_you_go",
                                "period": "P1M", "numberOfPeriods": 2, "pricing": ["customPrices": ["USA": 99]],
                            ]
                        ]
                        : [[String: Any]](),
                ])
            #expect(created.status == 201, "\(created.text)")
        }
        let season = try await store.createProduct(Self.season, type: "non_renewing", fields: ["duration": "P1M"])
        #expect(season.status == 201, "\(season.text)")
    }

    /// What the receiver got: each notification decoded, in arrival order.
    static func notifications(_ receiver: NotificationReceiver, count: Int, store: TestStore, clock: any KioskClock)
        async throws -> [NotificationPayload]
    {
        let payloads = try await receiver.payloads(from: store)
        #expect(payloads.count == count)
        var decoded: [NotificationPayload] = []
        for payload in payloads {
            decoded.append(
                try await verifiedPayload(
                    payload, as: NotificationPayload.self, root: store.built.signing.identity(.sandbox).root,
                    clock: clock))
        }
        return decoded
    }

    static func transaction(_ jws: String?, store: TestStore, clock: any KioskClock) async throws
        -> JWSTransactionDecodedPayload
    {
        try await verifiedPayload(
            try #require(jws), as: JWSTransactionDecodedPayload.self, root: store.built.signing.identity(.sandbox).root,
            clock: clock)
    }

    static func signedTransaction(_ answer: TestStore.Answer) -> String? {
        (answer.json["transaction"] as? [String: Any])?["signedTransaction"] as? String
    }

    /// A first purchase takes the introductory offer and notifies `SUBSCRIBED`/`INITIAL_BUY`; buying the same
    /// product again fails with nothing charged; an upgrade replaces the period at once (the old one marked
    /// upgraded), a downgrade and a crossgrade to another duration wait for the renewal, choosing the current
    /// product takes them back: each a `DID_CHANGE_RENEWAL_PREF` with Apple's subtype, all in one subscription.
    @Test(arguments: TestDatabase.available)
    func upgradesDowngradesAndRevertsKeepOneSubscription(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepareCatalog(store)
                try await store.setNotificationURLs([receiver.url])
                let key = try await store.createServerAPIKey()
                let token = try await store.signIn()
                func introEligibility() async throws -> [String: Bool] {
                    let answer = try await store.client(
                        .POST, "/products", token: token, json: ["identifiers": [Self.monthly, TestStore.coins]])
                    let products = try #require(answer.json["products"] as? [[String: Any]], "\(answer.text)")
                    return products.reduce(into: [:]) {
                        $0[$1["productId"] as? String ?? ""] = $1["isEligibleForIntroOffer"] as? Bool
                    }
                }
                #expect(try await introEligibility() == [Self.monthly: true])

                let bought = try await store.pay(Self.monthly, token: token)
                #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                let first = try await Self.transaction(Self.signedTransaction(bought), store: store, clock: clock)
                let original = first.transactionId
                #expect(first.originalTransactionId == original)
                #expect(first.offerType == 1)
                #expect(first.offerIdentifier == nil)
                #expect(first.offerDiscountType == "PAY_AS_YOU_GO")
                #expect(first.offerPeriod == "P1M")
                #expect(first.price == 490)
                #expect(first.expiresDate == first.purchaseDate + 5 * 60_000)
                #expect(first.subscriptionGroupIdentifier == "21000001")
                #expect(first.webOrderLineItemId != nil)
                #expect(first.transactionReason == "PURCHASE")
                #expect(try await introEligibility() == [Self.monthly: false])
                var received = try await Self.notifications(receiver, count: 1, store: store, clock: clock)
                #expect(received.last?.notificationType == .subscribed)
                #expect(received.last?.subtype == .initialBuy)
                #expect(received.last?.data?.status == 1)
                #expect(received.last?.data?.signedRenewalInfo != nil)
                let subscribed = try await Self.transaction(
                    received.last?.data?.signedTransactionInfo, store: store, clock: clock)
                #expect(subscribed.transactionId == original)

                let again = try await store.pay(Self.monthly, token: token)
                #expect(again.json["state"] as? String == "failed", "\(again.text)")
                #expect(again.errorCode == "already_subscribed", "\(again.text)")
                #expect(again.skErrorCode == 3)
                #expect(again.transactionId == nil)

                clock.advance(by: 60)
                let upgrade = try await store.pay(Self.premium, token: token)
                #expect(upgrade.json["state"] as? String == "purchased", "\(upgrade.text)")
                let premium = try await Self.transaction(Self.signedTransaction(upgrade), store: store, clock: clock)
                #expect(premium.transactionId != original)
                #expect(premium.originalTransactionId == original)
                #expect(premium.originalPurchaseDate == first.purchaseDate)
                #expect(premium.purchaseDate == clock.now().millisecondsSince1970)
                #expect(premium.expiresDate == premium.purchaseDate + 5 * 60_000)
                #expect(premium.price == 1990)
                #expect(premium.offerType == nil)
                received = try await Self.notifications(receiver, count: 2, store: store, clock: clock)
                #expect(received.last?.notificationType == .didChangeRenewalPref)
                #expect(received.last?.subtype == .upgrade)
                #expect(
                    try await Self.transaction(received.last?.data?.signedTransactionInfo, store: store, clock: clock)
                        .transactionId == premium.transactionId)

                let info = try await store.inApps(.GET, "/inApps/v1/transactions/\(original)", key: key, clock: clock)
                #expect(info.status == 200, "\(info.text)")
                let upgraded = try await Self.transaction(
                    info.json["signedTransactionInfo"] as? String, store: store, clock: clock)
                #expect(upgraded.isUpgraded == true)
                #expect(upgraded.expiresDate == first.expiresDate)

                let downgrade = try await store.pay(Self.monthly, token: token)
                #expect(downgrade.json["state"] as? String == "purchased", "\(downgrade.text)")
                #expect(downgrade.transactionId == premium.transactionId, "a downgrade answers the current period")
                received = try await Self.notifications(receiver, count: 3, store: store, clock: clock)
                #expect(received.last?.notificationType == .didChangeRenewalPref)
                #expect(received.last?.subtype == .downgrade)

                let revert = try await store.pay(Self.premium, token: token)
                #expect(revert.transactionId == premium.transactionId, "\(revert.text)")
                received = try await Self.notifications(receiver, count: 4, store: store, clock: clock)
                #expect(received.last?.notificationType == .didChangeRenewalPref)
                #expect(received.last?.subtype == nil)

                let statuses = try await store.inApps(
                    .GET, "/inApps/v1/subscriptions/\(original)", key: key, clock: clock)
                let groups = try #require(statuses.json["data"] as? [[String: Any]], "\(statuses.text)")
                #expect(groups.count == 1)
                let last = try #require((groups.first?["lastTransactions"] as? [[String: Any]])?.first)
                #expect(last["status"] as? Int == 1)
                #expect(last["originalTransactionId"] as? String == original)
                #expect(
                    try await Self.transaction(last["signedTransactionInfo"] as? String, store: store, clock: clock)
                        .productId == Self.premium)

                // Clearing the tester's purchase history ends the subscription too: intro offers apply again.
                let cleared = try await store.request(
                    .DELETE, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions?tester=\(TestStore.testerEmail)",
                    token: .some(store.adminToken))
                #expect(cleared.status == 200, "\(cleared.text)")
                #expect(try await introEligibility() == [Self.monthly: true])
            }
        }
    }

    /// A pay-as-you-go introductory offer (3 periods at $0.49) is charged at the purchase and continued by the
    /// renewals for its remaining periods; the renewal after them charges the product's price.
    @Test(arguments: TestDatabase.available)
    func introductoryOfferContinuesAtRenewal(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await Self.prepareCatalog(store)
            let bought = try await store.pay(Self.monthly, token: try await store.signIn())
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            for _ in 0..<3 {
                let advanced = try await store.advanceSandboxClock("5m")
                #expect(advanced.json["renewed"] as? Int == 1, "\(advanced.text)")
            }
            let periods = try await store.subscriptionPeriods(clock: clock)
            #expect(periods.map(\.price) == [490, 490, 490, 990], "the offer for three periods, then tier 1")
        }
    }

    /// The test controls buy through the same rules: a crossgrade to another duration waits for the renewal,
    /// the current product again is refused with a clear error; consumables, non-consumables and non-renewing
    /// subscriptions notify `ONE_TIME_CHARGE` with the transaction only.
    @Test(arguments: TestDatabase.available)
    func testBuysAndOneTimeCharges(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await Self.prepareCatalog(store)
                try await store.setNotificationURLs([receiver.url])
                func testBuy(_ productId: String) async throws -> TestStore.Answer {
                    try await store.request(
                        .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases",
                        json: ["tester": TestStore.testerEmail, "productId": productId], token: .some(store.adminToken))
                }
                let monthly = try await testBuy(Self.monthly)
                #expect(monthly.status == 201, "\(monthly.text)")
                let first = try await Self.transaction(Self.signedTransaction(monthly), store: store, clock: clock)
                #expect(first.offerType == 1)
                var received = try await Self.notifications(receiver, count: 1, store: store, clock: clock)
                #expect(received.last?.notificationType == .subscribed)
                #expect(received.last?.subtype == .initialBuy)

                let again = try await testBuy(Self.monthly)
                #expect(again.status == 409, "\(again.text)")
                #expect(again.errorCode == "already_subscribed")
                #expect(again.errorFix?.contains("Nothing was charged") == true)

                let crossgrade = try await testBuy(Self.yearly)
                #expect(crossgrade.transactionId == first.transactionId, "\(crossgrade.text)")
                received = try await Self.notifications(receiver, count: 2, store: store, clock: clock)
                #expect(received.last?.notificationType == .didChangeRenewalPref)
                #expect(received.last?.subtype == .downgrade)

                let token = try await store.signIn()
                for (index, productId) in [TestStore.coins, TestStore.removeAds, Self.season].enumerated() {
                    let bought = try await store.pay(productId, token: token)
                    #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
                    received = try await Self.notifications(receiver, count: 3 + index, store: store, clock: clock)
                    let notification = try #require(received.last)
                    #expect(notification.notificationType == .oneTimeCharge)
                    #expect(notification.subtype == nil)
                    #expect(notification.data?.signedRenewalInfo == nil)
                    #expect(notification.data?.status == nil)
                    let charged = try await Self.transaction(
                        notification.data?.signedTransactionInfo, store: store, clock: clock)
                    #expect(charged.productId == productId)
                    #expect(charged.transactionId == bought.transactionId)
                }
            }
        }
    }
}
