import Foundation
import KioskProtocol
import KioskTesting
import Testing

@testable import KioskKit

/// Changes the store makes to transactions after the purchase reach the device: refunds and revocations as
/// updates and revoked entitlements, reversals as the transaction again, new transactions (renewals) in updates.
@Suite struct SubscriptionUpdatesTests {
    /// A refund reaches `Transaction.updates` with its `revocationDate`, SK1 observers hear the revoked product
    /// and `currentEntitlements` drops it; its reversal brings the transaction back, an entitlement again.
    @Test(arguments: TestDatabaseEngine.available)
    func refundsAndReversalsReachTheDevice(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let device = try await shop.signedInDevice()
            let observer = RecordingObserver()
            device.paymentQueue.add(observer)
            var updates = Transaction.updates(client: device).makeAsyncIterator()
            let removeAds = try #require(try await Product.products(for: [ShopStore.removeAds], client: device).first)
            guard case .success(.verified(let bought)) = try await removeAds.purchase() else {
                Issue.record("remove-ads was not bought")
                return await device.close()
            }
            await bought.finish()
            try await shop.expectAllFinished(count: 1)
            #expect(try await Self.entitlements(device) == [ShopStore.removeAds])

            try await shop.control(bought.id, "refund")
            guard case .verified(let refunded) = await updates.next() else {
                Issue.record("the refund did not arrive in updates")
                return await device.close()
            }
            #expect(refunded.id == bought.id && refunded.revocationDate != nil)
            #expect(await Self.revokedProducts(observer) == [ShopStore.removeAds])
            #expect(try await Self.entitlements(device).isEmpty)

            try await shop.control(bought.id, "reverse-refund")
            guard case .verified(let reinstated) = await updates.next() else {
                Issue.record("the reversal did not arrive in updates")
                return await device.close()
            }
            #expect(reinstated.id == bought.id && reinstated.revocationDate == nil)
            await reinstated.finish()
            #expect(try await Self.entitlements(device) == [ShopStore.removeAds])
            await device.close()
        }
    }

    /// A refund made while the app was not running reaches the relaunched device through `AppStore.sync`: when
    /// sync returns, the SK1 observer has heard the revoked product, and `Transaction.updates` holds the transaction
    /// with its revocation date. Syncing again tells nothing twice.
    @Test(arguments: TestDatabaseEngine.available)
    func syncBringsRevocationsMadeWhileTheAppWasClosed(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let directory = Fixtures.temporaryDirectory()
            let first = try await shop.signedInDevice(directory: directory)
            try await AppStore.sync(client: first)  // at launch, as apps do: the device knows where it stands
            let removeAds = try #require(try await Product.products(for: [ShopStore.removeAds], client: first).first)
            guard case .success(.verified(let bought)) = try await removeAds.purchase() else {
                Issue.record("remove-ads was not bought")
                return await first.close()
            }
            await bought.finish()
            await first.close()
            try await shop.expectAllFinished(count: 1)
            try await shop.control(bought.id, "refund")

            let relaunched = try shop.device(directory: directory)
            let observer = RecordingObserver()
            relaunched.paymentQueue.add(observer)
            var updates = Transaction.updates(client: relaunched).makeAsyncIterator()
            try await AppStore.sync(client: relaunched)
            #expect(observer.events.contains(.revoked([ShopStore.removeAds])), "\(observer.events)")
            guard case .verified(let refunded) = await updates.next() else {
                Issue.record("the refund did not arrive in updates")
                return await relaunched.close()
            }
            #expect(refunded.id == bought.id && refunded.revocationDate != nil)

            try await AppStore.sync(client: relaunched)
            #expect(observer.events.filter { $0 == .revoked([ShopStore.removeAds]) }.count == 1, "\(observer.events)")
            await relaunched.close()
        }
    }

    /// A renewal the store makes when the sandbox clock passes the period's end comes through `Transaction.updates`
    /// (a new transaction of the same subscription, verified), and is what `currentEntitlements` shows.
    @Test(arguments: TestDatabaseEngine.available)
    func renewalsArriveInUpdates(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            try await shop.sandboxClock(["action": "freeze"])  // the period ends only when the test says
            try await shop.createMonthlySubscription()
            let device = try await shop.signedInDevice()
            var updates = Transaction.updates(client: device).makeAsyncIterator()
            try await shop.purchaseOutsideTheApp(ShopStore.monthly, promoted: false)
            guard case .verified(let bought) = await updates.next() else {
                Issue.record("the purchase did not arrive in updates")
                return await device.close()
            }
            await bought.finish()

            let advanced = try await shop.sandboxClock(["action": "advance", "by": "5m"])
            #expect(advanced.json["renewed"] as? Int == 1, "\(advanced.text)")
            guard case .verified(let renewal) = await updates.next() else {
                Issue.record("the renewal did not arrive in updates")
                return await device.close()
            }
            #expect(renewal.productID == ShopStore.monthly)
            #expect(renewal.originalID == bought.originalID && renewal.id != bought.id)
            #expect(renewal.purchaseDate == bought.expirationDate)
            await renewal.finish()
            var owned: [UInt64] = []
            for await entitlement in Transaction.currentEntitlements(client: device) {
                owned.append(try entitlement.payloadValue.id)
            }
            #expect(owned == [renewal.id])
            await device.close()
        }
    }

    static func entitlements(_ device: KioskStoreClient) async throws -> [String] {
        var owned: [String] = []
        for await entitlement in Transaction.currentEntitlements(client: device) {
            owned.append(try entitlement.payloadValue.productID)
        }
        return owned
    }

    /// The product ids of the next `didRevokeEntitlements` call, skipping other observer events.
    static func revokedProducts(_ observer: RecordingObserver) async -> [String]? {
        while let event = await observer.next() {
            if case .revoked(let productIds) = event { return productIds }
        }
        return nil
    }
}

extension ShopStore {
    /// Changes the sandbox clock (`freeze`, `advance` `by`…); answers after every event due by then ran.
    @discardableResult
    func sandboxClock(_ change: [String: Any]) async throws -> TestStore.Answer {
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/clock", json: change, token: .some(store.adminToken))
        #expect(answer.status == 200, "\(answer.text)")
        return answer
    }

    /// Runs a refund or revocation test control on a transaction.
    func control(_ transactionId: UInt64, _ action: String) async throws {
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/apps/\(Self.bundleId)/transactions/\(transactionId)/\(action)", json: [:],
            token: .some(store.adminToken))
        #expect(answer.status == 200, "\(action): \(answer.text)")
    }
}

extension ShopStore {
    static let monthly = "com.example.shop.monthly"

    /// A monthly auto-renewable in the group "Club" (five minutes a period in the sandbox).
    func createMonthlySubscription() async throws {
        let group = try await store.request(
            .POST, "/admin/v1/apps/\(Self.bundleId)/subscription-groups", json: ["referenceName": "Club"])
        #expect(group.status == 201, "\(group.text)")
        let product = try await store.request(
            .POST, "/admin/v1/apps/\(Self.bundleId)/products",
            json: [
                "productId": Self.monthly, "type": "auto_renewable", "referenceName": "Monthly", "pricing": ["tier": 3],
                "subscription": ["group": "Club", "level": 1], "duration": "P1M",
                "localizations": [["locale": "en_US", "displayName": "Club", "description": "The monthly club"]],
            ])
        #expect(product.status == 201, "\(product.text)")
    }
}
