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

    /// A transaction the device did not start (as renewals arrive: a `purchased` entry) comes through
    /// `Transaction.updates`, verified, and is what `currentEntitlements` shows.
    /// TODO(lead, at merge): make this a real renewal of an auto-renewable once the renewal scheduler is in.
    @Test(arguments: TestDatabaseEngine.available)
    func transactionsMadeElsewhereArriveInUpdates(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let device = try await shop.signedInDevice()
            var updates = Transaction.updates(client: device).makeAsyncIterator()
            try await shop.purchaseOutsideTheApp(ShopStore.removeAds, promoted: false)
            guard case .verified(let arrived) = await updates.next() else {
                Issue.record("the transaction did not arrive in updates")
                return await device.close()
            }
            #expect(arrived.productID == ShopStore.removeAds)
            await arrived.finish()
            var owned: [UInt64] = []
            for await entitlement in Transaction.currentEntitlements(client: device) {
                owned.append(try entitlement.payloadValue.id)
            }
            #expect(owned == [arrived.id])
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
    /// Runs a refund or revocation test control on a transaction.
    func control(_ transactionId: UInt64, _ action: String) async throws {
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/apps/\(Self.bundleId)/transactions/\(transactionId)/\(action)", json: [:],
            token: .some(store.adminToken))
        #expect(answer.status == 200, "\(action): \(answer.text)")
    }
}
