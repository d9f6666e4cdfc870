import Crypto
import Foundation
import KioskCore
import KioskMerchant
import KioskProtocol
import KioskTesting
import Testing

/// Product lists with HTTP caching, downloadable content, binding without a token, and subscriptions over time.
@Suite struct MerchantCatalogTests {
    /// `products_v1.json` is the seed's array of ids; `products_v2.json` adds what each grants. Both carry an
    /// ETag and Last-Modified, and a client with a current copy gets 304 either way.
    @Test func productListsAreVersionedAndCacheable() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let path = MerchantPaths.productList(bundleId: MerchantShop.bundleId, version: 1)
                let first = try await merchant.request(.GET, path)
                try MerchantShop.expect(200, first)
                let ids = try JSONDecoder().decode([String].self, from: first.body)
                #expect(ids == MerchantShop.products.map(\.productId))
                let etag = try #require(first.header("ETag"))
                let lastModified = try #require(first.header("Last-Modified"))

                let byTag = try await merchant.request(.GET, path, headers: ["If-None-Match": etag])
                #expect(byTag.status == 304 && byTag.body.isEmpty)
                let byDate = try await merchant.request(.GET, path, headers: ["If-Modified-Since": lastModified])
                #expect(byDate.status == 304)
                let stale = try await merchant.request(.GET, path, headers: ["If-None-Match": "\"old\""])
                #expect(stale.status == 200)
                let older = try await merchant.request(
                    .GET, path, headers: ["If-Modified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"])
                #expect(older.status == 200)

                let v2 = try await merchant.request(
                    .GET, MerchantPaths.productList(bundleId: MerchantShop.bundleId, version: 2))
                let list = try v2.decode(MerchantProductList.self)
                #expect(list.products.map(\.productId) == ids)
                let coins = try #require(list.products.first)
                #expect(coins.type == "consumable" && coins.balance == "coins" && coins.amount == 100)
                #expect(list.products.first { $0.productId == MerchantShop.levels }?.hasContent == true)
                #expect(v2.header("ETag") != etag)

                let v3 = try await merchant.request(
                    .GET, MerchantPaths.productList(bundleId: MerchantShop.bundleId, version: 3))
                expectRefused(v3, 404, "unknown_product_list", field: "path")
                #expect(v3.text.contains("products_v1.json"), "the fix names the lists there are: \(v3.text)")
                let unknown = try await merchant.request(
                    .GET, MerchantPaths.productList(bundleId: "com.example.nope", version: 1))
                expectRefused(unknown, 404, "unknown_app", field: "bundleId")
            }
        }
    }

    /// After the level pack is granted, its owner lists its files and downloads them through signed URLs; a
    /// user who does not own it, a tampered URL and a path outside the pack are refused.
    @Test func contentDownloadsNeedAGrantAndASignedURL() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let content = MerchantPaths.content(productId: MerchantShop.levels)
                let before = try await merchant.request(.GET, content, token: merchant.userToken("alice"))
                expectRefused(before, 403, "not_entitled", field: "productId")

                let device = try await shop.device()
                let order = try await merchant.order(MerchantShop.levels, for: "alice")
                let levels = try await shop.buy(MerchantShop.levels, token: order.appAccountToken, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(levels.jwsRepresentation, for: "alice"))
                await device.close()

                let listed = try await merchant.request(.GET, content, token: merchant.userToken("alice"))
                let files = try listed.decode(MerchantContent.self).files
                #expect(files.map(\.name) == ["pack/level-01.json", "pack/level-02.json"])
                for file in files {
                    let download = try await merchant.get(file.url)
                    #expect(download.status == 200)
                    #expect(SHA256.hash(data: download.body).map { String(format: "%02x", $0) }.joined() == file.sha256)
                    #expect(Int64(download.body.count) == file.size)
                }
                let url = try #require(files.first?.url)
                let tampered = try await merchant.get(url.replacingOccurrences(of: "signature=", with: "signature=x"))
                expectRefused(tampered, 403, "invalid_download_url", field: "signature")
                // The signature covers the path: another path under the same signature is refused as tampered.
                let escape = try await merchant.get(
                    url.replacingOccurrences(of: "pack/level-01.json", with: "../levels/pack/level-01.json"))
                expectRefused(escape, 403, "invalid_download_url", field: "signature")
                let bob = try await merchant.request(.GET, content, token: merchant.userToken("bob"))
                expectRefused(bob, 403, "not_entitled", field: "productId")
            }
        }
    }

    /// A transaction redelivered without its token (as at Apple, `applicationUsername` came back nil) is bound to
    /// the order the app kept beside its id.
    @Test(arguments: TestDatabaseEngine.available)
    func transactionWithoutTokenIsBoundByTheKeptOrderId(engine: TestDatabaseEngine) async throws {
        try await MerchantShop.with(engine) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let order = try await merchant.order(MerchantShop.coins, quantity: 2, for: "alice")
                let device = try await shop.device()
                let transaction = try await shop.buy(MerchantShop.coins, quantity: 2, token: nil, on: device)
                await device.close()
                let answer = try await merchant.deliver(
                    transaction.jwsRepresentation, orderId: order.orderId, for: "alice")
                let delivery = try #require(try answer.decode(MerchantDeliveryResponse.self).deliveries.first)
                #expect(delivery.outcome == "granted" && delivery.orderId == order.orderId)
                let stored = try await merchant.request(
                    .GET, MerchantPaths.order(order.orderId), token: merchant.userToken("alice"))
                #expect(try stored.decode(MerchantOrder.self).transactionId == String(transaction.id))
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 200)
            }
        }
    }

    /// A purchase whose order was made for another product is still the paying user's: granted, without taking
    /// the order, which stays open for its own product.
    @Test func aPurchaseWithAnotherProductsOrderIsStillTheUsers() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let order = try await merchant.order(MerchantShop.removeAds, for: "alice")
                let device = try await shop.device()
                let coins = try await shop.buy(MerchantShop.coins, token: order.appAccountToken, on: device)
                await device.close()
                let answer = try await merchant.deliver(coins.jwsRepresentation, orderId: order.orderId, for: "alice")
                let delivery = try #require(try answer.decode(MerchantDeliveryResponse.self).deliveries.first)
                #expect(delivery.outcome == "granted" && delivery.orderId == nil)
                let stored = try await merchant.request(
                    .GET, MerchantPaths.order(order.orderId), token: merchant.userToken("alice"))
                #expect(try stored.decode(MerchantOrder.self).state == "open")
                #expect(try await merchant.entitlements(of: "alice").balance("coins") == 100)
            }
        }
    }

    /// Non-renewing season passes stack: two purchases entitle for two durations from the first.
    @Test func nonRenewingPurchasesStack() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.withMerchant(receivesNotifications: false) { merchant in
                let device = try await shop.device()
                let first = try await shop.buy(MerchantShop.season, token: nil, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(first.jwsRepresentation, for: "alice"))
                await first.finish()
                let second = try await shop.buy(MerchantShop.season, token: nil, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(second.jwsRepresentation, for: "alice"))
                await second.finish()
                await device.close()
                let season = try #require(try await merchant.entitlements(of: "alice").entitlement("season"))
                #expect(season.active && season.transactionId == String(second.id))
                // Answers carry whole seconds (ISO 8601 without fractions).
                let expected = first.purchaseDate.addingTimeInterval(60 * 86_400)
                #expect(abs(try #require(season.expiresDate).timeIntervalSince(expected)) < 1)
            }
        }
    }

    /// A subscription's renewal reaches the merchant (DID_RENEW) and moves the entitlement to the new period;
    /// `explain` says which transaction renewed it and that it renews automatically.
    @Test func renewalsExtendTheEntitlement() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            try await shop.changeSandboxClock(["action": "freeze"])  // the period ends only when the test says
            try await shop.withMerchant { merchant in
                let order = try await merchant.order(MerchantShop.monthly, for: "alice")
                let device = try await shop.device()
                let first = try await shop.buy(MerchantShop.monthly, token: order.appAccountToken, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(first.jwsRepresentation, for: "alice"))
                await first.finish()
                await device.close()
                let before = try #require(try await merchant.entitlements(of: "alice").entitlement("pro"))
                #expect(before.active && before.transactionId == String(first.id))

                let month = try await shop.advanceSandboxClock(by: "5m")  // one sandbox month
                #expect(month.renewed == 1, "\(month)")
                let after = try await merchant.waitForEntitlements(of: "alice") {
                    $0.entitlement("pro")?.transactionId != String(first.id)
                }
                let pro = try #require(after.entitlement("pro"))
                #expect(pro.active && pro.willAutoRenew == true)
                #expect(try #require(pro.expiresDate) > (try #require(before.expiresDate)))
                let lines = try await merchant.explain("alice").lines
                #expect(
                    lines.contains {
                        $0.contains("transaction \(pro.transactionId)") && $0.contains("renewed on")
                            && $0.contains("renews automatically")
                    },
                    "\(lines)")
            }
        }
    }

    /// The levels of one subscription group unlock one entitlement, which shows the best level held: a basic
    /// (level 2) subscriber has `pro` at level 2; after upgrading to the monthly club (level 1), at level 1, and
    /// `explain` says so.
    @Test func oneEntitlementPerGroupShowsTheLevelHeld() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            let basic = "com.example.shop.basic"
            try MerchantShop.expect(
                201,
                try await shop.store.request(
                    .POST, "/admin/v1/apps/\(MerchantShop.bundleId)/products",
                    json: [
                        "productId": basic, "type": "auto_renewable", "referenceName": "Basic", "pricing": ["tier": 1],
                        "subscription": ["group": "Club", "level": 2], "duration": "P1M",
                        "localizations": [["locale": "en_US", "displayName": "Basic", "description": "The basics"]],
                    ]))
            let levels = { @Sendable (configuration: inout MerchantConfiguration) in
                configuration.apps[0].products =
                    configuration.apps[0].products.map { product in
                        var product = product
                        if product.productId == MerchantShop.monthly { product.level = 1 }
                        return product
                    } + [.init(productId: basic, type: .autoRenewable, entitlement: "pro", level: 2)]
            }
            try await shop.withMerchant(configure: levels) { merchant in
                let device = try await shop.device()
                let first = try await shop.buy(basic, token: nil, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(first.jwsRepresentation, for: "alice"))
                await first.finish()
                let atTwo = try #require(try await merchant.entitlements(of: "alice").entitlement("pro"))
                #expect(atTwo.active && atTwo.level == 2, "\(atTwo)")

                let upgrade = try await shop.buy(MerchantShop.monthly, token: nil, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(upgrade.jwsRepresentation, for: "alice"))
                await upgrade.finish()
                await device.close()
                let atOne = try #require(try await merchant.entitlements(of: "alice").entitlement("pro"))
                #expect(atOne.active && atOne.level == 1, "\(atOne)")
                #expect(Set(atOne.productIds) == [basic, MerchantShop.monthly], "\(atOne)")
                let lines = try await merchant.explain("alice").lines
                #expect(lines.contains { $0.hasPrefix("entitled to pro at level 1 until ") }, "\(lines)")
            }
        }
    }

    /// A failed renewal in a billing grace period keeps the entitlement past its period (the renewal info says
    /// until when); when billing recovers, the recovered renewal decides it. The sandbox clock stands still except
    /// when the test moves it, and the merchant's clock follows it.
    @Test func billingGracePeriodKeepsTheEntitlementUntilBillingRecovers() async throws {
        try await MerchantShop.with(.sqlite) { shop in
            let frozen = try await shop.changeSandboxClock(["action": "freeze"])
            let clock = ManualClock(Date(millisecondsSince1970: frozen.now))
            try await shop.withMerchant(clock: clock) { merchant in
                try MerchantShop.expect(
                    200,
                    try await shop.store.request(
                        .PUT, "/sandbox/test/v1/apps/\(MerchantShop.bundleId)/grace-period", json: ["days": 3],
                        token: .some(shop.store.adminToken)))
                let order = try await merchant.order(MerchantShop.monthly, for: "alice")
                let device = try await shop.device()
                let club = try await shop.buy(MerchantShop.monthly, token: order.appAccountToken, on: device)
                try MerchantShop.expect(200, try await merchant.deliver(club.jwsRepresentation, for: "alice"))
                await club.finish()
                await device.close()
                try MerchantShop.expect(
                    200,
                    try await shop.store.request(
                        .POST, "/sandbox/test/v1/apps/\(MerchantShop.bundleId)/subscriptions/\(club.originalID)",
                        json: ["action": "fail-renewal"], token: .some(shop.store.adminToken)))

                // One sandbox month: the renewal fails and the grace period begins (3 days: 30 s in the sandbox);
                // billing is first retried a day (10 s) later. Five seconds on, the period is over, the retry not due.
                let failed = try await shop.advanceSandboxClock(by: "5m")
                #expect(failed.billingRetries == 1 && failed.renewed == 0, "\(failed)")
                let inGrace = try await merchant.waitForEntitlements(of: "alice") {
                    $0.entitlement("pro")?.gracePeriodExpiresDate != nil
                }
                let pastThePeriod = try await shop.advanceSandboxClock(by: "5s")
                #expect(pastThePeriod.billingRetries == 0 && pastThePeriod.recovered == 0, "\(pastThePeriod)")
                clock.set(Date(millisecondsSince1970: pastThePeriod.now))
                let pro = try #require(try await merchant.entitlements(of: "alice").entitlement("pro"))
                #expect(pro.active, "past its period but in the grace period: \(pro)")
                let periodEnd = try #require(pro.expiresDate)
                let graceEnd = try #require(pro.gracePeriodExpiresDate)
                #expect(periodEnd < clock.now() && clock.now() < graceEnd, "\(pro)")
                let lines = try await merchant.explain("alice").lines
                #expect(lines.contains { $0.contains("billing grace period") }, "\(lines)")

                // The retry succeeds (only one renewal was set to fail): BILLING_RECOVERY's renewal now decides the
                // entitlement, with no grace period left, past the grace period's end.
                let announcedGraceEnd = try #require(inGrace.entitlement("pro")?.gracePeriodExpiresDate)
                let recovery = try await shop.changeSandboxClock([
                    "action": "set", "to": announcedGraceEnd.addingTimeInterval(60).millisecondsSince1970,
                ])
                #expect(recovery.recovered == 1 && recovery.gracePeriodsExpired == 0, "\(recovery)")
                clock.set(Date(millisecondsSince1970: recovery.now))
                let recovered = try await merchant.waitForEntitlements(of: "alice") {
                    $0.entitlement("pro")?.gracePeriodExpiresDate == nil
                }
                let renewed = try #require(recovered.entitlement("pro"))
                #expect(renewed.active && renewed.transactionId != String(club.id), "\(renewed)")
                #expect(try #require(renewed.expiresDate) > clock.now(), "\(renewed)")
            }
        }
    }
}

extension TestMerchant {
    /// GETs an absolute URL this merchant handed out (download URLs need no token).
    func get(_ url: String) async throws -> TestStore.Answer {
        try #require(url.hasPrefix(baseURL), "\(url) is not on \(baseURL)")
        return try await request(.GET, String(url.dropFirst(baseURL.count)))
    }
}
