import Foundation
import KioskKit
import KioskProtocol
import KioskTesting
import Testing

/// The server model end to end: a real store, a real merchant and KioskKit on loopback, on both engines.
@Suite struct MerchantDeliveryTests {
    /// Order, pay with its token, send the transaction: granted once, bound to the order; sent again, nothing
    /// more; only then finished. A second device of the same user restores the balance from the merchant.
    @Test(arguments: TestDatabaseEngine.available)
    func orderPayDeliverFinish(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let order = try await merchant.order(MerchantShop.coins, quantity: 3, for: "alice")
                #expect(order.state == "open" && order.userId == "alice" && order.quantity == 3)
                let device = try await shop.device()
                let transaction = try await shop.buy(
                    MerchantShop.coins, quantity: 3, token: order.appAccountToken, on: device)

                let first = try await merchant.deliver(
                    transaction.jwsRepresentation, orderId: order.orderId, for: "alice")
                try MerchantShop.expect(200, first)
                let delivered = try first.decode(MerchantDeliveryResponse.self)
                #expect(delivered.deliveries.map(\.outcome) == ["granted"])
                #expect(delivered.deliveries.first?.orderId == order.orderId)
                #expect(delivered.entitlements.balance("coins") == 300)

                let again = try await merchant.deliver(transaction.jwsRepresentation, for: "alice")
                #expect(
                    try again.decode(MerchantDeliveryResponse.self).deliveries.map(\.outcome) == ["already_granted"])
                await transaction.finish()

                let stored = try await merchant.request(
                    .GET, MerchantPaths.order(order.orderId), token: merchant.userToken("alice"))
                let bound = try stored.decode(MerchantOrder.self)
                #expect(bound.state == "delivered" && bound.transactionId == String(transaction.id))
                // Restore through the server: what another device of alice's sees.
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 300)
                #expect(try await merchant.entitlements(of: "bob").balances.isEmpty)

                // What the operator's /metrics says of it, read from the ledger.
                let metrics = try await merchant.request(.GET, "/metrics").text
                for series in [
                    #"kiosk_merchant_grants{environment="sandbox"} 1"#, #"kiosk_merchant_orders{state="delivered"} 1"#,
                    #"kiosk_http_requests_total{method="POST""#, "kiosk_database_pool_size ",
                    #"kiosk_database_sessions{state="waiting"}"#,
                ] {
                    #expect(metrics.contains(series), "\(series) in \(metrics)")
                }
                await device.close()
            }
        }
    }

    /// The same signed transaction, and the same app receipt, each sent 10 times at once: one grant each.
    @Test(arguments: TestDatabaseEngine.available)
    func tenConcurrentSubmissionsGrantOnce(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let device = try await shop.device()
                let order = try await merchant.order(MerchantShop.coins, for: "alice")
                let coins = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<10 {
                        group.addTask {
                            let answer = try await merchant.deliver(coins.jwsRepresentation, for: "alice")
                            return try answer.decode(MerchantDeliveryResponse.self).deliveries.first?.outcome ?? "?"
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 == "granted" }.count == 1, "\(outcomes)")
                #expect(outcomes.filter { $0 == "already_granted" }.count == 9, "\(outcomes)")
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100)

                let removeAds = try await shop.buy(MerchantShop.removeAds, token: nil, on: device)
                await removeAds.finish()
                let receipt = try await shop.receipt()
                let granted = try await withThrowingTaskGroup(of: [String].self) { group in
                    for _ in 0..<10 {
                        group.addTask {
                            let answer = try await merchant.request(
                                .POST, MerchantPaths.transactions, json: ["receiptData": receipt],
                                token: merchant.userToken("alice"))
                            try MerchantShop.expect(200, answer)
                            return try answer.decode(MerchantDeliveryResponse.self).deliveries
                                .filter { $0.outcome == "granted" }.map(\.transactionId)
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(granted == [String(removeAds.id)], "the receipt's new purchase is granted by one request only")
                let owned = try await merchant.entitlements(of: "alice")
                #expect(owned.entitlement("no_ads")?.active == true)
                #expect(owned.balance("coins") == 100, "the coins in the receipt were granted before")
                await device.close()
            }
        }
    }

    /// The app dies after paying and never comes back: the store's ONE_TIME_CHARGE and SUBSCRIBED notifications
    /// alone grant the purchases to the users whose orders they carry.
    @Test(arguments: TestDatabaseEngine.available)
    func killedAppIsGrantedFromNotificationsAlone(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant { merchant in
                let device = try await shop.device()
                let coinsOrder = try await merchant.order(MerchantShop.coins, quantity: 2, for: "alice")
                _ = try await shop.buy(MerchantShop.coins, quantity: 2, token: coinsOrder.appAccountToken, on: device)
                let clubOrder = try await merchant.order(MerchantShop.monthly, for: "alice")
                let subscription = try await shop.buy(
                    MerchantShop.monthly, token: clubOrder.appAccountToken, on: device)
                await device.close()  // killed: nothing is sent to the merchant, nothing finished

                let owned = try await merchant.waitForEntitlements(of: "alice") {
                    $0.balance("coins") == 200 && $0.entitlement("pro")?.active == true
                }
                #expect(owned.entitlement("pro")?.transactionId == String(subscription.id))
                let explanation = try await merchant.explain("alice")
                #expect(
                    explanation.history.map { "\($0.kind) \($0.source)" } == [
                        "granted notification", "granted notification",
                    ], "\(explanation.history)")
                #expect(explanation.lines.contains { $0.hasPrefix("entitled to pro until") }, "\(explanation.lines)")
                let order = try await merchant.request(
                    .GET, MerchantPaths.order(coinsOrder.orderId), token: merchant.userToken("alice"))
                #expect(try order.decode(MerchantOrder.self).state == "delivered")
            }
        }
    }
}
