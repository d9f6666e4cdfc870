import Crypto
import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// Promotional offers as Apple defines them: signed by the merchant with an In-App Purchase key (by Swift and by
/// Apple's Python `PromotionalOfferSignatureCreator`), checked by the store, each nonce once, for customers who
/// have or had a subscription in the group; `OFFER_REDEEMED` with the purchase's subtype.
@Suite struct OfferTests {
    static let interop = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop")

    /// A `paymentDiscount` as a merchant's server makes it, signed with `key` (the app's key unless forging).
    static func discount(
        _ offerId: String = "comeback", productId: String = SubscriptionPurchaseTests.premium, keyId: String,
        key: P256.Signing.PrivateKey, nonce: UUID = UUID(), timestamp: Int64, applicationUsername: String = ""
    ) throws -> [String: Any] {
        let message = [
            TestStore.bundleId, keyId, productId, offerId, applicationUsername.lowercased(),
            nonce.uuidString.lowercased(), String(timestamp),
        ].joined(separator: "\u{2063}")
        let signature = try key.signature(for: Data(message.utf8)).derRepresentation.base64EncodedString()
        return [
            "identifier": offerId, "keyIdentifier": keyId, "nonce": nonce.uuidString, "signature": signature,
            "timestamp": timestamp,
        ]
    }

    static func pay(_ productId: String, discount: [String: Any], token: String, store: TestStore) async throws
        -> TestStore.Answer
    {
        try await store.client(
            .POST, "/payments", token: token,
            json: [
                "productId": productId, "quantity": 1, "idempotencyKey": UUID().uuidString, "paymentDiscount": discount,
            ])
    }

    /// Only past subscribers qualify; an upgrade with a valid offer is priced by it and notifies
    /// `OFFER_REDEEMED`/`UPGRADE`; a replayed nonce, a forged signature, an old timestamp, an unknown offer and
    /// missing fields each fail the payment with Apple's `SKError` code and charge nothing.
    @Test(arguments: TestDatabase.available)
    func promotionalOffersNeedAValidSignature(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await SubscriptionPurchaseTests.prepareCatalog(store)
                try await store.setNotificationURLs([receiver.url])
                let key = try await store.createServerAPIKey()
                let signingKey = try P256.Signing.PrivateKey(pemRepresentation: key.privateKeyPEM)
                let token = try await store.signIn()
                let now = clock.now().millisecondsSince1970

                let newcomer = try await Self.pay(
                    SubscriptionPurchaseTests.premium,
                    discount: try Self.discount(keyId: key.keyId, key: signingKey, timestamp: now), token: token,
                    store: store)
                #expect(newcomer.json["state"] as? String == "failed", "\(newcomer.text)")
                #expect(newcomer.skErrorCode == 18)
                #expect(newcomer.errorCode == "ineligible_for_offer")

                let monthly = try await store.pay(SubscriptionPurchaseTests.monthly, token: token)
                #expect(monthly.json["state"] as? String == "purchased", "\(monthly.text)")
                let original = try #require(monthly.transactionId)

                let valid = try Self.discount(keyId: key.keyId, key: signingKey, timestamp: now - 3_600_000)
                let upgrade = try await Self.pay(
                    SubscriptionPurchaseTests.premium, discount: valid, token: token, store: store)
                #expect(upgrade.json["state"] as? String == "purchased", "\(upgrade.text)")
                let premium = try await SubscriptionPurchaseTests.transaction(
                    SubscriptionPurchaseTests.signedTransaction(upgrade), store: store, clock: clock)
                #expect(premium.originalTransactionId == original)
                #expect(premium.offerType == 2)
                #expect(premium.offerIdentifier == "comeback")
                #expect(premium.offerDiscountType == "PAY_AS_YOU_GO")
                #expect(premium.offerPeriod == "P1M")
                #expect(premium.price == 990)
                // Both purchases happened at the same instant of the frozen clock: whether the first notification
                // went out before the second was made depends on the delivery loop, so they are found by type.
                let received = try await SubscriptionPurchaseTests.notifications(
                    receiver, count: 2, store: store, clock: clock)
                #expect(
                    received.map(\.notificationType).sorted { $0.rawValue < $1.rawValue } == [
                        .offerRedeemed, .subscribed,
                    ])
                let redeemed = try #require(received.first { $0.notificationType == .offerRedeemed })
                #expect(redeemed.subtype == .upgrade)
                #expect(redeemed.data?.status == 1)

                let forger = P256.Signing.PrivateKey()
                for (discount, skErrorCode, code) in [
                    (valid, 12, "offer_nonce_reused"),
                    (try Self.discount(keyId: key.keyId, key: forger, timestamp: now), 12, "invalid_offer_signature"),
                    (
                        try Self.discount(keyId: key.keyId, key: signingKey, timestamp: now - 25 * 3_600_000), 12,
                        "offer_signature_expired"
                    ),
                    (try Self.discount(keyId: "NOSUCHKEY0", key: signingKey, timestamp: now), 12, "unknown_offer_key"),
                    (try Self.discount("nope", keyId: key.keyId, key: signingKey, timestamp: now), 11, "unknown_offer"),
                    (
                        try Self.discount(keyId: key.keyId, key: signingKey, timestamp: now).merging(["signature": ""])
                        { $1 },
                        13, "missing_offer_params"
                    ),
                ] as [([String: Any], Int, String)] {
                    let refused = try await Self.pay(
                        SubscriptionPurchaseTests.premium, discount: discount, token: token, store: store)
                    #expect(refused.json["state"] as? String == "failed", "\(code): \(refused.text)")
                    #expect(refused.skErrorCode == skErrorCode, "\(code): \(refused.text)")
                    #expect(refused.errorCode == code, "\(refused.text)")
                    #expect(refused.transactionId == nil)
                }
                let unsent = try await store.client(
                    .POST, "/payments", token: token,
                    json: [
                        "productId": SubscriptionPurchaseTests.premium, "idempotencyKey": "x",
                        "paymentDiscount": ["identifier": "comeback"],
                    ])
                #expect(unsent.status == 400, "\(unsent.text)")
                #expect(unsent.errorCode == "missing_field", "\(unsent.text)")
            }
        }
    }

    /// A signature made by Apple's own Python library redeems the offer; on the product the account already has,
    /// it prices the next renewal: the payment answers the current period and the notification is
    /// `OFFER_REDEEMED` without a subtype.
    @Test(
        .enabled(
            if: TestEnvironment.runs(.python), "set KIOSK_TEST_PYTHON to a python with PyPI app-store-server-library"),
        arguments: TestDatabase.available)
    func appleSignedPromotionalOfferRedeems(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-offer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await SubscriptionPurchaseTests.prepareCatalog(store)
                try await store.setNotificationURLs([receiver.url])
                let key = try await store.createServerAPIKey()
                let keyFile = directory.appendingPathComponent("key.p8")
                try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .ascii)
                let token = try await store.signIn()
                let bought = try await store.pay(SubscriptionPurchaseTests.premium, token: token)
                let current = try #require(bought.transactionId, "\(bought.text)")

                let nonce = UUID()
                let timestamp = clock.now().millisecondsSince1970
                let (status, output) = try await runProcess(
                    try TestEnvironment.require(.python),
                    [
                        Self.interop.appendingPathComponent("promotional_offer_signature.py").path,
                        "--key-file", keyFile.path, "--key-id", key.keyId, "--bundle-id", TestStore.bundleId,
                        "--product-id", SubscriptionPurchaseTests.premium, "--offer-id", "comeback",
                        "--application-username", "Player-ONE", "--nonce", nonce.uuidString,
                        "--timestamp", String(timestamp),
                    ])
                #expect(status == 0, "\(output)")
                let redeemed = try await store.client(
                    .POST, "/payments", token: token,
                    json: [
                        "productId": SubscriptionPurchaseTests.premium, "quantity": 1,
                        "idempotencyKey": UUID().uuidString, "applicationUsername": "Player-ONE",
                        "paymentDiscount": [
                            "identifier": "comeback", "keyIdentifier": key.keyId, "nonce": nonce.uuidString,
                            "signature": output.trimmingCharacters(in: .whitespacesAndNewlines), "timestamp": timestamp,
                        ],
                    ])
                #expect(redeemed.json["state"] as? String == "purchased", "\(redeemed.text)")
                #expect(redeemed.transactionId == current)
                let received = try await SubscriptionPurchaseTests.notifications(
                    receiver, count: 2, store: store, clock: clock)
                #expect(received.last?.notificationType == .offerRedeemed)
                #expect(received.last?.subtype == nil)
            }
        }
    }
}
