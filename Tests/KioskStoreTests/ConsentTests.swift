import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import Testing

/// A parent or guardian withdraws consent for a child's use of the app: the app's server gets `RESCIND_CONSENT`
/// with `appData` (the child's signed app transaction) instead of `data`, once.
@Suite struct ConsentTests {
    @Test(arguments: TestDatabase.available)
    func withdrawingConsentSendsRescindConsentOnce(database: TestDatabase) async throws {
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database) { store in
                try await store.preparePurchaseCatalog()
                try await store.setNotificationURLs([receiver.url])
                let token = try await store.signIn()
                let bought = try await store.pay(TestStore.removeAds, token: token)
                let signed = try #require(Subscriptions.signedTransaction(bought), "\(bought.text)")
                let transaction = try await Subscriptions.transaction(signed, store: store, clock: SystemClock())
                try await receiver.drain(1, from: store)

                let path = "/sandbox/test/v1/apps/\(TestStore.bundleId)/rescind-consent"
                let rescinded = try await store.request(
                    .POST, path, json: ["tester": TestStore.testerEmail], token: .some(store.adminToken))
                #expect(rescinded.status == 201, "\(rescinded.text)")
                #expect(rescinded.json["rescinded"] as? Bool == true)
                #expect(rescinded.json["appTransactionId"] as? String == transaction.appTransactionId)
                let notification = try #require(rescinded.json["notification"] as? [String: Any])
                #expect(notification["notificationType"] as? String == "RESCIND_CONSENT")
                let uuid = try #require(notification["notificationUUID"] as? String)

                let again = try await store.request(
                    .POST, path, json: ["tester": TestStore.testerEmail.uppercased()], token: .some(store.adminToken))
                #expect(again.status == 200 && again.json["rescinded"] as? Bool == false, "\(again.text)")
                #expect((again.json["notification"] as? [String: Any])?["notificationUUID"] as? String == uuid)

                // Apple's verifier checks the payload and its app transaction (through the receiver).
                let arrived = try await receiver.payloads(from: store)
                #expect(arrived.count == 1, "one notification, not one per request")
                let payload = try await verifiedPayload(
                    try #require(arrived.first), as: NotificationPayload.self,
                    root: store.built.signing.identity(.sandbox).root, clock: SystemClock())
                #expect(payload.notificationType == .rescindConsent && payload.notificationUUID == uuid)
                #expect(payload.data == nil && payload.summary == nil)
                let appData = try #require(payload.appData)
                #expect(appData.bundleId == TestStore.bundleId && appData.environment == "Sandbox")
                let appTransaction = try await verifiedPayload(
                    try #require(appData.signedAppTransactionInfo), as: AppTransactionPayload.self,
                    root: store.built.signing.identity(.sandbox).root, clock: SystemClock())
                #expect(appTransaction.appTransactionId == transaction.appTransactionId)

                let unknown = try await store.request(
                    .POST, path, json: ["tester": "nobody@example.com"], token: .some(store.adminToken))
                #expect(unknown.status == 404 && unknown.errorCode == "tester_not_found", "\(unknown.text)")
                let unauthorized = try await store.request(
                    .POST, path, json: ["tester": TestStore.testerEmail], token: .some(nil))
                #expect(unauthorized.status == 401)
            }
        }
    }

    typealias Subscriptions = SubscriptionPurchaseTests
}
