import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import Testing

/// Win-back offers as Apple defines them: redeemed without a signature by customers whose subscription in the group
/// ended, who paid long enough there, within the offer's window of months since the end and its wait between
/// offers; listed in an ended subscription's renewal info as `eligibleWinBackOfferIds`; sold with `offerType` 4.
/// Sandbox months pass in 5 minutes of the sandbox clock.
@Suite struct WinBackOfferTests {
    /// Half price for two months to customers whose subscription ended 1–3 months ago; a free month, high
    /// priority, for those who paid 2 months, at most one win-back offer per 6 months.
    static var offers: [[String: Any]] {
        [
            [
                "identifier": "back_half", "referenceName": "Half price", "paymentMode": "pay_as_you_go",
                "period": "P1M", "numberOfPeriods": 2, "pricing": ["customPrices": ["USA": 49]],
                "paidSubscriptionDurationInMonths": 1, "timeSinceLastSubscribedInMonths": ["minimum": 1, "maximum": 3],
            ],
            [
                "identifier": "back_loyal", "referenceName": "Free month", "paymentMode": "free_trial", "period": "P1M",
                "paidSubscriptionDurationInMonths": 2, "timeSinceLastSubscribedInMonths": ["minimum": 1],
                "waitBetweenOffersInMonths": 6, "priority": "high",
            ],
        ]
    }

    @Test(arguments: TestDatabase.available)
    func winBackOffersFollowApplesEligibilityRules(database: TestDatabase) async throws {
        let clock = ManualClock(SubscriptionPurchaseTests.start)
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.prepareSubscriptionCatalog()
            let product = "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)"
            let patched = try await store.request(.PATCH, product, json: ["winBackOffers": Self.offers])
            #expect(patched.status == 200, "\(patched.text)")
            let token = try await store.signIn()
            let listed = try await store.client(
                .POST, "/products", token: token, json: ["identifiers": [TestStore.monthly]])
            let info = try #require((listed.json["products"] as? [[String: Any]])?.first, "\(listed.text)")
            let listedOffers = try #require(info["winBackOffers"] as? [[String: Any]], "\(listed.text)")
            #expect(listedOffers.compactMap { $0["identifier"] as? String } == ["back_half", "back_loyal"])
            #expect((listedOffers.first?["price"] as? [String: Any])?["minorUnits"] as? Int == 49)

            try await Self.expectRefused("back_half", 18, "win_back_paid_too_little", token: token, store: store)
            let (original, _) = try await store.buyMonthly(clock: clock)
            try await Self.expectRefused("back_half", 18, "win_back_still_subscribed", token: token, store: store)
            #expect(try await store.subscriptionControl(original, "expire").status == 200)
            try await Self.expectRefused("back_half", 18, "win_back_too_soon", token: token, store: store)
            #expect(try await Self.renewal(original, store: store, clock: clock).eligibleWinBackOfferIds == nil)

            // A month later (5 sandbox minutes) the half-price offer applies; the free month needs 2 paid months.
            #expect(try await store.advanceSandboxClock("6m").status == 200)
            #expect(
                try await Self.renewal(original, store: store, clock: clock).eligibleWinBackOfferIds == ["back_half"])
            try await Self.expectRefused("nope", 11, "unknown_offer", token: token, store: store)
            let half = try await Self.redeem("back_half", token: token, store: store, clock: clock)
            #expect(half.originalTransactionId == original)
            #expect(half.offerType == 4)
            #expect(half.offerIdentifier == "back_half")
            #expect(half.offerDiscountType == "PAY_AS_YOU_GO")
            #expect(half.offerPeriod == "P1M")
            #expect(half.price == 490)

            // Four months after it ended again the half-price window (1–3) is over, and the free month waits for
            // six months after the last win-back offer.
            #expect(try await store.subscriptionControl(original, "expire").status == 200)
            #expect(try await store.advanceSandboxClock("21m").status == 200)
            #expect(try await Self.renewal(original, store: store, clock: clock).eligibleWinBackOfferIds == nil)
            try await Self.expectRefused("back_half", 18, "win_back_too_late", token: token, store: store)
            try await Self.expectRefused("back_loyal", 18, "win_back_wait_between_offers", token: token, store: store)

            #expect(try await store.advanceSandboxClock("10m").status == 200)
            #expect(
                try await Self.renewal(original, store: store, clock: clock).eligibleWinBackOfferIds == ["back_loyal"])
            let free = try await Self.redeem("back_loyal", token: token, store: store, clock: clock)
            #expect(free.offerType == 4)
            #expect(free.offerDiscountType == "FREE_TRIAL")
            #expect(free.price == 0)
        }
    }

    /// Pays for the monthly with win-back offer `id`; expects it to fail with `skErrorCode` and `code`.
    static func expectRefused(
        _ id: String, _ skErrorCode: Int, _ code: String, token: String, store: TestStore,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let answer = try await pay(id, token: token, store: store)
        #expect(answer.json["state"] as? String == "failed", "\(answer.text)", sourceLocation: sourceLocation)
        #expect(answer.skErrorCode == skErrorCode, "\(answer.text)", sourceLocation: sourceLocation)
        #expect(answer.errorCode == code, "\(answer.text)", sourceLocation: sourceLocation)
        #expect(answer.transactionId == nil, sourceLocation: sourceLocation)
    }

    /// Buys the monthly with win-back offer `id` and answers its verified transaction, which Apple's library
    /// decodes as signed.
    static func redeem(_ id: String, token: String, store: TestStore, clock: any KioskClock) async throws
        -> JWSTransactionDecodedPayload
    {
        let answer = try await pay(id, token: token, store: store)
        #expect(answer.json["state"] as? String == "purchased", "\(answer.text)")
        let signed = try #require(SubscriptionPurchaseTests.signedTransaction(answer))
        try await AppleVerifier.expectAccepts([signed], kind: .transaction, store: store)
        return try await SubscriptionPurchaseTests.transaction(signed, store: store, clock: clock)
    }

    static func pay(_ id: String, token: String, store: TestStore) async throws -> TestStore.Answer {
        try await store.client(
            .POST, "/payments", token: token,
            json: [
                "productId": TestStore.monthly, "quantity": 1, "idempotencyKey": UUID().uuidString,
                "winBackOfferId": id,
            ])
    }

    /// The subscription's renewal info from Get All Subscription Statuses, which Apple's library decodes as signed.
    static func renewal(_ transactionId: String, store: TestStore, clock: any KioskClock) async throws
        -> JWSRenewalInfoDecodedPayload
    {
        let key = try await store.createServerAPIKey()
        let answer = try await store.inApps(
            .GET, "/inApps/v1/subscriptions/\(transactionId)", key: key, clock: clock)
        let last = try #require(
            ((answer.json["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first,
            "\(answer.text)")
        let signed = try #require(last["signedRenewalInfo"] as? String)
        try await AppleVerifier.expectAccepts([signed], kind: .renewal, store: store, bundleId: TestStore.bundleId)
        return try await verifiedPayload(
            signed, as: JWSRenewalInfoDecodedPayload.self, root: store.built.signing.identity(.sandbox).root,
            clock: clock)
    }
}
