import Foundation
import KioskCore
import KioskKit
import KioskMerchant
import KioskProtocol
import KioskSigning
import KioskTestSupport
import KioskTesting
import SQLKit
import Testing
import X509

/// A real store selling the shop's catalog, a real merchant beside it, and devices (KioskKit clients).
struct MerchantShop: Sendable {
    static let bundleId = "com.example.shop"
    static let coins = "com.example.shop.coins"
    static let removeAds = "com.example.shop.remove_ads"
    static let supporter = "com.example.shop.supporter"
    static let levels = "com.example.shop.levels"
    static let monthly = "com.example.shop.monthly"
    static let season = "com.example.shop.season"
    static let tester = "tester@example.com"
    static let password = "correct horse battery"

    /// What the merchant grants: 100 coins a unit; remove-ads and the supporter pack both give `no_ads`; the
    /// level pack unlocks `levels` with downloadable files; the monthly subscription gives `pro`; the season pass
    /// (non-renewing) gives `season` for 30 days a purchase.
    static let products: [MerchantConfiguration.ProductSettings] = [
        .init(productId: coins, type: .consumable, balance: "coins", amount: 100),
        .init(productId: removeAds, type: .nonConsumable, entitlement: "no_ads"),
        .init(productId: supporter, type: .nonConsumable, entitlement: "no_ads"),
        .init(productId: levels, type: .nonConsumable, entitlement: "levels", content: "content/levels"),
        .init(productId: monthly, type: .autoRenewable, entitlement: "pro"),
        .init(productId: season, type: .nonRenewing, entitlement: "season", durationDays: 30),
    ]

    let store: TestStore
    let root: Certificate
    let engine: TestDatabaseEngine

    /// Runs `body` against a fresh store holding the shop's app and products, the agreement and a tester.
    static func with(
        _ engine: TestDatabaseEngine, storeClock: any KioskClock = SystemClock(),
        _ body: @Sendable (MerchantShop) async throws -> Void
    ) async throws {
        try await withTestStore(engine: engine, clock: storeClock) { store in
            try await expect(201, store.request(.POST, "/admin/v1/apps", json: ["bundleId": bundleId, "name": "Shop"]))
            for (productId, type) in [
                (coins, "consumable"), (removeAds, "non_consumable"), (supporter, "non_consumable"),
                (levels, "non_consumable"), (season, "non_renewing"),
            ] {
                try await expect(
                    201,
                    store.request(
                        .POST, "/admin/v1/apps/\(bundleId)/products",
                        json: [
                            "productId": productId, "type": type, "referenceName": productId, "pricing": ["tier": 1],
                            "localizations": [["locale": "en_US", "displayName": productId, "description": "A thing"]],
                        ]))
            }
            try await expect(
                201,
                store.request(.POST, "/admin/v1/apps/\(bundleId)/subscription-groups", json: ["referenceName": "Club"]))
            try await expect(
                201,
                store.request(
                    .POST, "/admin/v1/apps/\(bundleId)/products",
                    json: [
                        "productId": monthly, "type": "auto_renewable", "referenceName": "Monthly",
                        "pricing": ["tier": 3],
                        "subscription": ["group": "Club", "level": 1], "duration": "P1M",
                        "localizations": [
                            ["locale": "en_US", "displayName": "Club", "description": "The monthly club"]
                        ],
                    ]))
            try await expect(
                200, store.request(.POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json))
            try await expect(
                201,
                store.request(
                    .POST, "/admin/v1/testers", json: ["email": tester, "password": password, "storefront": "USA"]))
            let pem = try await store.request(.GET, "/admin/v1/certificates/sandbox/root?format=pem").text
            try await body(MerchantShop(store: store, root: try Certificate(pemEncoded: pem), engine: engine))
        }
    }

    /// Runs `body` with a merchant for the shop, with the level pack's files: on `databaseURL` if given (nil:
    /// SQLite in `directory`), else on a fresh database of the store's engine, removed afterwards.
    func withMerchant(
        directory: URL? = nil, databaseURL: String?? = .none, port: TestStorePort = .ephemeral,
        clock: any KioskClock = SystemClock(), receivesNotifications: Bool = true,
        timeouts: HTTPTimeouts = HTTPTimeouts(),
        configure: @Sendable (inout MerchantConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestMerchant) async throws -> Void
    ) async throws {
        let folder =
            directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("merchant-\(UUID().uuidString)")
        defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
        let levels = folder.appendingPathComponent("content/levels/pack")
        try FileManager.default.createDirectory(at: levels, withIntermediateDirectories: true)
        try Data("{\"level\": 1}".utf8).write(to: levels.appendingPathComponent("level-01.json"))
        try Data("{\"level\": 2}".utf8).write(to: levels.appendingPathComponent("level-02.json"))
        func run(_ databaseURL: String?) async throws {
            try await withTestMerchant(
                store: store, bundleId: Self.bundleId, products: Self.products, directory: folder,
                databaseURL: databaseURL, clock: clock, port: port, receivesNotifications: receivesNotifications,
                timeouts: timeouts, configure: configure, body)
        }
        if let databaseURL {
            try await run(databaseURL)
        } else {
            try await engine.withFreshDatabase(run)
        }
    }

    /// A signed-in device (a KioskKit client with its own state).
    func device() async throws -> KioskStoreClient {
        let client = try KioskStoreClient(
            configuration: KioskStoreClient.Configuration(
                serverURL: URL(string: store.baseURL)!, environment: .sandbox, bundleId: Self.bundleId,
                deviceId: UUID(),
                stateDirectory: FileManager.default.temporaryDirectory.appendingPathComponent(
                    "device-\(UUID().uuidString)"),
                trustedRoots: [root], retryDelayMaximum: .milliseconds(500), requestTimeout: .seconds(120)))
        do {
            try await client.signIn(email: Self.tester, password: Self.password)
        } catch {
            await client.close()
            throw error
        }
        return client
    }

    /// Buys `productId` on `device` with StoreKit 2, passing the order's token; returns the signed transaction.
    func buy(_ productId: String, quantity: Int = 1, token: UUID?, on device: KioskStoreClient) async throws
        -> KitTransaction
    {
        let product = try #require(try await KitProduct.products(for: [productId], client: device).first)
        var options: Set<KitProduct.PurchaseOption> = quantity > 1 ? [.quantity(quantity)] : []
        if let token { options.insert(.appAccountToken(token)) }
        guard case .success(.verified(let transaction)) = try await product.purchase(options: options) else {
            throw ShopFailure("\(productId) was not bought")
        }
        return transaction
    }

    /// Runs a refund or revocation test control on a transaction.
    func control(_ transactionId: UInt64, _ action: String, _ body: [String: Any] = [:]) async throws {
        try await Self.expect(
            200,
            store.request(
                .POST, "/sandbox/test/v1/apps/\(Self.bundleId)/transactions/\(transactionId)/\(action)", json: body,
                token: .some(store.adminToken)))
    }

    /// Changes the sandbox clock (`["action": "freeze"]`, `advance` `by`, `set` `to`); answers after every
    /// subscription event due by the new time ran and its notifications were delivered, with how many ran.
    @discardableResult
    func changeSandboxClock(_ change: [String: Any]) async throws -> TestClockResponse {
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/clock", json: change, token: .some(store.adminToken))
        try Self.expect(200, answer)
        return try answer.decode(TestClockResponse.self)
    }

    /// Moves the sandbox clock forward by `amount` (`5m`, `3d`, …).
    @discardableResult
    func advanceSandboxClock(by amount: String) async throws -> TestClockResponse {
        try await changeSandboxClock(["action": "advance", "by": amount])
    }

    /// The sandbox clock's now.
    func sandboxNow() async throws -> Date {
        let answer = try await store.request(.GET, "/sandbox/test/v1/clock", token: .some(store.adminToken))
        return Date(millisecondsSince1970: try answer.decode(TestClockResponse.self).now)
    }

    /// The tester's app receipt, base64.
    func receipt() async throws -> String {
        let answer = try await store.request(
            .GET, "/sandbox/test/v1/apps/\(Self.bundleId)/receipt?tester=\(Self.tester)", token: .some(store.adminToken)
        )
        return try answer.decode(ReceiptResponse.self).receipt
    }

    static func expect(
        _ status: Int, _ answer: TestStore.Answer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(answer.status == status, "\(answer.text)", sourceLocation: sourceLocation)
        if answer.status != status { throw ShopFailure("expected \(status), got \(answer.status)") }
    }
}

extension TestMerchant {
    /// Creates an order for `userId`.
    func order(_ productId: String, quantity: Int = 1, for userId: String) async throws -> MerchantOrder {
        let answer = try await request(
            .POST, MerchantPaths.orders, json: ["productId": productId, "quantity": quantity], token: userToken(userId))
        try MerchantShop.expect(201, answer)
        return try answer.decode(MerchantOrder.self)
    }

    /// Sends a signed transaction for `userId`; returns the raw answer.
    func deliver(_ signedTransaction: String, orderId: String? = nil, for userId: String) async throws
        -> TestStore.Answer
    {
        var body: [String: Any] = ["signedTransaction": signedTransaction]
        if let orderId { body["orderId"] = orderId }
        return try await request(.POST, MerchantPaths.transactions, json: body, token: userToken(userId))
    }

    /// Reconciles the shop's sandbox transactions, repairing when `repair`.
    func reconcile(repair: Bool) async throws -> MerchantReconcileReport {
        let answer = try await request(
            .POST, MerchantPaths.adminReconcile, json: ["environment": "Sandbox", "repair": repair])
        try MerchantShop.expect(200, answer)
        return try answer.decode(MerchantReconcileReport.self)
    }

    func entitlements(of userId: String) async throws -> MerchantEntitlements {
        let answer = try await request(.GET, MerchantPaths.entitlements, token: userToken(userId))
        try MerchantShop.expect(200, answer)
        return try answer.decode(MerchantEntitlements.self)
    }

    func explain(_ userId: String) async throws -> MerchantExplanation {
        let answer = try await request(.GET, MerchantPaths.explain, token: userToken(userId))
        try MerchantShop.expect(200, answer)
        return try answer.decode(MerchantExplanation.self)
    }

    /// Waits (up to 60 s: the full suite is busy) until the user's entitlements satisfy `condition`.
    @discardableResult
    func waitForEntitlements(
        of userId: String, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: @Sendable (MerchantEntitlements) -> Bool
    ) async throws -> MerchantEntitlements {
        let deadline = ContinuousClock.now + .seconds(60)
        var last = try await entitlements(of: userId)
        while !condition(last), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            last = try await entitlements(of: userId)
        }
        #expect(condition(last), "entitlements never got there: \(last)", sourceLocation: sourceLocation)
        return last
    }

    /// Runs SQL on the merchant's ledger database: for tests that damage it on purpose.
    func execute(_ statement: String) async throws {
        try await built.database.withSession { session in try await session.run("\(unsafeRaw: statement)") }
    }
}

/// Expects a refusal as the API makes them: `status`, and `{"error": {...}}` with `code`, `field` (nil: the
/// refusal names none) and the `fix` every refusal carries.
func expectRefused(
    _ answer: TestStore.Answer, _ status: Int, _ code: String, field: String?,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let error = answer.json["error"] as? [String: Any]
    #expect(answer.status == status, "\(answer.text)", sourceLocation: sourceLocation)
    #expect(error?["code"] as? String == code, "\(answer.text)", sourceLocation: sourceLocation)
    #expect(error?["field"] as? String == field, "\(answer.text)", sourceLocation: sourceLocation)
    #expect(
        error?["fix"] as? String != nil, "every refusal says what to do: \(answer.text)",
        sourceLocation: sourceLocation)
}

/// A step of a test scenario failed (the expectation that says why is already recorded).
struct ShopFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
