import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// The sandbox test controls for refunds and revocations, over HTTP on both engines: each changes the
/// transaction as Apple would, re-signs it and sends its notification to a live receiver, once.
@Suite struct RefundTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// A consumable's refund request, decline, prorated refund and reversal; a Family Sharing revocation; a
    /// subscription's refund and reversal: the receiver gets exactly one notification per change, in order, and
    /// repeated controls answer the same without sending more.
    @Test(arguments: TestDatabase.available)
    func refundsAndRevocationsReachTheAppsServer(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await store.prepareSubscriptionCatalog()
                try await store.setNotificationURLs([receiver.url])
                let key = try await store.createServerAPIKey()
                let token = try await store.signIn()
                let coins = try #require(try await store.pay(TestStore.coins, token: token).transactionId)
                let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)
                let (monthly, _) = try await store.buyMonthly(clock: clock)
                let notifications = store.built.context.notifications
                await notifications.deliverDue(.sandbox)
                let before = receiver.payloads.count
                let root = store.built.signing.identity(.sandbox).root

                /// Runs a control, waits for its notification's delivery and returns the answer; `refused` is the
                /// error code of a control that must answer 409.
                func control(_ id: String, _ action: String, _ body: [String: Any] = [:], refused: String? = nil)
                    async throws -> TestStore.Answer
                {
                    clock.advance(by: 1)
                    let answer = try await Self.control(store, id, action, body)
                    #expect(answer.status == (refused == nil ? 200 : 409), "\(action) \(id): \(answer.text)")
                    #expect(answer.errorCode == refused, "\(action) \(id): \(answer.text)")
                    await notifications.deliverDue(.sandbox)
                    return answer
                }
                func transaction(_ answer: TestStore.Answer) async throws -> JWSTransactionDecodedPayload {
                    try await verifiedPayload(
                        try #require(answer.json["signedTransaction"] as? String),
                        as: JWSTransactionDecodedPayload.self,
                        root: root, clock: clock)
                }

                let requested = try await control(coins, "request-refund", ["reason": "UNINTENDED_PURCHASE"])
                #expect(requested.json["notificationType"] as? String == "CONSUMPTION_REQUEST")
                let again = try await control(coins, "request-refund", ["reason": "UNINTENDED_PURCHASE"])
                let requestUUID = try #require(requested.json["notificationUUID"] as? String, "\(requested.text)")
                #expect(again.json["notificationUUID"] as? String == requestUUID)
                _ = try await control(coins, "decline-refund")
                _ = try await control(coins, "decline-refund")

                let refunded = try await control(coins, "refund", ["reason": 1, "percentage": 50])
                let refundedAt = clock.now().millisecondsSince1970
                #expect(refunded.json["revocationType"] as? String == "REFUND_PRORATED")
                #expect(refunded.json["refundedMinorUnits"] as? Int == 49, "half of 0.99, rounded down")
                let refundedCoins = try await transaction(refunded)
                #expect(refundedCoins.revocationDate == refundedAt)
                #expect(refundedCoins.revocationReason == 1)
                #expect(refundedCoins.revocationType == .refundProrated)
                #expect(refundedCoins.revocationPercentage == 49_494)
                let refundedAgain = try await control(coins, "refund", ["reason": 1, "percentage": 50])
                let refundUUID = try #require(refunded.json["notificationUUID"] as? String, "\(refunded.text)")
                #expect(refundedAgain.json["notificationUUID"] as? String == refundUUID)
                #expect(
                    (refundedAgain.json["revocationDate"] as? NSNumber)?.int64Value == refundedAt,
                    "a repeat changes nothing")
                _ = try await control(coins, "request-refund", refused: "already_revoked")

                let secret = try await store.request(.POST, "/admin/v1/apps/\(TestStore.bundleId)/shared-secret")
                let receipt = try await store.verifyReceipt([
                    "receipt-data": try await store.appReceipt(token: token),
                    "password": try #require(secret.json["sharedSecret"] as? String),
                ])
                let inApp = (receipt.json["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]]
                let coinsInReceipt = inApp?.first { $0["transaction_id"] as? String == coins }
                #expect(coinsInReceipt?["cancellation_date_ms"] as? String == String(refundedAt), "\(receipt.text)")
                #expect(coinsInReceipt?["cancellation_reason"] as? String == "1")

                let reversed = try await control(coins, "reverse-refund")
                #expect(reversed.json["revocationDate"] == nil)
                #expect(try await transaction(reversed).revocationDate == nil)
                _ = try await control(coins, "reverse-refund")

                let revoked = try await control(unlock, "revoke")
                #expect(try await transaction(revoked).revocationType == .familyRevoke)
                _ = try await control(coins, "revoke", refused: "not_shareable")
                _ = try await control(unlock, "request-refund", refused: "no_consumption_request")
                _ = try await control(unlock, "reverse-refund", refused: "not_refunded")

                _ = try await control(monthly, "refund")
                let revokedStatus = try await store.inApps(
                    .GET, "/inApps/v1/subscriptions/\(monthly)", key: key, clock: clock)
                #expect(Self.statuses(revokedStatus) == [5], "\(revokedStatus.text)")
                _ = try await control(monthly, "reverse-refund")
                let activeStatus = try await store.inApps(
                    .GET, "/inApps/v1/subscriptions/\(monthly)", key: key, clock: clock)
                #expect(Self.statuses(activeStatus) == [1], "\(activeStatus.text)")

                var sent: [NotificationPayload] = []
                for payload in try await receiver.payloads(from: store).dropFirst(before) {
                    sent.append(
                        try await verifiedPayload(payload, as: NotificationPayload.self, root: root, clock: clock))
                }
                try #require(
                    sent.map(\.notificationType) == [
                        .consumptionRequest, .refundDeclined, .refund, .refundReversed, .revoke, .refund,
                        .refundReversed,
                    ])
                #expect(sent[0].data?.consumptionRequestReason == "UNINTENDED_PURCHASE")
                #expect(sent[0].data?.status == nil, "a consumable has no subscription status")
                #expect(sent[5].data?.status == 5)
                #expect(sent[5].data?.signedRenewalInfo != nil)
                #expect(sent[6].data?.status == 1)
                let refundedMonthly = try await verifiedPayload(
                    try #require(sent[5].data?.signedTransactionInfo), as: JWSTransactionDecodedPayload.self,
                    root: root, clock: clock)
                #expect(refundedMonthly.revocationType == .refundFull)
                #expect(refundedMonthly.revocationPercentage == 100_000)
            }
        }
    }

    /// Bad input is a clear 4xx: unknown transaction, bad reason or percentage, unknown fields.
    @Test(arguments: TestDatabase.available)
    func badRefundRequestsAreRefused(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let token = try await store.signIn()
            let coins = try #require(try await store.pay(TestStore.coins, token: token).transactionId)
            let unknown = try await Self.control(store, "999999", "refund", [:])
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "transaction_not_found", "\(unknown.text)")
            for (action, body, code, field) in [
                ("refund", ["reason": 7], "invalid_reason", "reason"),
                ("refund", ["percentage": 0], "invalid_percentage", "percentage"),
                ("refund", ["amount": 1], "unknown_field", "amount"),
                ("request-refund", ["reason": "BORED"], "invalid_reason", "reason"),
            ] as [(String, [String: Any], String, String)] {
                let refused = try await Self.control(store, coins, action, body)
                #expect(refused.status == 400, "\(action) \(body): \(refused.text)")
                #expect(refused.errorCode == code, "\(action) \(body): \(refused.text)")
                #expect(refused.errorField == field, "\(action) \(body): \(refused.text)")
            }
        }
    }

    static func control(_ store: TestStore, _ id: String, _ action: String, _ body: [String: Any]) async throws
        -> TestStore.Answer
    {
        try await store.request(
            .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/transactions/\(id)/\(action)", json: body,
            token: .some(store.adminToken))
    }

    /// The `status` of every subscription in a Get All Subscription Statuses answer.
    static func statuses(_ answer: TestStore.Answer) -> [Int] {
        ((answer.json["data"] as? [[String: Any]]) ?? []).flatMap { group in
            ((group["lastTransactions"] as? [[String: Any]]) ?? []).compactMap { $0["status"] as? Int }
        }
    }
}
