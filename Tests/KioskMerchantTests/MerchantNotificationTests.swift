import ExtrasBase64
import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskTesting
import Synchronization
import Testing

/// App Store Server Notifications into the merchant: retried deliveries, refunds, and any order of arrival.
@Suite struct MerchantNotificationTests {
    /// The merchant is down when the purchase's notification is first sent; the store retries an hour later
    /// (sandbox clock), the merchant is back by then and grants once; a replay of the same notification and
    /// later clock moves change nothing.
    @Test(arguments: TestDatabaseEngine.available)
    func merchantDownWhileRetriedGrantsOnceWhenBack(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("merchant-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            try await engine.withFreshDatabase { databaseURL in
                let (port, order) = try await shop.withMerchantReturning(
                    directory: folder, databaseURL: databaseURL, port: .free
                ) { merchant in
                    (merchant.port, try await merchant.order(MerchantShop.coins, for: "alice"))
                }
                // The merchant is down: the app pays and is killed before it tells anyone.
                let device = try await shop.device()
                let transaction = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                await device.close()
                let failed = try await shop.waitForNotification(type: .oneTimeCharge) {
                    $0.attempts >= 1 && $0.state != "delivered"
                }
                #expect(failed.transactionId == String(transaction.id))

                try await shop.withMerchant(directory: folder, databaseURL: .some(databaseURL), port: .fixed(port)) {
                    merchant in
                    #expect(try await merchant.entitlements(of: "alice").balance("coins") == 0, "not retried yet")
                    try await shop.advanceSandboxClock(by: "1h")
                    let owned = try await merchant.waitForEntitlements(of: "alice") { $0.balance("coins") == 100 }
                    #expect(owned.balance("coins") == 100)
                    let delivered = try await shop.waitForNotification(type: .oneTimeCharge) {
                        $0.state == "delivered"
                    }
                    let resent = try await shop.store.request(
                        .POST,
                        "/sandbox/test/v1/apps/\(MerchantShop.bundleId)/notifications/\(delivered.notificationUUID)/resend",
                        token: .some(shop.store.adminToken))
                    try MerchantShop.expect(200, resent)
                    // The store answers a resend once the merchant answered it.
                    #expect(try resent.decode(TestNotificationInfo.self).attempts == delivered.attempts + 1)
                    try await shop.advanceSandboxClock(by: "3d")
                    #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100)
                    let granted = try await merchant.explain("alice").history.filter { $0.kind == "granted" }
                    #expect(granted.count == 1 && granted.first?.source == "notification", "\(granted)")
                }
            }
        }
    }

    /// Refunds take back what they gave: coins leave the balance, and an entitlement goes only when no other
    /// standing grant gives it. A reversed refund gives it back.
    @Test(arguments: TestDatabaseEngine.available)
    func refundsTakeBackOnlyWhatTheyGave(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant { merchant in
                let device = try await shop.device()
                var bought: [String: UInt64] = [:]
                for product in [MerchantShop.coins, MerchantShop.removeAds, MerchantShop.supporter] {
                    let order = try await merchant.order(product, for: "alice")
                    let transaction = try await shop.buy(product, token: order.appAccountToken, on: device)
                    try MerchantShop.expect(
                        200, try await merchant.deliver(transaction.jwsRepresentation, for: "alice"))
                    await transaction.finish()
                    bought[product] = transaction.id
                }
                await device.close()
                var owned = try await merchant.entitlements(of: "alice")
                #expect(owned.balance("coins") == 100 && owned.entitlement("no_ads")?.active == true)

                try await shop.control(try #require(bought[MerchantShop.coins]), "refund")
                try await shop.control(try #require(bought[MerchantShop.removeAds]), "refund")
                owned = try await merchant.waitForEntitlements(of: "alice") { owned in
                    owned.balance("coins") == 0 && owned.entitlement("no_ads")?.productIds == [MerchantShop.supporter]
                }
                #expect(owned.entitlement("no_ads")?.active == true, "the supporter pack still gives no_ads")

                let supporter = try #require(bought[MerchantShop.supporter])
                try await shop.control(supporter, "refund")
                owned = try await merchant.waitForEntitlements(of: "alice") {
                    $0.entitlement("no_ads")?.active == false
                }
                let lines = try await merchant.explain("alice").lines
                #expect(lines.contains { $0.hasPrefix("not entitled to no_ads") }, "\(lines)")

                try await shop.control(supporter, "reverse-refund")
                try await merchant.waitForEntitlements(of: "alice") { $0.entitlement("no_ads")?.active == true }
            }
        }
    }

    /// A parent withdraws consent (`RESCIND_CONSENT`, about the customer, not a purchase): the merchant finds the
    /// user by the app transaction their purchases carried, records it once, and `explain` says what it means.
    @Test(arguments: TestDatabaseEngine.available)
    func withdrawnConsentReachesTheUserItConcerns(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant { merchant in
                let device = try await shop.device()
                let order = try await merchant.order(MerchantShop.coins, for: "alice")
                let transaction = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(transaction.jwsRepresentation, for: "alice"))
                await transaction.finish()
                await device.close()
                #expect(try await merchant.explain("alice").lines.allSatisfy { !$0.contains("consent") })

                for status in [201, 200] {
                    try MerchantShop.expect(
                        status,
                        try await shop.store.request(
                            .POST, "/sandbox/test/v1/apps/\(MerchantShop.bundleId)/rescind-consent",
                            json: ["tester": MerchantShop.tester], token: .some(shop.store.adminToken)))
                }
                await shop.store.built.context.notifications.deliverDue(.sandbox)
                let explanation = try await merchant.explain("alice")
                Self.expectConsentWithdrawn(explanation)
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100, "purchases stay")
            }
        }
    }

    /// `explain` tells once that consent was withdrawn, naming Apple's notification, and its history holds it once.
    /// (A plain function: the same checks inline in the test's async closure crashed Swift 6.3.1's SendNonSendable
    /// pass, and an earlier shape of them was miscompiled.)
    static func expectConsentWithdrawn(
        _ explanation: MerchantExplanation, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let told = explanation.lines.filter { $0.contains("withdrew consent") && $0.contains("RESCIND_CONSENT") }
        #expect(told.count == 1, "\(explanation.lines)", sourceLocation: sourceLocation)
        let recorded = explanation.history.filter { $0.kind == "consent_rescinded" }
        #expect(recorded.count == 1, "\(explanation.history)", sourceLocation: sourceLocation)
    }

    /// Notifications delivered in reverse (the refund before the purchase), twice, then the app's own old copy:
    /// the transaction is recorded refunded, nothing is ever credited, and repeats are recognised.
    @Test(arguments: TestDatabaseEngine.available)
    func anyOrderOfArrivalEndsInTheSignedState(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let order = try await merchant.order(MerchantShop.coins, for: "alice")
                let device = try await shop.device()
                let transaction = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                await device.close()
                try await shop.control(transaction.id, "refund")
                let payloads = try await shop.signedNotifications(merchant: merchant)
                let charge = try #require(payloads["ONE_TIME_CHARGE"])
                let refund = try #require(payloads["REFUND"])

                func post(_ signedPayload: String) async throws -> String {
                    let answer = try await merchant.request(
                        .POST, MerchantPaths.notifications, json: ["signedPayload": signedPayload])
                    try MerchantShop.expect(200, answer)
                    return answer.json["outcome"] as? String ?? "?"
                }
                #expect(try await post(refund) == "revoked")
                #expect(try await post(charge) == "revoked", "the older purchase state does not undo the refund")
                #expect(try await post(refund) == "duplicate")
                #expect(try await post(charge) == "duplicate")
                let late = try await merchant.deliver(transaction.jwsRepresentation, for: "alice")
                #expect(try late.decode(MerchantDeliveryResponse.self).deliveries.map(\.outcome) == ["revoked"])
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 0)
                let history = try await merchant.explain("alice").history
                #expect(history.map(\.kind) == ["revoked"], "\(history)")
            }
        }
    }

    /// A refund reaches the grant whoever holds it: bob's receipt delivered a purchase made with alice's order
    /// token; the refund notification (whose token names alice) still takes bob's coins back, and gives alice none.
    @Test func aRefundReachesTheGrantWhoeverHoldsIt() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let order = try await merchant.order(MerchantShop.coins, for: "alice")
                let device = try await shop.device()
                let transaction = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                await device.close()
                let receipt = try await merchant.request(
                    .POST, MerchantPaths.transactions, json: ["receiptData": try await shop.receipt()],
                    token: merchant.userToken("bob"))
                #expect(try receipt.decode(MerchantDeliveryResponse.self).deliveries.map(\.outcome) == ["granted"])
                try await shop.control(transaction.id, "refund")
                let refund = try #require(try await shop.signedNotifications(merchant: merchant)["REFUND"])
                let answer = try await merchant.request(
                    .POST, MerchantPaths.notifications, json: ["signedPayload": refund])
                try MerchantShop.expect(200, answer)
                #expect(try await merchant.entitlements(of: "bob").balance("coins") == 0)
                #expect(try await merchant.entitlements(of: "alice").balances.isEmpty)
            }
        }
    }
}

extension MerchantShop {
    /// Like `withMerchant`, returning what `body` returns.
    func withMerchantReturning<T: Sendable>(
        directory: URL, databaseURL: String?, port: TestStorePort,
        _ body: @Sendable @escaping (TestMerchant) async throws -> T
    ) async throws -> T {
        let result = Mutex<T?>(nil)
        try await withMerchant(directory: directory, databaseURL: .some(databaseURL), port: port) { merchant in
            let value = try await body(merchant)
            result.withLock { $0 = value }
        }
        return try #require(result.withLock { $0 })
    }

    /// Waits (60 s at most) for the newest notification of `type` to satisfy `condition`.
    func waitForNotification(type: NotificationType, until condition: @Sendable (TestNotificationInfo) -> Bool)
        async throws
        -> TestNotificationInfo
    {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let list = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(Self.bundleId)/notifications", token: .some(store.adminToken)
            ).decode(TestNotificationsResponse.self).notifications
            if let found = list.first(where: { $0.notificationType == type }), condition(found) { return found }
            guard ContinuousClock.now < deadline else {
                throw ShopFailure("no \(type) notification got there: \(list)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Waits (60 s at most) until the store delivered every notification it made for the app.
    func waitUntilEveryNotificationIsDelivered() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let list = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(Self.bundleId)/notifications", token: .some(store.adminToken)
            ).decode(TestNotificationsResponse.self).notifications
            if list.allSatisfy({ $0.state == "delivered" }) { return }
            guard ContinuousClock.now < deadline else { throw ShopFailure("notifications still undelivered: \(list)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The signed payloads the store made for the app (about one transaction when `transactionId` is given), newest
    /// of each type, from the App Store Server API's notification history (called with the merchant's own key, as
    /// the merchant would).
    func signedNotifications(merchant: TestMerchant, about transactionId: UInt64? = nil) async throws
        -> [String: String]
    {
        let key = try #require(merchant.built.service.configuration.apps[Self.bundleId]?.serverAPIKey)
        let token = try ServerAPIToken.sign(
            keyId: key.keyId, issuerId: key.issuerId, bundleId: Self.bundleId, privateKeyPEM: key.privateKeyPEM,
            expiresAt: Date().addingTimeInterval(300))
        let now = try await sandboxNow().millisecondsSince1970
        var byType: [String: String] = [:]
        var page: String?
        repeat {
            let answer = try await store.request(
                .POST,
                "/sandbox/inApps/v1/notifications/history"
                    + (page.map {
                        "?paginationToken=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)"
                    } ?? ""),
                json: ["startDate": now - 86_400_000, "endDate": now + 86_400_000], token: .some(token))
            try Self.expect(200, answer)
            for item in answer.json["notificationHistory"] as? [[String: Any]] ?? [] {
                guard let signed = item["signedPayload"] as? String, let object = Self.claims(of: signed),
                    let type = object["notificationType"] as? String
                else { continue }
                if let transactionId {
                    let data = object["data"] as? [String: Any]
                    let transaction = (data?["signedTransactionInfo"] as? String).flatMap(Self.claims(of:))
                    guard transaction?["transactionId"] as? String == String(transactionId) else { continue }
                }
                byType[type] = signed
            }
            page = answer.json["hasMore"] as? Bool == true ? answer.json["paginationToken"] as? String : nil
        } while page != nil
        return byType
    }

    /// The claims of a compact JWS, unverified (the merchant verifies what it is sent).
    static func claims(of jws: String) -> [String: Any]? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3,
            let bytes = try? Base64.decode(
                string: String(parts[1]), options: [.base64UrlAlphabet, .omitPaddingCharacter])
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }
}
