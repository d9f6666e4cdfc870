import Foundation
import KioskTesting
import Testing

@testable import KioskKit

/// KioskKit's cancellation against a real store: the subscriber taps Cancel in the manage-subscriptions sheet
/// (`Product.SubscriptionInfo.cancelAutoRenew`), the store runs the retention flow for the signed-in customer's own
/// subscription, and the answer says what was shown and what came of it.
@Suite struct CancelSubscriptionKitTests {
    static let club = "com.example.shop.club"

    // Proves the call runs the retention flow and is idempotent by its request identifier: the app's retention
    // offer is shown and taken (the renewal keeps auto-renew on), the same request again answers the same outcome
    // and redeems nothing twice; then, with nothing left to offer, the subscriber cancels and auto-renew goes off;
    // another account cannot cancel the subscription.
    @Test func cancellingRunsTheRetentionFlowOnce() async throws {
        try await ShopStore.with { shop in
            let store = shop.store
            let group = try await store.request(
                .POST, "/admin/v1/apps/\(ShopStore.bundleId)/subscription-groups",
                json: ["referenceName": "Club", "localizations": [["locale": "en-US", "name": "Club"]]])
            #expect(group.status == 201, "\(group.text)")
            let created = try await store.request(
                .POST, "/admin/v1/apps/\(ShopStore.bundleId)/products",
                json: [
                    "productId": Self.club, "type": "auto_renewable", "referenceName": "Club",
                    "pricing": ["tier": 3], "subscription": ["group": "Club", "level": 1], "duration": "P1M",
                    "localizations": [["locale": "en_US", "displayName": "Club", "description": "The club"]],
                ])
            #expect(created.status == 201, "\(created.text)")
            let offer = try await store.request(
                .POST, "/admin/v1/apps/\(ShopStore.bundleId)/retention/offers",
                json: [
                    "productId": Self.club, "identifier": "stay", "referenceName": "Stay",
                    "paymentMode": "pay_up_front", "period": "P1M", "pricing": ["tier": 1],
                ])
            #expect(offer.status == 200, "\(offer.text)")

            let device = try await shop.signedInDevice()
            let product = try #require(try await Product.products(for: [Self.club], client: device).first)
            guard case .success(.verified(let bought)) = try await product.purchase() else {
                Issue.record("the subscription was not bought")
                return await device.close()
            }
            await bought.finish()

            let request = UUID()
            let kept = try await Product.SubscriptionInfo.cancelAutoRenew(
                originalTransactionID: bought.originalID, choice: .accept, requestID: request, client: device)
            let again = try await Product.SubscriptionInfo.cancelAutoRenew(
                originalTransactionID: bought.originalID, choice: .cancel, requestID: request, client: device)
            expectRedeemedOnce(kept, again)
            let events = try await store.request(.GET, "/admin/v1/apps/\(ShopStore.bundleId)/retention")
            #expect((events.json["events"] as? [[String: Any]])?.count == 1, "\(events.text)")

            let cancelled = try await Product.SubscriptionInfo.cancelAutoRenew(
                originalTransactionID: bought.originalID, client: device)
            #expect(cancelled.outcome == "cancelled")
            #expect(cancelled.shownKind == "none")
            #expect(!cancelled.willAutoRenew)
            await device.close()

            let tester = try await store.request(
                .POST, "/admin/v1/testers",
                json: ["email": "other@example.com", "password": ShopStore.password, "storefront": "USA"])
            #expect(tester.status == 201, "\(tester.text)")
            let other = try shop.device()
            try await other.signIn(email: "other@example.com", password: ShopStore.password)
            await #expect(throws: SKError.self) {
                try await Product.SubscriptionInfo.cancelAutoRenew(
                    originalTransactionID: bought.originalID, client: other)
            }
            await other.close()
        }
    }
}

/// The first cancellation took the retention offer; its repeat answers the same.
private func expectRedeemedOnce(
    _ first: Product.SubscriptionInfo.CancellationOutcome, _ repeated: Product.SubscriptionInfo.CancellationOutcome
) {
    #expect(first.outcome == "offer-redeemed", "\(first)")
    #expect(first.shownKind == "retention-offer")
    #expect(first.offerID == "stay")
    #expect(first.willAutoRenew)
    #expect(repeated == first)
}
