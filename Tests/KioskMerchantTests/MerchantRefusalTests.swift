import ExtrasBase64
import Foundation
import KioskCore
import KioskMerchant
import KioskProtocol
import KioskSigning
import KioskTesting
import Testing

/// Bad input gets a clear 4xx naming what is wrong, and nothing is granted.
@Suite struct MerchantRefusalTests {
    /// Tampered, forged (another chain), other-app and other-environment transactions are refused with their
    /// reason; a forged notification too.
    @Test func forgedTamperedWrongAppAndWrongEnvironmentAreRefused() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await MerchantShop.expect(
                201,
                shop.store.request(.POST, "/admin/v1/apps", json: ["bundleId": "com.example.other", "name": "Other"]))
            try await MerchantShop.expect(
                201,
                shop.store.request(
                    .POST, "/admin/v1/apps/com.example.other/products",
                    json: [
                        "productId": "com.example.other.gems", "type": "consumable", "referenceName": "Gems",
                        "pricing": ["tier": 1],
                        "localizations": [["locale": "en_US", "displayName": "Gems", "description": "Gems"]],
                    ]))
            let otherApp = try await shop.store.request(
                .POST, "/sandbox/test/v1/apps/com.example.other/purchases",
                json: ["tester": MerchantShop.tester, "productId": "com.example.other.gems"],
                token: .some(shop.store.adminToken))
            let otherJWS = try #require(
                (otherApp.json["transaction"] as? [String: Any])?["signedTransaction"] as? String, "\(otherApp.text)")

            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let device = try await shop.device()
                let transaction = try await shop.buy(MerchantShop.coins, token: nil, on: device)
                await device.close()
                let jws = transaction.jwsRepresentation
                let parts = jws.split(separator: ".").map(String.init)

                var signature = Array(parts[2])
                signature[10] = signature[10] == "A" ? "B" : "A"
                try await expectRefused(
                    merchant.deliver([parts[0], parts[1], String(signature)].joined(separator: "."), for: "alice"),
                    400, "invalid_signature", field: "signedTransaction")

                // The same claims, signed by a chain the merchant does not trust.
                let stranger = try SigningIdentity.generate(environment: .sandbox, now: Date())
                let claims = try Base64.decode(string: parts[1], options: [.base64UrlAlphabet, .omitPaddingCharacter])
                let forged = try JWSSigner(identity: stranger).sign(payloadJSON: claims)
                try await expectRefused(
                    merchant.deliver(forged, for: "alice"), 400, "invalid_signature", field: "signedTransaction")

                try await expectRefused(
                    merchant.deliver(otherJWS, for: "alice"), 400, "wrong_app", field: "signedTransaction")
                try await expectRefused(
                    merchant.deliver("not-a-jws", for: "alice"), 400, "malformed_signed_data",
                    field: "signedTransaction")
                try await expectRefused(
                    merchant.request(.POST, MerchantPaths.notifications, json: ["signedPayload": forged]), 400,
                    "wrong_app", field: "signedPayload")
                #expect(try await merchant.entitlements(of: "alice").balances.isEmpty, "nothing was granted")
            }
            try await shop.withMerchant(
                receivesNotifications: false, configure: { $0.apps[0].environments = ["Production"] }
            ) { merchant in
                let device = try await shop.device()
                let transaction = try await shop.buy(MerchantShop.coins, token: nil, on: device)
                await device.close()
                try await expectRefused(
                    merchant.deliver(transaction.jwsRepresentation, for: "alice"), 400, "wrong_environment",
                    field: "signedTransaction")
            }
        }
    }

    /// With `confirmWithServerAPI`, a transaction is granted only after Get Transaction Info confirms it; one the
    /// store no longer knows is refused.
    @Test func confirmationWithTheServerAPIRefusesTransactionsTheStoreDoesNotKnow() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(
                receivesNotifications: false, configure: { $0.apps[0].confirmWithServerAPI = true }
            ) { merchant in
                let device = try await shop.device()
                let kept = try await shop.buy(MerchantShop.coins, token: nil, on: device)
                let erased = try await shop.buy(MerchantShop.coins, token: nil, on: device)
                await device.close()
                try MerchantShop.expect(200, try await merchant.deliver(kept.jwsRepresentation, for: "alice"))
                try MerchantShop.expect(
                    200,
                    try await shop.store.request(
                        .DELETE, "/sandbox/test/v1/apps/\(MerchantShop.bundleId)/transactions/\(erased.id)",
                        token: .some(shop.store.adminToken)))
                try await expectRefused(
                    merchant.deliver(erased.jwsRepresentation, for: "alice"), 400, "unknown_transaction",
                    field: "signedTransaction")
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100)
            }
        }
    }

    /// Receipts go to production first (the sandbox only on 21007): with production unreachable nothing is
    /// decided (503, retry later) though the sandbox would accept it; a wrong shared secret is refused (21004) for
    /// a receipt holding a subscription; with the right one it is granted.
    @Test func receiptsAskProductionFirstAndNeedTheSharedSecret() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            let device = try await shop.device()
            let club = try await shop.buy(MerchantShop.monthly, token: nil, on: device)
            await club.finish()
            await device.close()
            let receipt = try await shop.receipt()
            try await shop.withMerchant(
                receivesNotifications: false,
                configure: { configuration in
                    var store = configuration.apps[0].store
                    store.verifyReceipt[.production] = "http://127.0.0.1:9/verifyReceipt"  // nothing listens there
                    configuration.apps[0].store = store
                }
            ) { merchant in
                let answer = try await merchant.request(
                    .POST, MerchantPaths.transactions, json: ["receiptData": receipt],
                    token: merchant.userToken("alice"))
                expectRefused(answer, 503, "store_unavailable", field: nil)
                #expect(try await merchant.entitlements(of: "alice").entitlements.isEmpty)
            }
            try await shop.withMerchant(
                receivesNotifications: false,
                configure: { $0.apps[0].sharedSecret = "0123456789abcdef0123456789abcdef" }
            ) { merchant in
                let answer = try await merchant.request(
                    .POST, MerchantPaths.transactions, json: ["receiptData": receipt],
                    token: merchant.userToken("alice"))
                expectRefused(answer, 400, "receipt_refused", field: "receiptData")
                #expect(answer.text.contains("shared secret"), "\(answer.text)")
            }
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let answer = try await merchant.request(
                    .POST, MerchantPaths.transactions, json: ["receiptData": receipt],
                    token: merchant.userToken("alice"))
                let deliveries = try answer.decode(MerchantDeliveryResponse.self)
                #expect(deliveries.deliveries.map(\.outcome) == ["granted"])
                #expect(deliveries.deliveries.first?.environment == "Sandbox")
                #expect(deliveries.entitlements.entitlement("pro")?.active == true)
            }
        }
    }

    /// A transaction carrying another user's order, an order id of another user, and a transaction already
    /// granted to someone else are refused (403); the rightful owner is then granted normally.
    @Test func anotherUsersOrderOrTransactionIsRefused() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let device = try await shop.device()
                let alices = try await merchant.order(MerchantShop.coins, for: "alice")
                let withAlicesToken = try await shop.buy(MerchantShop.coins, token: alices.appAccountToken, on: device)
                try await expectRefused(
                    merchant.deliver(withAlicesToken.jwsRepresentation, for: "mallory"), 403, "order_of_another_user",
                    field: "orderId")
                let tokenless = try await shop.buy(MerchantShop.coins, token: nil, on: device)
                try await expectRefused(
                    merchant.deliver(tokenless.jwsRepresentation, orderId: alices.orderId, for: "mallory"), 403,
                    "order_of_another_user", field: "orderId")
                try MerchantShop.expect(
                    200, try await merchant.deliver(withAlicesToken.jwsRepresentation, for: "alice"))
                try await expectRefused(
                    merchant.deliver(withAlicesToken.jwsRepresentation, for: "mallory"), 403, "order_of_another_user",
                    field: "orderId")
                try MerchantShop.expect(200, try await merchant.deliver(tokenless.jwsRepresentation, for: "bob"))
                try await expectRefused(
                    merchant.deliver(tokenless.jwsRepresentation, for: "mallory"), 403, "transaction_of_another_user",
                    field: "signedTransaction")
                #expect(try await merchant.entitlements(of: "mallory").balances.isEmpty)
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100)
                #expect(try await merchant.entitlements(of: "bob").balance("coins") == 100)
                let unknownOrder = try await merchant.request(
                    .GET, MerchantPaths.order(alices.orderId), token: merchant.userToken("mallory"))
                expectRefused(unknownOrder, 404, "unknown_order", field: "orderId")  // not even shown
                await device.close()
            }
        }
    }

    /// Malformed requests get 4xx with the field at fault; the user routes need a valid, unexpired user token.
    @Test func malformedRequestsAndMissingTokensGetClearErrors() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let alice = merchant.userToken("alice")
                func post(_ path: String, _ json: [String: Any], token: String? = alice) async throws
                    -> TestStore.Answer
                {
                    try await merchant.request(.POST, path, json: json, token: token)
                }
                try await expectRefused(post(MerchantPaths.orders, [:]), 400, "missing_field", field: "productId")
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": MerchantShop.coins, "quantity": 11]), 400,
                    "invalid_quantity", field: "quantity")
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": MerchantShop.coins, "colour": "red"]), 400,
                    "unknown_field", field: "colour")
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": "com.example.shop.unknown"]), 409,
                    "product_not_configured", field: "productId")
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": MerchantShop.coins, "bundleId": "com.example.nope"]), 404,
                    "unknown_app", field: "bundleId")
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": 7]), 400, "invalid_type", field: "productId")
                try await expectRefused(
                    post(MerchantPaths.transactions, [:]), 400, "missing_field", field: "signedTransaction")
                let body = try await merchant.request(
                    .POST, MerchantPaths.orders, body: Data("{\"productId\": ".utf8), token: alice)
                expectRefused(body, 400, "invalid_json", field: "line 1, column 15")

                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": MerchantShop.coins], token: nil), 401,
                    "missing_user_token",
                    field: "Authorization")
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": MerchantShop.coins], token: alice + "x"), 401,
                    "invalid_token", field: "Authorization")
                let expired = merchant.built.tokens.issue(userId: "alice", expiresAt: Date().addingTimeInterval(-5))
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": MerchantShop.coins], token: expired), 401, "token_expired",
                    field: "Authorization")
                let other = UserTokens(secret: "another secret of some length").issue(
                    userId: "alice", expiresAt: Date().addingTimeInterval(60))
                try await expectRefused(
                    post(MerchantPaths.orders, ["productId": MerchantShop.coins], token: other), 401, "invalid_token",
                    field: "Authorization")
                try await expectRefused(
                    merchant.request(.GET, MerchantPaths.adminEntitlements(userId: "alice"), token: alice), 401,
                    "invalid_admin_token", field: "Authorization")
                try await expectRefused(
                    merchant.request(.POST, MerchantPaths.notifications, json: ["signedPayload": "x.y"]), 400,
                    "malformed_signed_data", field: "signedPayload")
            }
        }
    }
}
