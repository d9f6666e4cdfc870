import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// Subscription life cycles on the sandbox clock, over HTTP on both engines: renewals, the sandbox's 12-renewal
/// cap, auto-renew off, billing retry and recovery, grace periods, price increases and downgrades, each checked
/// in the transactions, verifyReceipt, Get All Subscription Statuses and the notifications a receiver records.
@Suite struct SubscriptionLifecycleTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    /// A sandbox month at Apple's rate, in milliseconds.
    static let month: Int64 = 5 * 60_000

    /// Renews at each period boundary (a new transaction, line item and period, the same original transaction),
    /// notifies DID_RENEW and shows the latest period everywhere; after 12 renewals the sandbox expires it.
    @Test(arguments: TestDatabase.available)
    func renewsUntilTheSandboxCap(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                let advanced = try await store.advanceSandboxClock("16m")
                #expect(advanced.status == 200, "\(advanced.text)")
                #expect(advanced.json["renewed"] as? Int == 3)
                #expect(advanced.json["expired"] as? Int == 0)

                let periods = try await store.subscriptionPeriods(clock: clock)
                #expect(periods.count == 4)
                for (previous, next) in zip(periods, periods.dropFirst()) {
                    #expect(next.transactionReason == "RENEWAL")
                    #expect(next.originalTransactionId == bought.transactionId)
                    #expect(next.originalPurchaseDate == bought.purchaseDate)
                    #expect(next.purchaseDate == previous.expiresDate, "a renewal starts at the period boundary")
                    #expect(next.expiresDate == next.purchaseDate + Self.month)
                    #expect(next.webOrderLineItemId != previous.webOrderLineItemId)
                    #expect(next.price == 990)
                }
                let kinds = try await store.notificationKinds(receiver, count: 3, clock: clock)
                #expect(kinds == ["DID_RENEW", "DID_RENEW", "DID_RENEW"])
                // The renewals reach the app's payment queue (Transaction.updates, SK1 observers) as purchases.
                let updates = try await store.readUpdates(token: try await store.signIn(), count: 4)
                let streamed = updates.compactMap { ($0["transaction"] as? [String: Any])?["transactionId"] as? String }
                #expect(streamed == periods.map(\.transactionId), "\(updates)")
                #expect(updates.allSatisfy { $0["state"] as? String == "purchased" }, "\(updates)")

                let status = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(status.status == 1)
                #expect(status.transaction.transactionId == periods.last?.transactionId)
                #expect(status.renewal.renewalDate == periods.last?.expiresDate)
                #expect(status.renewal.recentSubscriptionStartDate == bought.purchaseDate)

                let receipt = try await store.verifyAppReceipt()
                #expect((receipt.json["latest_receipt_info"] as? [[String: Any]])?.count == 4)
                let pending = try #require((receipt.json["pending_renewal_info"] as? [[String: Any]])?.first)
                #expect(pending["auto_renew_status"] as? String == "1")

                let capped = try await store.advanceSandboxClock("1h")
                #expect(capped.json["renewed"] as? Int == 9, "\(capped.text)")
                #expect(capped.json["expired"] as? Int == 1)
                #expect(try await store.subscriptionPeriods(clock: clock).count == 13)
                let all = try await store.notificationKinds(receiver, count: 13, clock: clock)
                #expect(all == Array(repeating: "DID_RENEW", count: 12) + ["EXPIRED/VOLUNTARY"])
                let ended = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(ended.status == 2)
                #expect(ended.renewal.expirationIntent == 1)
                #expect(ended.renewal.autoRenewStatus == 0)
                #expect(try await store.advanceSandboxClock("1h").json["renewed"] as? Int == 0)
            }
        }
    }

    /// More subscriptions fall due at once than one batch holds (PostgreSQL: worked on by two batches at a time,
    /// identifiers reserved ahead, inserts gathered per batch): each renews exactly once, into its own transaction,
    /// queue entry and DID_RENEW notification, with unique transaction and line item ids.
    @Test(arguments: TestDatabase.available)
    func manyDueAtOnceRenewEachOnce(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.prepareSubscriptionCatalog()
            let count = 300
            let (first, _) = try await store.buyMonthly(clock: clock)
            try await store.built.database.seedSubscriptions(count - 1, copying: try #require(Int64(first)))
            let advanced = try await store.advanceSandboxClock("6m")
            #expect(advanced.status == 200, "\(advanced.text)")
            #expect(advanced.json["renewed"] as? Int == count, "\(advanced.text)")

            let (transactions, notifications, queue) = try await store.built.database.transaction { tx in
                let app = try #require(try await tx.app(bundleId: TestStore.bundleId))
                let notifications = try await tx.notifications(appId: app.id, environment: .sandbox, limit: 10_000)
                let subscriptions = notifications.compactMap(\.originalTransactionId)
                let transactions = try await tx.transactions(
                    originalTransactionIds: Array(Set(subscriptions)), environment: .sandbox)
                var queue: [QueueRecord] = []
                for accountId in Set(transactions.map(\.accountId)) {
                    queue += try await tx.queueRecords(
                        accountId: accountId, appId: app.id, environment: .sandbox, after: 0, limit: 100)
                }
                return (transactions, notifications, queue)
            }
            let renewals = transactions.filter { $0.transactionReason == .renewal }
            #expect(renewals.count == count)
            #expect(Set(renewals.map(\.originalTransactionId)).count == count, "one renewal per subscription")
            #expect(Set(transactions.map(\.id)).count == 2 * count)
            #expect(Set(transactions.compactMap(\.webOrderLineItemId)).count == 2 * count)
            #expect(notifications.filter { $0.notificationType == .didRenew }.count == count)
            #expect(Set(notifications.compactMap(\.transactionId)).isSuperset(of: renewals.map(\.id)))
            // A batch signs its renewals beside its statements: each stored renewal, and each DID_RENEW (signed as it
            // would be sent) with the renewal and renewal info it carries, verifies and names its own transaction.
            let root = store.built.signing.identity(.sandbox).root
            for renewal in renewals {
                let signed = try await verifiedPayload(
                    renewal.signedTransaction, as: JWSTransactionDecodedPayload.self, root: root, clock: clock)
                #expect(signed.transactionId == String(renewal.id) && signed.transactionReason == "RENEWAL")
            }
            for notification in notifications where notification.notificationType == .didRenew {
                let payload = try await verifiedPayload(
                    try store.built.signing.sign(notification), as: NotificationPayload.self, root: root, clock: clock)
                let carried = try await verifiedPayload(
                    try #require(payload.data?.signedTransactionInfo), as: JWSTransactionDecodedPayload.self,
                    root: root, clock: clock)
                let renewalInfo = try await verifiedPayload(
                    try #require(payload.data?.signedRenewalInfo), as: JWSRenewalInfoDecodedPayload.self, root: root,
                    clock: clock)
                #expect(carried.transactionId == notification.transactionId.map(String.init))
                #expect(renewalInfo.originalTransactionId == carried.originalTransactionId)
            }
            #expect(Set(queue.compactMap(\.transactionId)).isSuperset(of: renewals.map(\.id)))
            // Each renewal records what it earned, in its batch: US$0.99 less 30%.
            let earned = try await store.built.database.transaction { tx in
                try await tx.moneyEvents(environment: .sandbox, from: Self.start, to: clock.now() + 3_600)
            }
            .filter { $0.kind == .renewal }
            #expect(Set(earned.map(\.transactionId)) == Set(renewals.map(\.id)))
            #expect(earned.allSatisfy { $0.amounts.proceedsMinorUnits == 69 && $0.units == 1 })
            #expect(try await store.advanceSandboxClock("1m").json["renewed"] as? Int == 0)
        }
    }

    /// Auto-renew off notifies DID_CHANGE_RENEWAL_STATUS and expires the subscription at the period end
    /// (EXPIRED/VOLUNTARY, intent 1), as verifyReceipt's pending_renewal_info says; turning it on again before then
    /// keeps it renewing.
    @Test(arguments: TestDatabase.available)
    func autoRenewOffExpiresVoluntarily(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                let off = try await store.subscriptionControl(bought.transactionId, "auto-renew-off")
                #expect(off.status == 200, "\(off.text)")
                #expect(off.json["autoRenewStatus"] as? Bool == false)
                // A second apart, so the notifications' signed dates order them.
                #expect(try await store.advanceSandboxClock("1s").status == 200)
                #expect(try await store.subscriptionControl(bought.transactionId, "auto-renew-on").status == 200)
                #expect(try await store.advanceSandboxClock("1s").status == 200)
                #expect(try await store.subscriptionControl(bought.transactionId, "auto-renew-off").status == 200)
                #expect(
                    try await store.subscriptionControl(bought.transactionId, "auto-renew-off").status == 200,
                    "off again changes nothing")

                let pendingBefore = try #require(
                    (try await store.verifyAppReceipt().json["pending_renewal_info"] as? [[String: Any]])?.first)
                #expect(pendingBefore["auto_renew_status"] as? String == "0")
                #expect(pendingBefore["expiration_intent"] == nil)

                let advanced = try await store.advanceSandboxClock("5m")
                #expect(advanced.json["expired"] as? Int == 1, "\(advanced.text)")
                #expect(advanced.json["renewed"] as? Int == 0)
                #expect(
                    try await store.notificationKinds(receiver, count: 4, clock: clock) == [
                        "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED",
                        "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY",
                    ])
                let pending = try #require(
                    (try await store.verifyAppReceipt().json["pending_renewal_info"] as? [[String: Any]])?.first)
                #expect(pending["expiration_intent"] as? String == "1")
                #expect(pending["auto_renew_status"] as? String == "0")
                #expect(pending["is_in_billing_retry_period"] as? String == "0")
                let status = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(status.status == 2)
                #expect(try await store.subscriptionPeriods(clock: clock).count == 1)
                let refused = try await store.subscriptionControl(bought.transactionId, "auto-renew-on")
                #expect(refused.status == 409, "an expired subscription cannot renew: \(refused.text)")
                #expect(refused.errorCode == "subscription_state", "\(refused.text)")
            }
        }
    }

    /// Buying again in a group whose subscription expired resubscribes: a new period of the same subscription
    /// (same original transaction and original purchase date), SUBSCRIBED/RESUBSCRIBE, active and renewing again.
    @Test(arguments: TestDatabase.available)
    func expiredSubscriptionResubscribes(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                #expect(try await store.subscriptionControl(bought.transactionId, "auto-renew-off").status == 200)
                #expect(try await store.advanceSandboxClock("6m").json["expired"] as? Int == 1)

                let (again, payload) = try await store.buyMonthly(clock: clock)
                #expect(again != bought.transactionId)
                #expect(payload.originalTransactionId == bought.transactionId)
                #expect(payload.originalPurchaseDate == bought.purchaseDate)
                #expect(payload.transactionReason == "PURCHASE")
                #expect(
                    try await store.notificationKinds(receiver, count: 3, clock: clock) == [
                        "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY", "SUBSCRIBED/RESUBSCRIBE",
                    ])
                let status = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(status.status == 1)
                #expect(status.transaction.transactionId == again)
                #expect(status.renewal.autoRenewStatus == 1)

                let renewed = try await store.advanceSandboxClock("5m")
                #expect(renewed.json["renewed"] as? Int == 1, "\(renewed.text)")
                #expect(try await store.subscriptionPeriods(clock: clock).count == 3)
            }
        }
    }

    /// A failed renewal starts billing retry (DID_FAIL_TO_RENEW, status 3, isInBillingRetryPeriod); the next
    /// attempt succeeds and recovers it (DID_RENEW/BILLING_RECOVERY), with the new period starting then.
    @Test(arguments: TestDatabase.available)
    func billingRetryRecovers(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                #expect(try await store.subscriptionControl(bought.transactionId, "fail-renewal").status == 200)
                let failed = try await store.advanceSandboxClock("5m")
                #expect(failed.json["billingRetries"] as? Int == 1, "\(failed.text)")
                let retrying = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(retrying.status == 3)
                #expect(retrying.renewal.isInBillingRetryPeriod == true)
                #expect(retrying.renewal.gracePeriodExpiresDate == nil)
                let pending = try #require(
                    (try await store.verifyAppReceipt().json["pending_renewal_info"] as? [[String: Any]])?.first)
                #expect(pending["is_in_billing_retry_period"] as? String == "1")

                // The first retry comes a (sandbox) day later: 10 seconds.
                let recovered = try await store.advanceSandboxClock("10s")
                #expect(recovered.json["recovered"] as? Int == 1, "\(recovered.text)")
                let periods = try await store.subscriptionPeriods(clock: clock)
                #expect(periods.count == 2)
                let expiry = try #require(bought.expiresDate)
                #expect(periods.last?.purchaseDate == expiry + 10_000, "the new period starts at the recovery")
                #expect(periods.last?.expiresDate == expiry + 10_000 + Self.month)
                #expect(
                    try await store.notificationKinds(receiver, count: 2, clock: clock) == [
                        "DID_FAIL_TO_RENEW", "DID_RENEW/BILLING_RECOVERY",
                    ])
                let active = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(active.status == 1)
                #expect(active.renewal.isInBillingRetryPeriod == nil)
            }
        }
    }

    /// With a grace period, a tester whose payments are declined gets DID_FAIL_TO_RENEW/GRACE_PERIOD (status 4,
    /// gracePeriodExpiresDate), then GRACE_PERIOD_EXPIRED (still retrying, status 3), then after 60 (sandbox) days
    /// EXPIRED/BILLING_RETRY with intent 2.
    @Test(arguments: TestDatabase.available)
    func gracePeriodThenBillingRetryExpiry(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                let grace = try await store.request(
                    .PUT, "/sandbox/test/v1/apps/\(TestStore.bundleId)/grace-period", json: ["days": 3],
                    token: .some(store.adminToken))
                #expect(grace.json["days"] as? Int == 3, "\(grace.text)")
                let refused = try await store.request(
                    .PUT, "/sandbox/test/v1/apps/\(TestStore.bundleId)/grace-period", json: ["days": 5],
                    token: .some(store.adminToken))
                #expect(refused.status == 400)
                #expect(refused.errorCode == "invalid_grace_period", "\(refused.text)")
                #expect(refused.errorField == "days", "\(refused.text)")
                let declined = try await store.request(
                    .PATCH, "/admin/v1/testers/\(TestStore.testerEmail)", json: ["paymentOutcome": "decline"])
                #expect(declined.status == 200, "\(declined.text)")

                #expect(try await store.advanceSandboxClock("5m").json["billingRetries"] as? Int == 1)
                let inGrace = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                let expiry = try #require(bought.expiresDate)
                #expect(inGrace.status == 4)
                #expect(inGrace.renewal.gracePeriodExpiresDate == expiry + 30_000, "3 sandbox days")
                #expect(inGrace.renewal.isInBillingRetryPeriod == true)

                #expect(try await store.advanceSandboxClock("30s").json["gracePeriodsExpired"] as? Int == 1)
                #expect(try await store.subscriptionStatus(of: bought.transactionId, clock: clock).status == 3)

                let ended = try await store.advanceSandboxClock("10m")
                #expect(ended.json["expired"] as? Int == 1, "\(ended.text)")
                #expect(
                    try await store.notificationKinds(receiver, count: 3, clock: clock) == [
                        "DID_FAIL_TO_RENEW/GRACE_PERIOD", "GRACE_PERIOD_EXPIRED", "EXPIRED/BILLING_RETRY",
                    ])
                let expired = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(expired.status == 2)
                #expect(expired.renewal.expirationIntent == 2)
                #expect(expired.renewal.isInBillingRetryPeriod == false)
                #expect(try await store.subscriptionPeriods(clock: clock).count == 1)
            }
        }
    }

    /// A price increase awaits consent (PRICE_INCREASE/PENDING, priceIncreaseStatus 0); accepted, the renewal
    /// charges the new price; declined, the period end expires it (EXPIRED/PRICE_INCREASE, intent 3).
    @Test(arguments: TestDatabase.available)
    func priceIncreaseAcceptedAndDeclined(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                let repriced = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)",
                    json: ["pricing": ["tier": 2]])
                #expect(repriced.status == 200, "\(repriced.text)")
                let increased = try await store.subscriptionControl(bought.transactionId, "price-increase")
                #expect(increased.json["priceIncreaseStatus"] as? Int == 0, "\(increased.text)")
                #expect(try await store.advanceSandboxClock("1s").status == 200)
                #expect(
                    try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                        .renewal.priceIncreaseStatus == 0)
                #expect(try await store.subscriptionControl(bought.transactionId, "consent-accept").status == 200)
                let acceptedAgain = try await store.subscriptionControl(bought.transactionId, "consent-accept")
                #expect(acceptedAgain.status == 409)
                #expect(acceptedAgain.errorCode == "no_price_increase_pending", "\(acceptedAgain.text)")
                #expect(try await store.advanceSandboxClock("5m").json["renewed"] as? Int == 1)
                #expect(try await store.subscriptionPeriods(clock: clock).last?.price == 1990)
                #expect(try await store.advanceSandboxClock("1s").status == 200)

                #expect(try await store.subscriptionControl(bought.transactionId, "price-increase").status == 200)
                #expect(try await store.advanceSandboxClock("1s").status == 200)
                #expect(try await store.subscriptionControl(bought.transactionId, "consent-decline").status == 200)
                #expect(try await store.advanceSandboxClock("5m").json["expired"] as? Int == 1)
                #expect(
                    try await store.notificationKinds(receiver, count: 6, clock: clock) == [
                        "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED", "DID_RENEW", "PRICE_INCREASE/PENDING",
                        "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/PRICE_INCREASE",
                    ])
                let ended = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(ended.renewal.expirationIntent == 3)
            }
        }
    }

    /// A downgrade chosen during a period takes effect at the renewal: DID_CHANGE_RENEWAL_PREF/DOWNGRADE now,
    /// the next period in the lower product.
    @Test(arguments: TestDatabase.available)
    func downgradeTakesEffectAtRenewal(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                let basic = "com.example.pro.basic"
                let created = try await store.createProduct(
                    basic, type: "auto_renewable",
                    fields: ["subscription": ["group": "Pro", "level": 2], "duration": "P1M"])
                #expect(created.status == 201, "\(created.text)")
                let changed = try await store.subscriptionControl(
                    bought.transactionId, "set-auto-renew-product", productId: basic)
                #expect(changed.json["autoRenewProductId"] as? String == basic, "\(changed.text)")
                #expect(changed.json["productId"] as? String == TestStore.monthly)
                let pending = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(pending.renewal.autoRenewProductId == basic)
                #expect(pending.renewal.productId == TestStore.monthly)

                #expect(try await store.advanceSandboxClock("5m").json["renewed"] as? Int == 1)
                #expect(try await store.subscriptionPeriods(clock: clock).last?.productId == basic)
                #expect(
                    try await store.notificationKinds(receiver, count: 2, clock: clock) == [
                        "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_RENEW",
                    ])
            }
        }
    }

    /// Force renewal and expiry now: the period is cut at the sandbox's now.
    @Test(arguments: TestDatabase.available)
    func renewAndExpireNow(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                #expect(try await store.advanceSandboxClock("1m").status == 200)
                let renewed = try await store.subscriptionControl(bought.transactionId, "renew")
                #expect(renewed.json["renewalCount"] as? Int == 1, "\(renewed.text)")
                let periods = try await store.subscriptionPeriods(clock: clock)
                #expect(periods.count == 2)
                #expect(periods.first?.expiresDate == bought.purchaseDate + 60_000, "the first period ends now")
                #expect(periods.last?.purchaseDate == bought.purchaseDate + 60_000)
                #expect(try await store.advanceSandboxClock("1s").status == 200)
                let expired = try await store.subscriptionControl(bought.transactionId, "expire")
                #expect(expired.json["state"] as? String == "expired")
                let expiredAgain = try await store.subscriptionControl(bought.transactionId, "expire")
                #expect(expiredAgain.status == 409)
                #expect(expiredAgain.errorCode == "subscription_state", "\(expiredAgain.text)")
                #expect(
                    try await store.notificationKinds(receiver, count: 2, clock: clock) == [
                        "DID_RENEW", "EXPIRED/VOLUNTARY",
                    ])
                let unknown = try await store.subscriptionControl(bought.transactionId, "explode")
                #expect(unknown.status == 400)
                #expect(unknown.errorCode == "unknown_subscription_action", "\(unknown.text)")
                let missing = try await store.subscriptionControl("2999999999999999", "renew")
                #expect(missing.status == 404)
                #expect(missing.errorCode == "subscription_not_found", "\(missing.text)")
            }
        }
    }

    /// Periods follow the tester's renewal rate (a month lasts 15 minutes at "15m"); a product removed from sale
    /// stops renewing: EXPIRED/PRODUCT_NOT_FOR_SALE, intent 4.
    @Test(arguments: TestDatabase.available)
    func renewalRateAndRemovalFromSale(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let bought = try await store.subscribeMonthly(receiver: receiver, clock: clock)
                let slower = try await store.request(
                    .PATCH, "/admin/v1/testers/\(TestStore.testerEmail)", json: ["renewalRate": "15m"])
                #expect(slower.status == 200, "\(slower.text)")
                #expect(try await store.advanceSandboxClock("5m").json["renewed"] as? Int == 1)
                let renewal = try #require(try await store.subscriptionPeriods(clock: clock).last)
                #expect(renewal.expiresDate == renewal.purchaseDate + 3 * Self.month)

                for action in ["submit", "approve", "remove_from_sale"] {
                    let reviewed = try await store.request(
                        .POST, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)/review",
                        json: ["action": action])
                    #expect(reviewed.status == 200, "\(action): \(reviewed.text)")
                }
                #expect(try await store.advanceSandboxClock("15m").json["expired"] as? Int == 1)
                #expect(
                    try await store.notificationKinds(receiver, count: 2, clock: clock) == [
                        "DID_RENEW", "EXPIRED/PRODUCT_NOT_FOR_SALE",
                    ])
                let ended = try await store.subscriptionStatus(of: bought.transactionId, clock: clock)
                #expect(ended.renewal.expirationIntent == 4)
            }
        }
    }

    /// The sandbox clock: shown, frozen, advanced while frozen, resumed, set; it never moves back, and bad
    /// requests say what to send.
    @Test(arguments: TestDatabase.available)
    func sandboxClockOnlyMovesForward(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withTestStore(engine: database, clock: clock) { store in
            let startMs = Self.start.millisecondsSince1970
            let shown = try await store.request(.GET, "/sandbox/test/v1/clock", token: .some(store.adminToken))
            #expect(shown.json["now"] as? Int64 == startMs, "\(shown.text)")
            #expect(shown.json["frozen"] as? Bool == false)
            let anonymous = try await store.request(.GET, "/sandbox/test/v1/clock", token: .some(nil))
            #expect(anonymous.status == 401)
            #expect(anonymous.errorCode == "missing_admin_token", "\(anonymous.text)")

            let frozen = try await store.sandboxClock(["action": "freeze"])
            #expect(frozen.json["frozen"] as? Bool == true)
            clock.advance(by: 60)
            #expect(
                try await store.sandboxClock(["action": "advance", "by": "1h30m"]).json["now"] as? Int64
                    == startMs + 90 * 60_000)
            #expect(
                try await store.sandboxClock(["action": "advance", "by": 30]).json["now"] as? Int64
                    == startMs + 90 * 60_000 + 30_000)
            let resumed = try await store.sandboxClock(["action": "resume"])
            #expect(resumed.json["frozen"] as? Bool == false)
            #expect(resumed.json["now"] as? Int64 == startMs + 90 * 60_000 + 30_000)
            clock.advance(by: 10)
            #expect(
                try await store.request(.GET, "/sandbox/test/v1/clock", token: .some(store.adminToken))
                    .json["now"] as? Int64 == startMs + 90 * 60_000 + 40_000, "running again from where it stood")

            let set = try await store.sandboxClock(["action": "set", "to": "2026-12-01T00:00:00Z"])
            #expect(set.json["date"] as? String == "2026-12-01T00:00:00.000Z", "\(set.text)")
            for (body, code) in [
                (["action": "set", "to": "2026-11-30T00:00:00Z"], "clock_moves_back"),
                (["action": "reset"], "clock_moves_back"),
                (["action": "advance", "by": "3x"], "invalid_duration"),
                (["action": "advance"], "missing_duration"),
                (["action": "set", "to": "tomorrow"], "invalid_date"),
                (["action": "rewind"], "unknown_clock_action"),
            ] as [([String: Any], String)] {
                let refused = try await store.sandboxClock(body)
                #expect(refused.errorCode == code, "\(body): \(refused.text)")
                #expect(refused.status == (code == "clock_moves_back" ? 409 : 400))
            }
        }
    }

    /// The clock's state is stored: a store restarted on the same data keeps the sandbox time.
    @Test func sandboxClockSurvivesARestart() async throws {
        let clock = ManualClock(Self.start)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-clock-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestStore(clock: clock, dataDirectory: directory) { store in
            let advanced = try await store.sandboxClock(["action": "advance", "by": "2d"])
            #expect(advanced.status == 200, "\(advanced.text)")
        }
        try await withTestStore(clock: clock, dataDirectory: directory) { store in
            let shown = try await store.request(.GET, "/sandbox/test/v1/clock", token: .some(store.adminToken))
            #expect(shown.json["now"] as? Int64 == Self.start.millisecondsSince1970 + 2 * 86_400_000)
        }
    }
}

// MARK: - Fixtures

/// One period of a subscription, from its signed transaction.
struct SubscriptionPeriod {
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64
    var webOrderLineItemId: String?
    var transactionReason: String?
    var price: Int64?
}

extension TestStore {
    /// Prepares the subscription catalog, buys the monthly as the tester and sends later notifications to
    /// `receiver`.
    func subscribeMonthly(receiver: NotificationReceiver, clock: ManualClock) async throws
        -> (transactionId: String, purchaseDate: Int64, expiresDate: Int64?)
    {
        try await prepareSubscriptionCatalog()
        try await setNotificationURLs([receiver.url])
        let (transactionId, bought) = try await buyMonthly(clock: clock)
        // These tests count what the life cycle sends; SubscriptionPurchaseTests checks the purchase's SUBSCRIBED.
        try await receiver.drain(1, from: self)
        return (transactionId, bought.purchaseDate, bought.expiresDate)
    }

    /// `POST /sandbox/test/v1/clock`.
    func sandboxClock(_ body: [String: Any]) async throws -> Answer {
        try await request(.POST, "/sandbox/test/v1/clock", json: body, token: .some(adminToken))
    }

    func advanceSandboxClock(_ by: String) async throws -> Answer {
        try await sandboxClock(["action": "advance", "by": by])
    }

    /// A subscription test control.
    func subscriptionControl(_ originalTransactionId: String, _ action: String, productId: String? = nil)
        async throws -> Answer
    {
        var body: [String: Any] = ["action": action]
        if let productId { body["productId"] = productId }
        return try await request(
            .POST, "/sandbox/test/v1/apps/\(Self.bundleId)/subscriptions/\(originalTransactionId)", json: body,
            token: .some(adminToken))
    }

    /// The tester's auto-renewable periods, oldest first, decoded from their verified JWS.
    func subscriptionPeriods(clock: any KioskClock) async throws -> [SubscriptionPeriod] {
        let listed = try await request(
            .GET, "/sandbox/test/v1/apps/\(Self.bundleId)/transactions?tester=\(Self.testerEmail)",
            token: .some(adminToken))
        let root = built.signing.identity(.sandbox).root
        var periods: [SubscriptionPeriod] = []
        for entry in listed.json["transactions"] as? [[String: Any]] ?? [] {
            let payload = try await verifiedPayload(
                try #require(entry["signedTransaction"] as? String), as: JWSTransactionDecodedPayload.self,
                root: root, clock: clock)
            guard let expires = payload.expiresDate else { continue }
            periods.append(
                SubscriptionPeriod(
                    transactionId: payload.transactionId, originalTransactionId: payload.originalTransactionId,
                    productId: payload.productId, purchaseDate: payload.purchaseDate,
                    originalPurchaseDate: payload.originalPurchaseDate, expiresDate: expires,
                    webOrderLineItemId: payload.webOrderLineItemId, transactionReason: payload.transactionReason,
                    price: payload.price))
        }
        return periods.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
    }

    /// The subscription's status, latest transaction and renewal info from Get All Subscription Statuses.
    func subscriptionStatus(of transactionId: String, clock: any KioskClock) async throws
        -> (status: Int, transaction: JWSTransactionDecodedPayload, renewal: JWSRenewalInfoDecodedPayload)
    {
        let key = try await createServerAPIKey()
        let answer = try await inApps(.GET, "/inApps/v1/subscriptions/\(transactionId)", key: key, clock: clock)
        let last = try #require(
            ((answer.json["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first,
            "\(answer.text)")
        let root = built.signing.identity(.sandbox).root
        return (
            try #require(last["status"] as? Int),
            try await verifiedPayload(
                try #require(last["signedTransactionInfo"] as? String), as: JWSTransactionDecodedPayload.self,
                root: root, clock: clock),
            try await verifiedPayload(
                try #require(last["signedRenewalInfo"] as? String), as: JWSRenewalInfoDecodedPayload.self, root: root,
                clock: clock)
        )
    }

    /// The tester's app receipt verified by `/sandbox/verifyReceipt`.
    func verifyAppReceipt() async throws -> Answer {
        let secret = try await request(.POST, "/admin/v1/apps/\(Self.bundleId)/shared-secret").json["sharedSecret"]
        let receipt = try await request(
            .GET, "/sandbox/test/v1/apps/\(Self.bundleId)/receipt?tester=\(Self.testerEmail)", token: .some(adminToken))
        let data = try #require(receipt.json["receipt"] as? String, "\(receipt.text)")
        return try await request(
            .POST, "/sandbox/verifyReceipt", json: ["receipt-data": data, "password": secret ?? ""])
    }

    /// Delivers what is due, expects `count` notifications in all and answers `TYPE/SUBTYPE` of each in the order they were signed (each
    /// carries its subscription's transaction, renewal info and status).
    func notificationKinds(_ receiver: NotificationReceiver, count: Int, clock: any KioskClock) async throws
        -> [String]
    {
        let root = built.signing.identity(.sandbox).root
        var decoded: [NotificationPayload] = []
        let payloads = try await receiver.payloads(from: self)
        #expect(payloads.count == count)
        for payload in payloads {
            let notification = try await verifiedPayload(
                payload, as: NotificationPayload.self, root: root, clock: clock)
            #expect(notification.data?.signedTransactionInfo != nil, "\(notification.notificationType)")
            #expect(notification.data?.signedRenewalInfo != nil, "\(notification.notificationType)")
            #expect(notification.data?.status != nil, "\(notification.notificationType)")
            decoded.append(notification)
        }
        return decoded.enumerated().sorted { ($0.element.signedDate, $0.offset) < ($1.element.signedDate, $1.offset) }
            .map {
                [$0.element.notificationType.rawValue, $0.element.subtype?.rawValue].compactMap { $0 }.joined(
                    separator: "/")
            }
    }
}
