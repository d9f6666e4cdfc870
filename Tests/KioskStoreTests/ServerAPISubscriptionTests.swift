import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import Testing

/// Get All Subscription Statuses and renewal-date extensions, over HTTP on both engines, with the sandbox's
/// accelerated periods on a manual clock.
@Suite struct ServerAPISubscriptionTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// A sandbox monthly lasts five minutes: active (renewal info renews at expiry at the storefront's price)
    /// until then, expired after when auto-renew is off; filters, a non-subscription id of the same customer, errors.
    @Test(arguments: TestDatabase.available)
    func statusesFollowTheSandboxClock(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.prepareSubscriptionCatalog()
            let key = try await store.createServerAPIKey()
            let root = store.built.signing.identity(.sandbox).root
            let (transactionId, bought) = try await store.buyMonthly(clock: clock)
            #expect(bought.expiresDate == bought.purchaseDate + 5 * 60_000)
            #expect(bought.webOrderLineItemId != nil)
            #expect(bought.subscriptionGroupIdentifier == "21000001")

            let statuses = try await store.inApps(
                .GET, "/inApps/v1/subscriptions/\(transactionId)", key: key, clock: clock)
            #expect(statuses.status == 200, "\(statuses.text)")
            #expect(statuses.header("Content-Type") == "application/json")
            #expect(statuses.json["environment"] as? String == "Sandbox")
            #expect(statuses.json["bundleId"] as? String == TestStore.bundleId)
            #expect(statuses.json["appAppleId"] as? Int == 1_400_000_001)
            let group = try #require((statuses.json["data"] as? [[String: Any]])?.first)
            #expect(group["subscriptionGroupIdentifier"] as? String == "21000001")
            let last = try #require((group["lastTransactions"] as? [[String: Any]])?.first)
            #expect(last["status"] as? Int == 1)
            #expect(last["originalTransactionId"] as? String == transactionId)
            let renewal = try await verifiedPayload(
                try #require(last["signedRenewalInfo"] as? String), as: JWSRenewalInfoDecodedPayload.self, root: root,
                clock: clock)
            #expect(renewal.autoRenewStatus == 1)
            #expect(renewal.autoRenewProductId == TestStore.monthly)
            #expect(renewal.renewalDate == bought.expiresDate)
            #expect(renewal.expirationIntent == nil)
            #expect(renewal.currency == "USD")
            #expect(renewal.renewalPrice == 990)
            #expect(renewal.recentSubscriptionStartDate == bought.purchaseDate)
            #expect(renewal.environment == "Sandbox")
            #expect(renewal.signedDate == clock.now().millisecondsSince1970)

            let active = try await store.inApps(
                .GET, "/inApps/v1/subscriptions/\(transactionId)?status=1&status=4", key: key, clock: clock)
            #expect((active.json["data"] as? [Any])?.count == 1)
            let expiredOnly = try await store.inApps(
                .GET, "/inApps/v1/subscriptions/\(transactionId)/?status=2", key: key, clock: clock)
            #expect(expiredOnly.status == 200, "trailing slash: \(expiredOnly.text)")
            #expect((expiredOnly.json["data"] as? [Any])?.isEmpty == true)

            // Any transaction of the customer names the customer.
            let coins = try await store.pay(TestStore.coins, token: try await store.signIn())
            let viaCoins = try await store.inApps(
                .GET, "/inApps/v1/subscriptions/\(try #require(coins.transactionId))", key: key, clock: clock)
            #expect((viaCoins.json["data"] as? [Any])?.count == 1)

            for (path, code) in [
                ("/inApps/v1/subscriptions/\(transactionId)?status=9", 4_000_031),
                ("/inApps/v1/subscriptions/\(transactionId)?status=active", 4_000_031),
                ("/inApps/v1/subscriptions/abc", 4_000_006),
                ("/inApps/v1/subscriptions/2999999999999999", 4_040_010),
            ] {
                let refused = try await store.inApps(.GET, path, key: key, clock: clock)
                #expect(refused.appleErrorCode == code, "\(path): \(refused.text)")
                #expect(refused.status == code / 10_000)
            }
            let otherEnvironment = try await store.inApps(
                .GET, "/inApps/v1/subscriptions/\(transactionId)", key: key, sandbox: false, clock: clock)
            #expect(otherEnvironment.appleErrorCode == 4_040_010)

            // With auto-renew off, the period end expires it (the scheduler would renew it otherwise).
            #expect(try await store.subscriptionControl(transactionId, "auto-renew-off").status == 200)
            #expect(try await store.advanceSandboxClock("301").json["expired"] as? Int == 1)
            let later = try await store.inApps(
                .GET, "/inApps/v1/subscriptions/\(transactionId)", key: key, clock: clock)
            let expired = try #require(
                ((later.json["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first)
            #expect(expired["status"] as? Int == 2)
            let ended = try await verifiedPayload(
                try #require(expired["signedRenewalInfo"] as? String), as: JWSRenewalInfoDecodedPayload.self,
                root: root, clock: clock)
            #expect(ended.autoRenewStatus == 0)
            #expect(ended.expirationIntent == 1)
            #expect(ended.renewalDate == nil)
        }
    }

    /// Single extensions move the expiry, re-sign the transaction, notify `RENEWAL_EXTENDED`, repeat idempotently
    /// and stop at two a year; mass extensions extend every active subscriber, count the ones at the limit as
    /// failed, notify per subscription and with a summary, and report their status.
    @Test(arguments: TestDatabase.available)
    func renewalDateExtensions(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await store.prepareSubscriptionCatalog()
                try await store.createTester("second@example.com")
                let key = try await store.createServerAPIKey()
                let root = store.built.signing.identity(.sandbox).root
                try await store.setNotificationURLs([receiver.url])
                let (first, firstBought) = try await store.buyMonthly(clock: clock)
                let (second, _) = try await store.buyMonthly(as: "second@example.com", clock: clock)
                // The purchases' SUBSCRIBED: the receiver then gets the extensions' notifications only.
                try await receiver.drain(2, from: store)
                let day: Int64 = 86_400_000

                func extend(_ id: String, _ requestIdentifier: String, days: Int = 3, reason: Int = 1) async throws
                    -> TestStore.Answer
                {
                    try await store.inApps(
                        .PUT, "/inApps/v1/subscriptions/extend/\(id)", key: key,
                        json: [
                            "extendByDays": days, "extendReasonCode": reason, "requestIdentifier": requestIdentifier,
                        ],
                        clock: clock)
                }
                let extended = try await extend(first, "r1")
                #expect(extended.status == 200, "\(extended.text)")
                #expect(extended.json["originalTransactionId"] as? String == first)
                let webOrderLineItemId = try #require(firstBought.webOrderLineItemId)
                #expect(extended.json["webOrderLineItemId"] as? String == webOrderLineItemId)
                #expect(extended.json["success"] as? Bool == true)
                let effective = try #require(firstBought.expiresDate) + 3 * day
                #expect((extended.json["effectiveDate"] as? NSNumber)?.int64Value == effective)
                let again = try await extend(first, "r1")
                #expect((again.json["effectiveDate"] as? NSNumber)?.int64Value == effective)

                let statuses = try await store.inApps(.GET, "/inApps/v1/subscriptions/\(first)", key: key, clock: clock)
                let last = try #require(
                    ((statuses.json["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first
                )
                let resigned = try await verifiedPayload(
                    try #require(last["signedTransactionInfo"] as? String), as: JWSTransactionDecodedPayload.self,
                    root: root, clock: clock)
                #expect(resigned.expiresDate == effective)

                let payloads = try await receiver.payloads(from: store)
                #expect(payloads.count == 1, "one RENEWAL_EXTENDED: the repeated r1 sends nothing")
                let notification = try await verifiedPayload(
                    try #require(payloads.first), as: NotificationPayload.self, root: root, clock: clock)
                #expect(notification.notificationType == .renewalExtended)
                #expect(notification.data?.status == 1)
                #expect(notification.data?.bundleVersion == "1.0")
                let notified = try await verifiedPayload(
                    try #require(notification.data?.signedTransactionInfo), as: JWSTransactionDecodedPayload.self,
                    root: root, clock: clock)
                #expect(notified.expiresDate == effective)
                #expect(notification.data?.signedRenewalInfo != nil)

                #expect(try await extend(first, "r2").status == 200)
                #expect(try await extend(first, "r3").appleErrorCode == 4_030_005)
                #expect(
                    try await extend(second, "r1").appleErrorCode == 4_000_011, "r1 belongs to another subscription")
                for (days, reason, requestIdentifier, code) in [
                    (0, 1, "x", 4_000_009), (91, 1, "x", 4_000_009), (3, 4, "x", 4_000_010),
                    (3, 1, "", 4_000_011), (3, 1, String(repeating: "a", count: 129), 4_000_011),
                ] {
                    let refused = try await extend(second, requestIdentifier, days: days, reason: reason)
                    #expect(refused.appleErrorCode == code, "\(days) \(reason) \(requestIdentifier): \(refused.text)")
                }
                #expect(try await extend("abc", "x").appleErrorCode == 4_000_008)
                #expect(try await extend("2999999999999999", "x").appleErrorCode == 4_040_005)
                let coins = try await store.pay(TestStore.coins, token: try await store.signIn())
                let coinsId = try #require(coins.transactionId)
                #expect(try await extend(coinsId, "x").appleErrorCode == 4_030_004)

                func mass(_ fields: [String: Any]) async throws -> TestStore.Answer {
                    var body: [String: Any] = [
                        "extendByDays": 2, "extendReasonCode": 3, "requestIdentifier": "m1",
                        "productId": TestStore.monthly,
                    ]
                    body.merge(fields) { $1 }
                    return try await store.inApps(
                        .POST, "/inApps/v1/subscriptions/extend/mass", key: key, json: body, clock: clock)
                }
                let started = try await mass([:])
                #expect(started.status == 200, "\(started.text)")
                #expect(started.json["requestIdentifier"] as? String == "m1")
                let status = try await store.inApps(
                    .GET, "/inApps/v1/subscriptions/extend/mass/\(TestStore.monthly)/m1", key: key, clock: clock)
                #expect(status.json["requestIdentifier"] as? String == "m1")
                #expect(status.json["complete"] as? Bool == true)
                #expect((status.json["completeDate"] as? NSNumber)?.int64Value == clock.now().millisecondsSince1970)
                #expect(status.json["succeededCount"] as? Int == 1, "the second subscriber")
                #expect(status.json["failedCount"] as? Int == 1, "the first subscriber is at its limit")
                #expect(try await mass([:]).status == 200, "a repeated request identifier answers again")
                let japan = try await mass(["requestIdentifier": "m2", "storefrontCountryCodes": ["JPN"]])
                #expect(japan.status == 200)
                let japanStatus = try await store.inApps(
                    .GET, "/inApps/v1/subscriptions/extend/mass/\(TestStore.monthly)/m2/", key: key, clock: clock)
                #expect(japanStatus.json["succeededCount"] as? Int == 0)
                #expect(japanStatus.json["failedCount"] as? Int == 0)
                for (fields, code) in [
                    (["storefrontCountryCodes": [String]()], 4_000_027),
                    (["storefrontCountryCodes": ["XXX"]], 4_000_028),
                    (["productId": TestStore.coins], 4_000_023), (["productId": "com.example.nope"], 4_000_023),
                    (["extendByDays": 100], 4_000_009),
                ] as [([String: Any], Int)] {
                    var changed = fields
                    changed["requestIdentifier"] = "m3"
                    #expect(try await mass(changed).appleErrorCode == code, "\(fields)")
                }
                for path in ["\(TestStore.monthly)/unknown", "com.example.other/m1"] {
                    let missing = try await store.inApps(
                        .GET, "/inApps/v1/subscriptions/extend/mass/\(path)", key: key, clock: clock)
                    #expect(missing.appleErrorCode == 4_040_009)
                }

                // The coins' ONE_TIME_CHARGE, r1, r2, then m1 (one extension, one failure, a summary) and m2 (a summary).
                let all = try await receiver.payloads(from: store)
                #expect(all.count == 7)
                var kinds: [String] = []
                var summaries: [NotificationSummary] = []
                for payload in all {
                    let decoded = try await verifiedPayload(
                        payload, as: NotificationPayload.self, root: root, clock: clock)
                    kinds.append(
                        [decoded.notificationType.rawValue, decoded.subtype?.rawValue].compactMap { $0 }.joined(
                            separator: "/"))
                    if let summary = decoded.summary { summaries.append(summary) }
                }
                #expect(
                    kinds.sorted() == [
                        "ONE_TIME_CHARGE", "RENEWAL_EXTENDED", "RENEWAL_EXTENDED", "RENEWAL_EXTENDED",
                        "RENEWAL_EXTENSION/FAILURE",
                        "RENEWAL_EXTENSION/SUMMARY", "RENEWAL_EXTENSION/SUMMARY",
                    ])
                let summary = try #require(summaries.first { $0.requestIdentifier == "m1" })
                #expect(summary.succeededCount == 1)
                #expect(summary.failedCount == 1)
                #expect(summary.productId == TestStore.monthly)
                #expect(summaries.first { $0.requestIdentifier == "m2" }?.storefrontCountryCodes == ["JPN"])

                clock.advance(by: 30 * 86_400)
                #expect(try await extend(second, "late").appleErrorCode == 4_030_004, "expired")
            }
        }
    }
}
