import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import Testing

/// One-time offer codes: created by the admin API, redeemed once through a client payment or a test purchase
/// (offer type 3, the reference name as offer identifier, `OFFER_REDEEMED`), refused when used again, unknown or
/// for another product.
@Suite struct OfferCodeTests {
    static let path = "/admin/v1/apps/\(TestStore.bundleId)/offer-codes"

    static func create(_ fields: [String: Any], store: TestStore) async throws -> TestStore.Answer {
        var body: [String: Any] = [
            "productId": SubscriptionPurchaseTests.premium, "referenceName": "Spring", "paymentMode": "pay_up_front",
            "period": "P3M", "pricing": ["customPrices": ["USA": 150]], "count": 2,
        ]
        body.merge(fields) { $1 }
        return try await store.request(.POST, Self.path, json: body)
    }

    static func codes(_ answer: TestStore.Answer) -> [[String: Any]] {
        answer.json["offerCodes"] as? [[String: Any]] ?? []
    }

    static func pay(_ productId: String, code: String, token: String, store: TestStore) async throws
        -> TestStore.Answer
    {
        try await store.client(
            .POST, "/payments", token: token,
            json: ["productId": productId, "quantity": 1, "idempotencyKey": UUID().uuidString, "offerCode": code])
    }

    /// Bad input is a clear 400 or 404 naming the field, and creates nothing.
    @Test(arguments: TestDatabase.available)
    func badRequestsAreRefused(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(SubscriptionPurchaseTests.start)) {
            store in
            try await SubscriptionPurchaseTests.prepareCatalog(store)
            for (fields, status, code) in [
                (["count": 0], 400, "invalid_count"),
                (["count": 1001], 400, "invalid_count"),
                (["paymentMode": "half_off"], 400, "invalid_payment_mode"),
                (["period": "P1Q"], 400, "invalid_offer_period"),
                (["period": "P2M", "paymentMode": "pay_up_front", "numberOfPeriods": 2], 400, "invalid_offer_periods"),
                (["pricing": ["customPrices": [String: Int]()]], 400, "missing_offer_price"),
                (["referenceName": ""], 400, "invalid_reference_name"),
                (["productId": SubscriptionPurchaseTests.season], 400, "not_auto_renewable"),
                (["productId": "com.example.nothing"], 404, "product_not_found"),
            ] as [([String: Any], Int, String)] {
                let answer = try await Self.create(fields, store: store)
                #expect(answer.status == status, "\(code): \(answer.text)")
                #expect(answer.errorCode == code, "\(answer.text)")
                #expect((answer.json["error"] as? [String: Any])?["field"] as? String != nil, "\(answer.text)")
            }
            let period = try await Self.create(["period": "P13M"], store: store)
            #expect((period.json["error"] as? [String: Any])?["field"] as? String == "period", "\(period.text)")
            let missing = try await store.request(
                .POST, Self.path, json: ["productId": SubscriptionPurchaseTests.premium])
            #expect(missing.status == 400, "\(missing.text)")
            #expect(missing.errorCode == "missing_field")
            let unknownApp = try await store.request(.GET, "/admin/v1/apps/com.example.none/offer-codes")
            #expect(unknownApp.status == 404, "\(unknownApp.text)")
            #expect(unknownApp.errorCode == "app_not_found", "\(unknownApp.text)")
            let listed = try await store.request(.GET, Self.path)
            #expect(listed.status == 200, "\(listed.text)")
            #expect(Self.codes(listed).isEmpty)
        }
    }

    /// A pay-as-you-go code keeps its price for its periods: the renewal that continues it charges the code's price
    /// (the code lives apart from the product, so the renewal reads its terms), the one after it the product's.
    @Test(arguments: TestDatabase.available)
    func payAsYouGoCodeContinuesAtRenewal(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await SubscriptionPurchaseTests.prepareCatalog(store)
            let created = try await Self.create(
                ["paymentMode": "pay_as_you_go", "period": "P1M", "numberOfPeriods": 2, "count": 1], store: store)
            let code = try #require(Self.codes(created).first?["code"] as? String, "\(created.text)")
            let bought = try await Self.pay(
                SubscriptionPurchaseTests.premium, code: code, token: try await store.signIn(), store: store)
            #expect(bought.json["state"] as? String == "purchased", "\(bought.text)")
            for _ in 0..<2 {
                let advanced = try await store.advanceSandboxClock("5m")
                #expect(advanced.json["renewed"] as? Int == 1, "\(advanced.text)")
            }
            let periods = try await store.subscriptionPeriods(clock: clock)
            #expect(periods.map(\.price) == [1500, 1500, 1990], "the code's price twice, then tier 2")
            #expect(periods.map(\.transactionReason) == ["PURCHASE", "RENEWAL", "RENEWAL"])
        }
    }

    /// A code prices the first purchase in the group instead of the introductory offer and notifies
    /// `OFFER_REDEEMED`/`INITIAL_BUY`; it is then redeemed (listed with the transaction), so a second use, an
    /// unknown code and a code of another product each fail the payment with `invalidOfferIdentifier` and charge
    /// nothing. A test purchase redeems the other code on the active subscription of the same product:
    /// `OFFER_REDEEMED` without a subtype, answered with the current period's transaction.
    @Test(arguments: TestDatabase.available)
    func codesRedeemOnce(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await SubscriptionPurchaseTests.prepareCatalog(store)
                try await store.setNotificationURLs([receiver.url])
                let created = try await Self.create([:], store: store)
                #expect(created.status == 201, "\(created.text)")
                let codes = Self.codes(created).compactMap { $0["code"] as? String }
                #expect(codes.count == 2)
                #expect(Set(codes).count == 2)
                for code in codes {
                    #expect(code.count == 12)
                    #expect(code.allSatisfy { OfferCode.alphabet.contains($0) }, "\(code)")
                }
                #expect(Self.codes(created).allSatisfy { $0["state"] as? String == "available" })
                let token = try await store.signIn()

                let redeemed = try await Self.pay(
                    SubscriptionPurchaseTests.premium, code: " \(codes[0].lowercased()) ", token: token, store: store)
                #expect(redeemed.json["state"] as? String == "purchased", "\(redeemed.text)")
                let transaction = try await SubscriptionPurchaseTests.transaction(
                    SubscriptionPurchaseTests.signedTransaction(redeemed), store: store, clock: clock)
                #expect(transaction.offerType == 3)
                #expect(transaction.offerIdentifier == "Spring")
                #expect(transaction.offerDiscountType == "PAY_UP_FRONT")
                #expect(transaction.offerPeriod == "P3M")
                #expect(transaction.price == 1500)
                var received = try await SubscriptionPurchaseTests.notifications(
                    receiver, count: 1, store: store, clock: clock)
                #expect(received.last?.notificationType == .offerRedeemed)
                #expect(received.last?.subtype == .initialBuy)

                let listed = try await store.request(
                    .GET, Self.path + "?productId=\(SubscriptionPurchaseTests.premium)")
                #expect(listed.status == 200, "\(listed.text)")
                let first = try #require(Self.codes(listed).first { $0["code"] as? String == codes[0] })
                #expect(first["state"] as? String == "redeemed")
                #expect((first["transactionId"] as? Int).map(String.init) == transaction.transactionId)
                #expect(first["redeemedByAccountId"] != nil)

                for (productId, code, reason) in [
                    (SubscriptionPurchaseTests.premium, codes[0], "offer_code_redeemed"),
                    (SubscriptionPurchaseTests.premium, "ZZZZZZZZZZZZ", "offer_code_unknown"),
                    (SubscriptionPurchaseTests.monthly, codes[1], "offer_code_wrong_product"),
                    // In-app purchases have offer codes too (App Store Connect's), but not this one.
                    (SubscriptionPurchaseTests.season, codes[1], "offer_code_wrong_product"),
                ] {
                    let refused = try await Self.pay(productId, code: code, token: token, store: store)
                    #expect(refused.json["state"] as? String == "failed", "\(reason): \(refused.text)")
                    #expect(refused.skErrorCode == 11, "\(reason): \(refused.text)")
                    #expect(refused.errorCode == reason, "\(refused.text)")
                    #expect(refused.transactionId == nil)
                }

                let testBuy = try await store.request(
                    .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases",
                    json: [
                        "tester": TestStore.testerEmail, "productId": SubscriptionPurchaseTests.premium,
                        "offerCode": codes[1],
                    ], token: .some(store.adminToken))
                #expect(testBuy.status == 201, "\(testBuy.text)")
                #expect(testBuy.transactionId == transaction.transactionId)
                received = try await SubscriptionPurchaseTests.notifications(
                    receiver, count: 2, store: store, clock: clock)
                #expect(received.last?.notificationType == .offerRedeemed)
                #expect(received.last?.subtype == nil)

                let again = try await store.request(
                    .POST, "/sandbox/test/v1/apps/\(TestStore.bundleId)/purchases",
                    json: [
                        "tester": TestStore.testerEmail, "productId": SubscriptionPurchaseTests.premium,
                        "offerCode": codes[1],
                    ], token: .some(store.adminToken))
                #expect(again.status == 400, "\(again.text)")
                #expect(again.errorCode == "offer_code_redeemed")
                let all = try await store.request(.GET, Self.path)
                #expect(Self.codes(all).count == 2)
                #expect(Self.codes(all).allSatisfy { $0["state"] as? String == "redeemed" }, "\(all.text)")
            }
        }
    }
}
