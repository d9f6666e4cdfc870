import Crypto
import Foundation
import KioskMerchant
import KioskProtocol
import KioskTesting
import Testing

@testable import KioskKit

/// `MerchantClient` against a real merchant server on a real store, with purchases made through KioskKit.
@Suite struct MerchantClientTests {
    static let levelBytes = Data(#"{"level": 1, "name": "No ads, ever"}"#.utf8)

    /// Every route of the client: product lists (the second read answered 304 from the cache), an order paid for
    /// with its app account token, the signed transaction delivered exactly once (a replay is `already_granted`),
    /// the order delivered for that transaction, entitlements, explanation, content downloaded and checked, a
    /// receipt delivered; and failures as readable `MerchantClientError`s.
    @Test func everyRouteAgainstARealMerchant() async throws {
        try await ShopStore.with(.sqlite) { shop in
            let folder = Fixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let content = folder.appendingPathComponent("content/ads")
            try FileManager.default.createDirectory(at: content, withIntermediateDirectories: true)
            try Self.levelBytes.write(to: content.appendingPathComponent("level-01.json"))
            let products: [MerchantConfiguration.ProductSettings] = [
                .init(productId: ShopStore.coins, type: .consumable, balance: "coins", amount: 100),
                .init(
                    productId: ShopStore.removeAds, type: .nonConsumable, entitlement: "no_ads", content: "content/ads"),
            ]
            // Without the store's notifications, only the client's delivery can grant the purchase.
            try await withTestMerchant(
                store: shop.store, bundleId: ShopStore.bundleId, products: products, directory: folder,
                receivesNotifications: false
            ) { merchant in
                let client = try MerchantClient(
                    baseURL: URL(string: merchant.baseURL + "/")!, userToken: merchant.userToken("alice"),
                    requestTimeout: .seconds(120))
                let device = try await shop.signedInDevice()
                do {
                    try await Self.exercise(client, device: device, merchant: merchant)
                } catch {
                    Issue.record(error)
                }
                await device.close()
                await client.close()
            }
        }
    }

    static func exercise(_ client: MerchantClient, device: KioskStoreClient, merchant: TestMerchant) async throws {
        // Product lists, with HTTP caching.
        let ids = try await client.productIdentifiers(bundleId: ShopStore.bundleId)
        #expect(Set(ids) == [ShopStore.coins, ShopStore.removeAds])
        #expect(try await client.productIdentifiers(bundleId: ShopStore.bundleId) == ids)
        #expect(client.notModifiedAnswers.withLock { $0 } == 1, "the second read was a 304 from the cache")
        let list = try await client.productList(bundleId: ShopStore.bundleId)
        #expect(list.bundleId == ShopStore.bundleId && list.products.map(\.productId).sorted() == ids.sorted())
        let coinsEntry = try #require(list.products.first { $0.productId == ShopStore.coins })
        #expect(coinsEntry.balance == "coins" && coinsEntry.amount == 100 && !coinsEntry.hasContent)
        #expect(list.products.first { $0.productId == ShopStore.removeAds }?.hasContent == true)
        _ = try await client.productList(bundleId: ShopStore.bundleId)
        #expect(client.notModifiedAnswers.withLock { $0 } == 2)

        // An order, paid for with its app account token, delivered once.
        let order = try await client.createOrder(productId: ShopStore.removeAds, bundleId: ShopStore.bundleId)
        #expect(order.state == "open" && order.userId == "alice" && order.quantity == 1)
        let product = try #require(try await Product.products(for: [ShopStore.removeAds], client: device).first)
        guard
            case .success(.verified(let transaction)) = try await product.purchase(
                options: [.appAccountToken(order.appAccountToken)])
        else {
            Issue.record("remove-ads was not bought")
            return
        }
        let delivered = try await client.deliver(
            signedTransaction: transaction.jwsRepresentation, orderId: order.orderId)
        #expect(delivered.deliveries.map(\.transactionId) == [String(transaction.id)])
        #expect(delivered.deliveries.map(\.outcome) == ["granted"], "\(delivered)")
        #expect(delivered.entitlements.entitlement("no_ads")?.active == true)
        await transaction.finish()
        let replayed = try await client.deliver(
            signedTransaction: transaction.jwsRepresentation, orderId: order.orderId)
        #expect(replayed.deliveries.map(\.outcome) == ["already_granted"])
        let paid = try await client.order(id: order.orderId)
        #expect(paid.state == "delivered" && paid.transactionId == String(transaction.id))
        #expect(paid.createdDate == order.createdDate)

        let owned = try await client.entitlements()
        #expect(owned.userId == "alice" && owned.entitlement("no_ads")?.productIds == [ShopStore.removeAds])
        let why = try await client.explain()
        #expect(why.lines.contains { $0.contains("no_ads") }, "\(why.lines)")
        #expect(why.history.contains { $0.transactionId == String(transaction.id) && $0.kind == "granted" })

        // Content: listed with a signed URL, downloaded without the bearer and checked.
        let files = try await client.content(productId: ShopStore.removeAds)
        let file = try #require(files.files.first)
        #expect(file.name == "level-01.json" && file.size == Int64(Self.levelBytes.count), "\(files)")
        #expect(file.sha256 == SHA256.hash(data: Self.levelBytes).map { String(format: "%02x", $0) }.joined())
        #expect(try await client.download(file) == Self.levelBytes)
        var tampered = file
        tampered.sha256 = String(repeating: "0", count: 64)
        await #expect {
            try await client.download(tampered)
        } throws: { error in
            (error as? MerchantClientError)?.code == "checksum_mismatch"
        }

        // A receipt instead of a signed transaction: two units of coins, for this user.
        let coins = try #require(try await Product.products(for: [ShopStore.coins], client: device).first)
        guard case .success(.verified(let coinsTransaction)) = try await coins.purchase(options: [.quantity(2)]) else {
            Issue.record("coins were not bought")
            return
        }
        try await device.refreshReceipt()
        let receipt = try Data(contentsOf: device.appStoreReceiptURL).base64EncodedString()
        let byReceipt = try await client.deliver(receiptData: receipt, orderId: nil)
        #expect(byReceipt.deliveries.contains { $0.transactionId == String(coinsTransaction.id) }, "\(byReceipt)")
        #expect(byReceipt.entitlements.balance("coins") == 200, "\(byReceipt.entitlements)")
        await coinsTransaction.finish()

        // Spending them: once per key, however often retried.
        let key = UUID().uuidString
        #expect(try await client.spend(150, of: "coins", idempotencyKey: key, reason: "a castle").remaining == 50)
        let retried = try await client.spend(150, of: "coins", idempotencyKey: key, reason: "a castle")
        #expect(retried.replayed && retried.remaining == 50)
        do {
            _ = try await client.spend(60, of: "coins", idempotencyKey: UUID().uuidString)
            Issue.record("a spend beyond the balance went through")
        } catch let error as MerchantClientError {
            #expect(error.code == "insufficient_balance" && error.status == 409, "\(error)")
        }

        // Failures: the merchant's error, and the client's own.
        do {
            _ = try await client.order(id: "ord_nonexistent")
            Issue.record("an unknown order was found")
        } catch let error as MerchantClientError {
            #expect(error.status == 404 && error.code == "unknown_order" && !error.message.isEmpty, "\(error)")
            #expect("\(error)".hasPrefix("merchant 404 \(error.code): "), "\(error)")
        }
        let stranger = try MerchantClient(baseURL: URL(string: merchant.baseURL)!, userToken: "not-a-token")
        do {
            _ = try await stranger.entitlements()
            Issue.record("a bad token was accepted")
        } catch let error as MerchantClientError {
            #expect(error.status == 401 && error.code == "invalid_token", "\(error)")
        }
        await stranger.close()
        let anonymous = try MerchantClient(baseURL: URL(string: merchant.baseURL)!, userToken: nil)
        #expect(try await anonymous.productIdentifiers(bundleId: ShopStore.bundleId).count == 2)
        do {
            _ = try await anonymous.entitlements()
            Issue.record("a user route answered without a token")
        } catch let error as MerchantClientError {
            #expect(error.code == "no_user_token" && error.status == nil, "\(error)")
        }
        // `anonymous` is released without close(): that must not trap.
    }

    /// Nothing listening: a `network` error naming the URL, and a client dropped without `close()` does not trap.
    @Test func unreachableMerchantIsANetworkError() async throws {
        weak var dropped: MerchantClient?
        do {
            let client = try MerchantClient(
                baseURL: URL(string: "http://127.0.0.1:9")!, userToken: "token", requestTimeout: .seconds(2))
            dropped = client
            await #expect {
                try await client.entitlements()
            } throws: { error in
                guard let error = error as? MerchantClientError else { return false }
                return error.code == "network" && error.status == nil
                    && error.description.contains("127.0.0.1:9/merchant/v1/entitlements")
            }
        }
        try await expectEventually("the dropped client is released") { dropped == nil }
    }
}
