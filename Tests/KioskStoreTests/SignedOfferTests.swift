import Foundation
import KioskCore
import KioskSigning
import KioskTestSupport
import KioskTesting
import Testing

/// Offers signed as compact JWS (StoreKit's `promotionalOffer(_:compactJWS:)` and
/// `introductoryOfferEligibility(compactJWS:)`): made by Apple's Python signature creators and by Swift, checked by
/// the store as StoreKit does, each nonce once.
@Suite struct SignedOfferTests {
    typealias Subscriptions = SubscriptionPurchaseTests

    /// A signed offer made in Swift the way Apple's creators make it, with any claim changed.
    static func sign(
        _ key: ServerAPIKey, audience: SignedOfferClaims.Audience = .promotionalOffer,
        productId: String = Subscriptions.premium, iat: Date, change: (inout SignedOfferClaims) -> Void = { _ in }
    ) throws -> String {
        var claims = SignedOfferClaims(
            iss: key.issuerId, bid: TestStore.bundleId, aud: audience, iat: iat, productId: productId,
            offerIdentifier: audience == .promotionalOffer ? "comeback" : nil)
        change(&claims)
        return try SignedOfferJWS.sign(claims, keyId: key.keyId, privateKeyPEM: key.privateKeyPEM)
    }

    static func pay(_ productId: String, token: String, store: TestStore, _ fields: [String: Any]) async throws
        -> TestStore.Answer
    {
        try await store.client(
            .POST, "/payments", token: token,
            json: ["productId": productId, "quantity": 1, "idempotencyKey": UUID().uuidString].merging(fields) { $1 })
    }

    /// Every claim StoreKit checks is checked: a failed one fails the payment with its SKError and reason, names
    /// the field and charges nothing; the right signature then redeems, once.
    @Test(arguments: TestDatabase.available)
    func signedOffersAreCheckedAsStoreKitDoes(database: TestDatabase) async throws {
        let clock = ManualClock(Subscriptions.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await Subscriptions.prepareCatalog(store)
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let now = clock.now()
            let jws = { (change: (inout SignedOfferClaims) -> Void) in try Self.sign(key, iat: now, change: change) }
            // Promotional offers are for customers who have or had a subscription in the group.
            let early = try await Self.pay(
                Subscriptions.premium, token: token, store: store,
                ["promotionalOfferJWS": ["offerId": "comeback", "compactJWS": try jws { _ in }]])
            #expect(early.skErrorCode == 18 && early.errorCode == "ineligible_for_offer", "\(early.text)")
            let current = try #require(try await store.pay(Subscriptions.premium, token: token).transactionId)

            let other = try await store.createServerAPIKey()
            let forged = try Self.sign(other, iat: now)
            let otherKey =
                forged.split(separator: ".").prefix(2).joined(separator: ".") + "."
                + (try jws { _ in }).split(separator: ".")[2]
            for (compactJWS, offerId, skError, reason) in [
                ("not a jws", "comeback", 12, "invalid_offer_signature"),
                (try jws { $0.aud = "advanced-commerce-api" }, "comeback", 12, "offer_signature_mismatch"),
                (try jws { $0.bid = "com.example.other" }, "comeback", 12, "offer_signature_mismatch"),
                (try jws { $0.iss = "another-issuer" }, "comeback", 12, "offer_signature_mismatch"),
                (try jws { $0.productId = Subscriptions.yearly }, "comeback", 12, "offer_signature_mismatch"),
                (try jws { $0.offerIdentifier = "other" }, "comeback", 12, "offer_signature_mismatch"),
                (try jws { $0.iat = now.timeIntervalSince1970 - 25 * 3600 }, "comeback", 12, "offer_signature_expired"),
                (try jws { $0.iat = now.timeIntervalSince1970 + 3600 }, "comeback", 12, "offer_signature_expired"),
                (try jws { $0.nonce = nil }, "comeback", 13, "missing_offer_params"),
                (try jws { $0.nonce = "not-a-uuid" }, "comeback", 12, "invalid_offer_signature"),
                (try jws { $0.transactionId = "2999999999999999" }, "comeback", 12, "offer_transaction_not_customers"),
                (try jws { $0.transactionId = "x" }, "comeback", 12, "offer_transaction_not_customers"),
                (otherKey, "comeback", 12, "invalid_offer_signature"),
                (try jws { $0.offerIdentifier = "nope" }, "nope", 11, "unknown_offer"),
            ] as [(String, String, Int, String)] {
                let refused = try await Self.pay(
                    Subscriptions.premium, token: token, store: store,
                    ["promotionalOfferJWS": ["offerId": offerId, "compactJWS": compactJWS]])
                #expect(refused.json["state"] as? String == "failed", "\(reason): \(refused.text)")
                #expect(refused.skErrorCode == skError && refused.errorCode == reason, "\(reason): \(refused.text)")
                #expect(refused.transactionId == nil)
            }
            // A signature longer than any Apple makes is refused before it is read.
            let long = try await Self.pay(
                Subscriptions.premium, token: token, store: store,
                ["promotionalOfferJWS": ["offerId": "comeback", "compactJWS": String(repeating: "a", count: 20_000)]])
            #expect(long.status == 400 && long.errorField == "promotionalOfferJWS.compactJWS", "\(long.text)")
            _ = try await store.request(
                .DELETE, "/admin/v1/apps/\(TestStore.bundleId)/keys/\(other.keyId)", token: .some(store.adminToken))
            let revoked = try await Self.pay(
                Subscriptions.premium, token: token, store: store,
                ["promotionalOfferJWS": ["offerId": "comeback", "compactJWS": forged]])
            #expect(revoked.skErrorCode == 12 && revoked.errorCode == "unknown_offer_key", "\(revoked.text)")

            // The right signature, naming the customer's transaction, redeems: it prices the next renewal.
            let signed = try jws { $0.transactionId = current }
            let redeemed = try await Self.pay(
                Subscriptions.premium, token: token, store: store,
                ["promotionalOfferJWS": ["offerId": "comeback", "compactJWS": signed]])
            #expect(redeemed.json["state"] as? String == "purchased", "\(redeemed.text)")
            #expect(redeemed.transactionId == current)
            let again = try await Self.pay(
                Subscriptions.premium, token: token, store: store,
                ["promotionalOfferJWS": ["offerId": "comeback", "compactJWS": signed]])
            #expect(again.skErrorCode == 12 && again.errorCode == "offer_nonce_reused", "\(again.text)")

            // Two offers at once are refused; an eligibility on a product without offers too.
            let both = try await Self.pay(
                Subscriptions.premium, token: token, store: store,
                [
                    "promotionalOfferJWS": ["offerId": "comeback", "compactJWS": try jws { _ in }],
                    "winBackOfferId": "back",
                ])
            #expect(both.errorCode == "offer_conflict", "\(both.text)")
            let consumable = try await Self.pay(
                TestStore.coins, token: token, store: store,
                [
                    "introductoryOfferEligibilityJWS": try Self.sign(
                        key, audience: .introductoryOfferEligibility, iat: now)
                ])
            #expect(consumable.errorCode == "offer_not_applicable", "\(consumable.text)")
        }
    }

    /// The merchant's eligibility decides: a new subscriber it refuses pays full price, an ended subscriber it
    /// allows gets the introductory offer again (`offerType` 1) on resubscribing; without `transactionId` or
    /// `allowIntroductoryOffer` the signature is incomplete.
    @Test(arguments: TestDatabase.available)
    func signedIntroductoryEligibilityReplacesTheStoresDecision(database: TestDatabase) async throws {
        let clock = ManualClock(Subscriptions.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await Subscriptions.prepareCatalog(store)
            let key = try await store.createServerAPIKey()
            let token = try await store.signIn()
            let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)
            let eligibility = { (allow: Bool?, transactionId: String?) in
                try Self.sign(
                    key, audience: .introductoryOfferEligibility, productId: Subscriptions.monthly, iat: clock.now()
                ) {
                    $0.allowIntroductoryOffer = allow
                    $0.transactionId = transactionId
                }
            }
            for (allow, transactionId) in [(nil, unlock), (true, nil)] as [(Bool?, String?)] {
                let incomplete = try await Self.pay(
                    Subscriptions.monthly, token: token, store: store,
                    ["introductoryOfferEligibilityJWS": try eligibility(allow, transactionId)])
                #expect(incomplete.skErrorCode == 13 && incomplete.errorCode == "missing_offer_params")
            }

            let refused = try await Self.pay(
                Subscriptions.monthly, token: token, store: store,
                ["introductoryOfferEligibilityJWS": try eligibility(false, unlock)])
            #expect(refused.json["state"] as? String == "purchased", "\(refused.text)")
            let fullPrice = try await Subscriptions.transaction(
                Subscriptions.signedTransaction(refused), store: store, clock: clock)
            #expect(fullPrice.offerType == nil && fullPrice.price == 990, "\(refused.text)")

            #expect(try await store.subscriptionControl(fullPrice.transactionId, "expire").status == 200)
            let allowed = try await Self.pay(
                Subscriptions.monthly, token: token, store: store,
                ["introductoryOfferEligibilityJWS": try eligibility(true, fullPrice.transactionId)])
            #expect(allowed.json["state"] as? String == "purchased", "\(allowed.text)")
            let introductory = try await Subscriptions.transaction(
                Subscriptions.signedTransaction(allowed), store: store, clock: clock)
            #expect(introductory.offerType == 1 && introductory.price == 490, "\(allowed.text)")
            #expect(introductory.originalTransactionId == fullPrice.transactionId)
        }
    }

    /// Apple's own Python creators (`PromotionalOfferV2SignatureCreator`, `IntroductoryOfferEligibilitySignatureCreator`)
    /// make signatures the store redeems. They stamp `iat` with the real time, so the store keeps the real time too.
    @Test(
        .enabled(
            if: TestEnvironment.runs(.python), "set KIOSK_TEST_PYTHON to a python with PyPI app-store-server-library"),
        arguments: TestDatabase.available)
    func appleSignedOffersRedeem(database: TestDatabase) async throws {
        let clock = SystemClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-jws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestStore(engine: database, clock: clock) { store in
            try await Subscriptions.prepareCatalog(store)
            let key = try await store.createServerAPIKey()
            let keyFile = directory.appendingPathComponent("key.p8")
            try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .ascii)
            let apple = { (arguments: [String]) in
                let (status, output) = try await runProcess(
                    try TestEnvironment.require(.python),
                    [
                        OfferTests.interop.appendingPathComponent("signed_offer_jws.py").path, arguments[0],
                        "--key-file", keyFile.path, "--key-id", key.keyId, "--issuer-id", key.issuerId, "--bundle-id",
                        TestStore.bundleId,
                    ] + arguments.dropFirst())
                #expect(status == 0, "\(output)")
                return output.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let token = try await store.signIn()
            let unlock = try #require(try await store.pay(TestStore.removeAds, token: token).transactionId)
            let ineligible = try await apple([
                "introductory", "--product-id", Subscriptions.monthly, "--allow", "false", "--transaction-id", unlock,
            ])
            let bought = try await Self.pay(
                Subscriptions.monthly, token: token, store: store, ["introductoryOfferEligibilityJWS": ineligible])
            let first = try await Subscriptions.transaction(
                Subscriptions.signedTransaction(bought), store: store, clock: clock)
            #expect(first.offerType == nil, "\(bought.text)")

            let promotional = try await apple([
                "promotional", "--product-id", Subscriptions.monthly, "--offer-id", "comeback", "--transaction-id",
                first.transactionId,
            ])
            let unknown = try await Self.pay(
                Subscriptions.monthly, token: token, store: store,
                ["promotionalOfferJWS": ["offerId": "comeback", "compactJWS": promotional]])
            #expect(unknown.errorCode == "unknown_offer", "the monthly plan has no promotional offer: \(unknown.text)")
            let premium = try await apple([
                "promotional", "--product-id", Subscriptions.premium, "--offer-id", "comeback", "--transaction-id",
                first.transactionId,
            ])
            let redeemed = try await Self.pay(
                Subscriptions.premium, token: token, store: store,
                ["promotionalOfferJWS": ["offerId": "comeback", "compactJWS": premium]])
            #expect(redeemed.json["state"] as? String == "purchased", "\(redeemed.text)")
            let upgraded = try await Subscriptions.transaction(
                Subscriptions.signedTransaction(redeemed), store: store, clock: clock)
            #expect(upgraded.offerType == 2 && upgraded.offerIdentifier == "comeback", "\(redeemed.text)")
        }
    }
}
