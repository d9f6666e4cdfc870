import Foundation
import KioskSigning
import KioskTesting
import Testing

@testable import KioskKit

/// KioskKit's StoreKit 2 face against a real store on loopback.
@Suite struct StoreKit2EndToEndTests {
    /// A purchase returns a transaction verified against the store's exported sandbox root, with the quantity,
    /// app account token and exact price; finishing it finishes it at the store; it is then an entitlement only
    /// if it is a non-consumable. A device trusting another root gets the same transaction unverified.
    @Test(arguments: TestDatabaseEngine.available)
    func purchaseVerifiedAgainstTheExportedRoot(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let device = try await shop.signedInDevice()
            let products = try await Product.products(
                for: [ShopStore.coins, ShopStore.removeAds, "com.example.shop.unknown"], client: device)
            #expect(Set(products.map(\.id)) == [ShopStore.coins, ShopStore.removeAds])
            let coins = try #require(products.first { $0.id == ShopStore.coins })
            #expect(
                coins.type == .consumable && coins.price == Decimal(string: "0.99") && coins.displayPrice == "$0.99")

            let token = UUID()
            guard
                case .success(.verified(let transaction)) = try await coins.purchase(
                    options: [.quantity(2), .appAccountToken(token)])
            else {
                Issue.record("the purchase did not return a verified transaction")
                return await device.close()
            }
            #expect(transaction.productID == ShopStore.coins && transaction.purchasedQuantity == 2)
            #expect(transaction.appAccountToken == token)
            #expect(transaction.price == Decimal(string: "1.98") && transaction.currencyCode == "USD")
            #expect(transaction.environment == .sandbox && transaction.appBundleID == ShopStore.bundleId)
            var unfinished: [UInt64] = []
            for await result in Transaction.unfinished(client: device) { unfinished.append(try result.payloadValue.id) }
            #expect(unfinished == [transaction.id])
            await transaction.finish()
            try await shop.expectAllFinished(count: 1)

            let removeAds = try #require(products.first { $0.id == ShopStore.removeAds })
            guard case .success(let result) = try await removeAds.purchase() else {
                Issue.record("remove-ads was not bought")
                return await device.close()
            }
            await result.unsafePayloadValue.finish()
            var owned: [String] = []
            for await entitlement in Transaction.currentEntitlements(client: device) {
                owned.append(try entitlement.payloadValue.productID)
            }
            #expect(owned == [ShopStore.removeAds])

            let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
            let suspicious = try await shop.signedInDevice(roots: [stranger.root])
            var results: [VerificationResult<Transaction>] = []
            for await result in Transaction.currentEntitlements(client: suspicious) { results.append(result) }
            guard case .unverified(_, .invalidCertificateChain) = results.first else {
                Issue.record("a transaction verified against an untrusted root: \(results)")
                return await device.close()
            }
            await device.close()
            await suspicious.close()
        }
    }

    /// Ask to Buy through StoreKit 2: `purchase()` answers `.pending`; the approved transaction arrives in
    /// `Transaction.updates`, verified.
    /// A device's first purchase starts its background sync, which resends stored payments while `purchase()`
    /// sends the new one: the sync must never take that payment, or the call is left with no answer (it threw
    /// CancellationError, intermittently). Many devices, concurrently, each buying at once.
    @Test(arguments: TestDatabaseEngine.available)
    func firstPurchasesOfManyDevicesEachGetTheirAnswer(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine) { shop in
            let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        let device = try await shop.signedInDevice()
                        let coins = try await Product.products(for: [ShopStore.coins], client: device).first
                        let result = try await coins?.purchase()
                        await device.close()
                        guard case .success(.verified) = result else { return false }
                        return true
                    }
                }
                var answers: [Bool] = []
                for try await answered in group { answers.append(answered) }
                return answers
            }
            #expect(answers == Array(repeating: true, count: 16), "every purchase answered with its transaction")
            #expect(try await shop.transactions().count == 16, "sixteen charges")
        }
    }

    /// A client released without `close()` (here after a refused sign-in) shuts its HTTP client down itself:
    /// AsyncHTTPClient traps when a running client is released, which took the whole test process down.
    @Test func clientReleasedWithoutCloseDoesNotTrap() async throws {
        try await ShopStore.with(.sqlite) { shop in
            weak var dropped: KioskStoreClient?
            do {
                let device = try shop.device()
                dropped = device
                await #expect(throws: KioskKitError.self) {
                    try await device.signIn(email: ShopStore.tester, password: "not the password")
                }
            }
            try await expectEventually("the dropped client is released") { dropped == nil }
            let device = try await shop.signedInDevice()
            #expect(try await Product.products(for: [ShopStore.coins], client: device).map(\.id) == [ShopStore.coins])
            await device.close()
        }
    }

    @Test(arguments: TestDatabaseEngine.available)
    func pendingPurchaseArrivesInUpdates(engine: TestDatabaseEngine) async throws {
        try await ShopStore.with(engine, testerSettings: ["askToBuy": true]) { shop in
            let device = try await shop.signedInDevice()
            var updates = Transaction.updates(client: device).makeAsyncIterator()
            let coins = try #require(try await Product.products(for: [ShopStore.coins], client: device).first)
            guard case .pending = try await coins.purchase() else {
                Issue.record("an Ask to Buy purchase was not pending")
                return await device.close()
            }
            let waiting = try #require(try await shop.deferredPayments().first)
            try await shop.decide(waiting.paymentId, approve: true)
            guard case .verified(let transaction) = await updates.next() else {
                Issue.record("the approved purchase did not arrive verified")
                return await device.close()
            }
            #expect(transaction.productID == ShopStore.coins)
            await transaction.finish()
            try await shop.expectAllFinished(count: 1)
            await device.close()
        }
    }
}
