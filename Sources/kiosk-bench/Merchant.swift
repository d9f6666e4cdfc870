import Foundation
import KioskMerchant
import KioskTesting

/// Section 8: the merchant's delivery of a fresh signed transaction over HTTP (verify the JWS, bind the order,
/// grant in one database transaction, answer the user's entitlements) against the same merchant's `/health`,
/// and a replay of an already granted transaction (the path retries take). Transactions are bought first.
func benchmarkMerchantDeliveries(seconds: Double, storeDatabaseURL: String?, merchantDatabaseURL: String?) async throws
    -> (delivery: Double, replay: Double, health: Double)
{
    try await withTestStore(databaseURL: storeDatabaseURL) { store in
        let bundleId = "com.example.merchant"
        let token = try await store.openShop(bundleId: bundleId, productId: "com.example.gems", type: "consumable")
        // Enough fresh transactions for the timed loop on a fast machine; it stops early if they run out.
        let count = Int(seconds * 1_500)
        var signed: [String] = []
        signed.reserveCapacity(count)
        for _ in 0..<count {
            let answer = try await store.request(
                .POST, "/sandbox/storekit/v1/payments",
                json: ["productId": "com.example.gems", "quantity": 1, "idempotencyKey": UUID().uuidString],
                token: .some(token))
            guard let jws = (answer.json["transaction"] as? [String: Any])?["signedTransaction"] as? String else {
                fatalError("purchase failed: \(answer.text)")
            }
            signed.append(jws)
        }
        // Each body is encoded before the timing starts: encoding a 4 KB string with JSONSerialization took this
        // client an eighth of a replay's samples, which is the client's cost, not the merchant's.
        let bodies = try signed.map { try JSONSerialization.data(withJSONObject: ["signedTransaction": $0]) }
        return try await withTestMerchant(
            store: store, bundleId: bundleId,
            products: [.init(productId: "com.example.gems", type: .consumable, balance: "gems", amount: 10)],
            databaseURL: merchantDatabaseURL, receivesNotifications: false
        ) { merchant in
            let user = merchant.userToken("bench-user")
            let health = try await rate(seconds: seconds) { _ = try await merchant.request(.GET, "/health") }
            let clock = ContinuousClock()
            let start = clock.now
            var delivered = 0
            for body in bodies where clock.now - start < .milliseconds(Int(seconds * 1000)) {
                let answer = try await merchant.request(.POST, "/merchant/v1/transactions", body: body, token: user)
                precondition(answer.text.contains(#""outcome":"granted""#), "delivery failed: \(answer.text)")
                delivered += 1
            }
            let elapsed = clock.now - start
            let delivery =
                Double(delivered) / elapsed.inSeconds
            let replayed = bodies[0]
            let replay = try await rate(seconds: seconds) {
                _ = try await merchant.request(.POST, "/merchant/v1/transactions", body: replayed, token: user)
            }
            return (delivery, replay, health)
        }
    }
}
