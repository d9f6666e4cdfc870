import Foundation
import KioskMerchant
import KioskTestSupport
import KioskTesting
import Testing

/// `coin-shop --merchant`: the seeds' server model (figure 1-3) with the real shop, a real store and a real
/// merchant server.
@Suite struct CoinShopMerchantTests {
    static let app = CoinShop.app

    /// The shop reads its product ids from the merchant, pays for an order made there, sends the signed
    /// transaction to the merchant and finishes it only after the merchant's answer. The coins live at the
    /// merchant, for the user: a second device with the same user token sees them.
    @Test func buyCoinsThroughTheMerchantThenASecondDeviceSeesThem() async throws {
        try await withTestStore { store in
            try await CoinShop.createShop(on: store)
            let products: [MerchantConfiguration.ProductSettings] = [
                .init(productId: "\(Self.app).coins", type: .consumable, balance: "coins", amount: 100),
                // Not in the merchant's product list: `products --merchant` must not show it.
                .init(
                    productId: "\(Self.app).remove_ads", type: .nonConsumable, entitlement: "remove_ads", listed: false),
            ]
            try await withTestMerchant(store: store, bundleId: Self.app, products: products) { merchant in
                let token = merchant.userToken("alice")
                let phone1 = CoinShop.temporaryDevice()
                let phone2 = CoinShop.temporaryDevice()
                defer {
                    try? FileManager.default.removeItem(at: phone1)
                    try? FileManager.default.removeItem(at: phone2)
                }
                let shop = { (arguments: [String], device: URL) in
                    try await CoinShop.run(arguments + ["--merchant", merchant.baseURL], store: store, device: device)
                }

                let listed = try await shop(["products"], phone1)
                #expect(listed.status == 0, "\(listed.stderr)")
                #expect(listed.stdout.contains("\(Self.app).coins"), "\(listed.stdout)")
                #expect(
                    !listed.stdout.contains("\(Self.app).remove_ads"),
                    "the ids come from the merchant: \(listed.stdout)")

                let bought = try await shop(["buy", "coins", "--quantity", "3", "--user-token", token], phone1)
                #expect(bought.status == 0, "\(bought.stderr)")
                #expect(bought.stdout.contains("✓ merchant: \(Self.app).coins"), "\(bought.stdout)")
                #expect(bought.stdout.contains("Balance at the merchant for alice: 300 coins"), "\(bought.stdout)")

                // The order the shop paid for is the one the merchant delivered, bound to the store's transaction.
                let orderId = try #require(Self.orderId(in: bought.stdout), "\(bought.stdout)")
                let order = try await merchant.request(.GET, "/merchant/v1/orders/\(orderId)", token: token)
                #expect(order.json["state"] as? String == "delivered", "\(order.text)")
                let transactionId = try #require(order.json["transactionId"] as? String, "\(order.text)")
                let transactions = try await CoinShop.testerTransactions(on: store)
                #expect(transactions.map(\.id) == [transactionId], "one purchase: \(transactions)")
                #expect(transactions.allSatisfy { $0.finished }, "delivered, so finished: \(transactions)")

                // The device keeps no coins of its own, and no order once the merchant has the transaction.
                let ledger = try CoinShop.ledger(of: phone1)
                #expect(ledger["coins"] as? Int == 0, "\(ledger)")
                let orders = try #require(ledger["merchantOrders"] as? [String: String], "\(ledger)")
                #expect(orders.isEmpty, "\(ledger)")

                // Another device of the same user, token from the environment: the same balance.
                let balance = try await KioskProcess.run(
                    ["balance", "--merchant", merchant.baseURL, "--state-dir", phone2.path],
                    environment: ["COIN_SHOP_USER_TOKEN": token], executable: CoinShop.executable)
                #expect(balance.status == 0, "\(balance.stderr)")
                #expect(balance.stdout.contains("Balance at the merchant for alice: 300 coins"), "\(balance.stdout)")

                // Restoring on that device shows what the merchant holds too (coins are consumable: the store
                // restores nothing).
                let restored = try await shop(["restore", "--user-token", token], phone2)
                #expect(restored.status == 0, "\(restored.stderr)")
                #expect(restored.stdout.contains("Restore finished."), "\(restored.stdout)")
                #expect(restored.stdout.contains("Balance at the merchant for alice: 300 coins"), "\(restored.stdout)")

                // Another user has nothing.
                let other = try await shop(["balance", "--user-token", merchant.userToken("bob")], phone2)
                #expect(other.status == 0, "\(other.stderr)")
                #expect(other.stdout.contains("Balance at the merchant for bob: nothing"), "\(other.stdout)")
            }
        }
    }

    /// A transaction the merchant refuses stays unfinished, with its order kept beside it in the device's ledger;
    /// the next launch, once the merchant takes it, delivers it for that order and only then finishes it.
    @Test func aTransactionTheMerchantRefusesIsDeliveredAtTheNextLaunch() async throws {
        try await withTestStore { store in
            try await CoinShop.createShop(on: store)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("merchant-\(UUID().uuidString)")
            let phone = CoinShop.temporaryDevice()
            defer {
                try? FileManager.default.removeItem(at: folder)
                try? FileManager.default.removeItem(at: phone)
            }
            let products: [MerchantConfiguration.ProductSettings] = [
                .init(productId: "\(Self.app).coins", type: .consumable, balance: "coins", amount: 100)
            ]
            // First the merchant accepts production transactions only, so it refuses the sandbox purchase; no
            // notifications, so nothing but the app can deliver it.
            let (token, orderId) = try await withTestMerchant(
                store: store, bundleId: Self.app, products: products, directory: folder, receivesNotifications: false,
                configure: { $0.apps[0].environments = ["Production"] }
            ) { merchant in
                let token = merchant.userToken("alice")
                let bought = try await CoinShop.run(
                    ["buy", "coins", "--merchant", merchant.baseURL, "--user-token", token], store: store, device: phone
                )
                #expect(bought.status == 1, "the merchant refused it: \(bought.stdout)")
                #expect(
                    bought.stderr.contains("from the Sandbox environment, which \(Self.app) does not accept here"),
                    "why: the merchant takes production only: \(bought.stderr)")
                #expect(bought.stdout.contains("stays unfinished"), "\(bought.stdout)")
                let ledger = try CoinShop.ledger(of: phone)
                let orders = try #require(ledger["merchantOrders"] as? [String: String], "\(ledger)")
                let orderId = try #require(Self.orderId(in: bought.stdout), "\(bought.stdout)")
                #expect(Array(orders.values) == [orderId], "\(ledger)")
                let owned = try await merchant.request(.GET, "/merchant/v1/entitlements", token: token)
                #expect((owned.json["balances"] as? [Any])?.isEmpty == true, "nothing granted: \(owned.text)")
                return (token, orderId)
            }
            let unfinished = try await CoinShop.testerTransactions(on: store)
            #expect(unfinished.count == 1 && unfinished.allSatisfy { !$0.finished }, "not finished: \(unfinished)")

            // The same merchant (same ledger and tokens), now accepting the sandbox.
            let file = folder.appendingPathComponent("merchant.json")
            var configuration = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
            var apps = configuration["apps"] as! [[String: Any]]
            apps[0]["environments"] = nil
            configuration["apps"] = apps
            try JSONSerialization.data(withJSONObject: configuration).write(to: file)
            try await withTestMerchant(
                store: store, bundleId: Self.app, products: products, directory: folder, receivesNotifications: false
            ) { merchant in
                let launched = try await CoinShop.run(
                    ["products", "--merchant", merchant.baseURL, "--user-token", token], store: store, device: phone)
                #expect(launched.status == 0, "\(launched.stderr)")
                #expect(launched.stdout.contains("✓ merchant: \(Self.app).coins granted"), "\(launched.stdout)")
                let order = try await merchant.request(.GET, "/merchant/v1/orders/\(orderId)", token: token)
                #expect(order.json["state"] as? String == "delivered", "delivered for its order: \(order.text)")
                let balance = try await CoinShop.run(
                    ["balance", "--merchant", merchant.baseURL, "--user-token", token], store: store, device: phone)
                #expect(balance.status == 0, "\(balance.stderr)")
                #expect(balance.stdout.contains("Balance at the merchant for alice: 100 coins"), "\(balance.stdout)")
            }
            let finished = try await CoinShop.testerTransactions(on: store)
            #expect(
                finished.map(\.id) == unfinished.map(\.id) && finished.allSatisfy { $0.finished },
                "finished after the merchant took it: \(finished)")
            let orders = try #require(CoinShop.ledger(of: phone)["merchantOrders"] as? [String: String])
            #expect(orders.isEmpty, "no order kept once delivered: \(orders)")
        }
    }

    /// The id in the shop's "Order <id> at the merchant." line.
    static func orderId(in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix("Order ") && $0.hasSuffix(" at the merchant.") }
            .map { $0.dropFirst("Order ".count).dropLast(" at the merchant.".count) }.map(String.init)
    }
}
