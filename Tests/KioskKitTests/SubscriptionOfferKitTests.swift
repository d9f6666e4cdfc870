import Crypto
import Foundation
import KioskTesting
import Testing

@testable import KioskKit

/// KioskKit's subscription offers against a real store: introductory-offer eligibility on `Product`, a
/// promotional offer signed with the app's In-App Purchase key passed as a purchase option, and a win-back offer.
@Suite struct SubscriptionOfferKitTests {
    static let basic = "com.example.shop.basic"
    static let premium = "com.example.shop.premium"

    /// The group "Club": basic (level 2, a week's free trial) and premium (level 1, the promotional offer
    /// "comeback": two months up front for US$2.99).
    static func prepareSubscriptions(_ shop: ShopStore) async throws {
        let group = try await shop.store.request(
            .POST, "/admin/v1/apps/\(ShopStore.bundleId)/subscription-groups",
            json: ["referenceName": "Club", "localizations": [["locale": "en-US", "name": "Club"]]])
        #expect(group.status == 201, "\(group.text)")
        for (productId, level, offers) in [
            (basic, 2, ["introductoryOffers": [["paymentMode": "free_trial", "period": "P1W"]]]),
            (
                premium, 1,
                [
                    "promotionalOffers": [
                        [
                            "identifier": "comeback", "referenceName": "Come back", "paymentMode": "pay_up_front",
                            "period": "P2M", "pricing": ["customPrices": ["USA": 299]],
                        ]
                    ]
                ]
            ),
        ] as [(String, Int, [String: Any])] {
            var body: [String: Any] = [
                "productId": productId, "type": "auto_renewable", "referenceName": productId, "pricing": ["tier": 2],
                "subscription": ["group": "Club", "level": level], "duration": "P1M",
                "localizations": [["locale": "en_US", "displayName": "Club", "description": "The club"]],
            ]
            body.merge(offers) { $1 }
            let created = try await shop.store.request(
                .POST, "/admin/v1/apps/\(ShopStore.bundleId)/products", json: body)
            #expect(created.status == 201, "\(created.text)")
        }
    }

    /// A new subscriber is eligible and gets the free trial; then no longer eligible; an upgrade with a signed
    /// promotional offer is charged the offer's price in the same subscription (the store's refusals are
    /// `OfferTests`').
    @Test(arguments: TestDatabaseEngine.available)
    func introEligibilityAndPromotionalOffer(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            try await Self.prepareSubscriptions(shop)
            let key = try await shop.store.request(
                .POST, "/admin/v1/apps/\(ShopStore.bundleId)/keys", json: ["name": "offers"])
            #expect(key.status == 201, "\(key.text)")
            let keyId = try #require(key.json["keyId"] as? String)
            let privateKey = try P256.Signing.PrivateKey(
                pemRepresentation: try #require(key.json["privateKey"] as? String))
            let device = try await shop.signedInDevice()

            func products() async throws -> [String: Product] {
                Dictionary(
                    uniqueKeysWithValues: try await Product.products(for: [Self.basic, Self.premium], client: device)
                        .map { ($0.id, $0) })
            }
            let before = try await products()
            #expect(before[Self.basic]?.subscription?.isEligibleForIntroOffer == true)
            let group = try #require(before[Self.basic]?.subscription?.subscriptionGroupID)
            #expect(before[Self.premium]?.subscriptionGroupID == group, "basic and premium are both in Club")
            let basic = try #require(before[Self.basic])
            guard case .success(.verified(let trial)) = try await basic.purchase() else {
                Issue.record("the trial was not bought")
                return await device.close()
            }
            #expect(trial.price == 0)
            #expect(trial.expirationDate == trial.purchaseDate + 3 * 60)
            await trial.finish()
            #expect(try await products()[Self.basic]?.subscription?.isEligibleForIntroOffer == false)

            let nonce = UUID()
            let timestamp = Int(Date().timeIntervalSince1970 * 1000)
            let message = [
                ShopStore.bundleId, keyId, Self.premium, "comeback", "", nonce.uuidString.lowercased(),
                String(timestamp),
            ].joined(separator: "\u{2063}")
            let signature = try privateKey.signature(for: Data(message.utf8)).derRepresentation
            let offer = Product.PurchaseOption.promotionalOffer(
                offerID: "comeback", keyID: keyId, nonce: nonce, signature: signature, timestamp: timestamp)
            let premium = try #require(before[Self.premium])
            guard case .success(.verified(let upgraded)) = try await premium.purchase(options: [offer]) else {
                Issue.record("the promotional offer was not redeemed")
                return await device.close()
            }
            #expect(upgraded.productID == Self.premium)
            #expect(upgraded.originalID == trial.id)
            #expect(upgraded.price == Decimal(string: "2.99"))
            #expect(upgraded.expirationDate == upgraded.purchaseDate + 10 * 60)
            await upgraded.finish()

            await device.close()
        }
    }

    /// A win-back offer passed as a purchase option: refused with `ineligibleForOffer` while subscribed, charged at
    /// its price after the subscription ended a (sandbox) month ago, in the same subscription.
    @Test func winBackOfferAsAPurchaseOption() async throws {
        try await ShopStore.with { shop in
            try await Self.prepareSubscriptions(shop)
            let store = shop.store
            let winBack: [String: Any] = [
                "identifier": "lapsed", "referenceName": "Lapsed", "paymentMode": "pay_up_front", "period": "P1M",
                "pricing": ["customPrices": ["USA": 199]],
            ]
            let patched = try await store.request(
                .PATCH, "/admin/v1/apps/\(ShopStore.bundleId)/products/\(Self.premium)",
                json: ["winBackOffers": [winBack]])
            #expect(patched.status == 200, "\(patched.text)")
            let device = try await shop.signedInDevice()
            let premium = try #require(try await Product.products(for: [Self.premium], client: device).first)
            guard case .success(.verified(let first)) = try await premium.purchase() else {
                Issue.record("the subscription was not bought")
                return await device.close()
            }
            await first.finish()
            let offer = Product.PurchaseOption.winBackOffer(offerID: "lapsed")
            let refused = await #expect(throws: SKError.self) { _ = try await premium.purchase(options: [offer]) }
            #expect(refused?.code == .ineligibleForOffer, "\(String(describing: refused))")

            let expired = try await store.request(
                .POST, "/sandbox/test/v1/apps/\(ShopStore.bundleId)/subscriptions/\(first.originalID)",
                json: ["action": "expire"], token: .some(store.adminToken))
            #expect(expired.status == 200, "\(expired.text)")
            let advanced = try await store.request(
                .POST, "/sandbox/test/v1/clock", json: ["action": "advance", "by": "6m"], token: .some(store.adminToken)
            )
            #expect(advanced.status == 200, "\(advanced.text)")
            guard case .success(.verified(let won)) = try await premium.purchase(options: [offer]) else {
                Issue.record("the win-back offer was not redeemed")
                return await device.close()
            }
            #expect(won.originalID == first.originalID)
            #expect(won.price == Decimal(string: "1.99"))
            await won.finish()
            await device.close()
        }
    }
}
