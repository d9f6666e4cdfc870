import Foundation
import KioskProtocol
import KioskTesting
import Testing

/// Spending the coins a user bought: once per idempotency key, never below zero, even when spends race.
@Suite struct MerchantSpendTests {
    /// Bought 300 coins; a spend, its retry (once), a reused key refused, an overdraft refused; ten spends of 50
    /// at once leave exactly what four of them can take; a refund after spending shows below zero, explained.
    @Test(arguments: TestDatabaseEngine.available)
    func spendsAreIdempotentAndNeverOverdraw(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let order = try await merchant.order(MerchantShop.coins, quantity: 3, for: "alice")
                let device = try await shop.device()
                let coins = try await shop.buy(
                    MerchantShop.coins, quantity: 3, token: order.appAccountToken, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(coins.jwsRepresentation, for: "alice"))
                await coins.finish()
                await device.close()

                func spend(_ amount: Int, key: String) async throws -> TestStore.Answer {
                    try await merchant.request(
                        .POST, MerchantPaths.spend(balance: "coins"),
                        json: ["amount": amount, "idempotencyKey": key, "reason": "a sword"],
                        token: merchant.userToken("alice"))
                }
                let first = try await spend(80, key: "spend-1")
                try MerchantShop.expect(200, first)
                let spent = try first.decode(MerchantSpendResponse.self)
                #expect(spent.remaining == 220 && !spent.replayed)
                let retried = try await spend(80, key: "spend-1").decode(MerchantSpendResponse.self)
                #expect(retried.remaining == 220 && retried.replayed && retried.spentDate == spent.spentDate)
                expectRefused(
                    try await spend(90, key: "spend-1"), 409, "idempotency_key_reused", field: "idempotencyKey")
                let overdraft = try await spend(500, key: "spend-2")
                expectRefused(overdraft, 409, "insufficient_balance", field: "amount")
                #expect(overdraft.text.contains("has 220 coins"), "\(overdraft.text)")
                expectRefused(try await spend(0, key: "spend-3"), 400, "invalid_amount", field: "amount")

                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<10 {
                        group.addTask {
                            let answer = try await spend(50, key: "race-\(index)")
                            let error = answer.json["error"] as? [String: Any]
                            return "\(answer.status) \(error?["code"] as? String ?? "spent")"
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 == "200 spent" }.count == 4, "\(outcomes)")
                #expect(outcomes.filter { $0 == "409 insufficient_balance" }.count == 6, "\(outcomes)")
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 20)

                try await shop.control(coins.id, "refund")
                let refund = try #require(try await shop.signedNotifications(merchant: merchant)["REFUND"])
                try MerchantShop.expect(
                    200, try await merchant.request(.POST, MerchantPaths.notifications, json: ["signedPayload": refund])
                )
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == -280)
                let explanation = try await merchant.explain("alice")
                #expect(
                    explanation.lines.contains {
                        $0 == "coins: -280 (0 from 0 purchases, 280 spent; 1 refunded purchase took back what it gave)"
                    }, "\(explanation.lines)")
                #expect(explanation.history.filter { $0.kind == "spent" }.count == 5)
                #expect(explanation.history.first { $0.kind == "spent" }?.detail == "-80 coins: a sword")
            }
        }
    }
}
