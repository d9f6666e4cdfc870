import Foundation
import KioskCore
import KioskMerchant
import KioskProtocol
import KioskTestSupport
import Logging
import NIOHTTP1

/// A real merchant server on 127.0.0.1, configured against a running test store, with its own ledger database.
///
/// ```swift
/// try await withTestStore { store in
///     // … create the app, its products, the agreement and a tester on the store …
///     try await withTestMerchant(store: store, bundleId: "com.example.shop", products: [
///         .init(productId: "com.example.shop.coins", type: .consumable, balance: "coins", amount: 100),
///     ]) { merchant in
///         let token = merchant.userToken("alice")
///         let order = try await merchant.request(.POST, "/merchant/v1/orders", json: ["productId": "…"], token: token)
///     }
/// }
/// ```
/// The store's app gets the merchant's notification URL (when `receivesNotifications`), a new In-App Purchase
/// key and a shared secret; the roots, the key and `merchant.json` go into `directory`.
public struct TestMerchant: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: String
    public let port: Int
    public let directory: URL
    public let built: BuiltMerchant

    /// The admin token of the merchant's admin routes.
    public var adminToken: String { built.service.configuration.raw.adminToken }

    /// A user token for `userId`, valid for a day.
    public func userToken(_ userId: String) -> String {
        built.tokens.issue(userId: userId, expiresAt: Date().addingTimeInterval(86_400))
    }

    /// Sends a request to the merchant; admin paths get the admin token unless `token` says otherwise.
    public func request(
        _ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, body: Data? = nil, token: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> TestStore.Answer {
        try await sendTestRequest(
            method, baseURL + path, json: json, body: body,
            bearer: token ?? (path.contains("/admin/") ? adminToken : nil), headers: headers)
    }
}

/// Runs `body` against a fresh merchant for `bundleId` on `store`, and always shuts it down.
///
/// - Parameters:
///   - products: what each product grants.
///   - directory: the merchant's folder (configuration, roots, key, SQLite ledger). Pass one that already holds
///     `merchant.json` to restart the same merchant on its same ledger; a folder passed in is kept.
///   - databaseURL: the ledger's database; nil for `merchant.sqlite` in `directory`. On PostgreSQL the merchant
///     holds a ``PostgresTestSlots`` slot (its test's, if the test holds one) and a small pool.
///   - port: `.ephemeral`, `.free` or `.fixed(n)` (a restart keeps its notification URL with the same port).
///   - receivesNotifications: point the app's notification URLs at this merchant.
///   - timeouts: how long the merchant waits on a client before closing the connection.
///   - configure: last changes to the configuration before it is saved.
public func withTestMerchant<T: Sendable>(
    store: TestStore, bundleId: String, products: [MerchantConfiguration.ProductSettings],
    directory: URL? = nil, databaseURL: String? = nil, clock: any KioskClock = SystemClock(),
    port: TestStorePort = .ephemeral, receivesNotifications: Bool = true, timeouts: HTTPTimeouts = HTTPTimeouts(),
    configure: @Sendable (inout MerchantConfiguration) -> Void = { _ in },
    _ body: @Sendable (TestMerchant) async throws -> T
) async throws -> T {
    try await withTestLoadSlot {
        try await withPostgresSlot(ifUsing: databaseURL) {
            try await runTestMerchant(
                store: store, bundleId: bundleId, products: products, directory: directory, databaseURL: databaseURL,
                clock: clock, port: port, receivesNotifications: receivesNotifications, timeouts: timeouts,
                configure: configure, body)
        }
    }
}

private func runTestMerchant<T: Sendable>(
    store: TestStore, bundleId: String, products: [MerchantConfiguration.ProductSettings], directory: URL?,
    databaseURL: String?, clock: any KioskClock, port: TestStorePort, receivesNotifications: Bool,
    timeouts: HTTPTimeouts, configure: @Sendable (inout MerchantConfiguration) -> Void,
    _ body: @Sendable (TestMerchant) async throws -> T
) async throws -> T {
    let folder =
        directory
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-merchant-\(UUID().uuidString)")
    defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
    let file = folder.appendingPathComponent("merchant.json")
    if !FileManager.default.fileExists(atPath: file.path) {
        var configuration = try await MerchantSetup.configuration(
            storeURL: store.baseURL, adminToken: store.adminToken, bundleId: bundleId, products: products,
            directory: folder)
        configure(&configuration)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(configuration).write(to: file, options: .atomic)
    }
    let loaded = try MerchantConfiguration.load(from: file.path)
    let database = databaseURL ?? "sqlite://\(folder.appendingPathComponent("merchant.sqlite").path)"
    var logger = Logger(label: "kiosk-test-merchant")
    logger.logLevel = .warning
    return try await withLoopbackServer(port: port, logger: logger, name: "merchant") { number, onServerRunning in
        let built = try await buildMerchant(
            configuration: loaded, databaseURL: database, databasePoolSize: PostgresTestSlots.ledgerPoolSize,
            host: "127.0.0.1", port: number, timeouts: timeouts, clock: clock,
            logger: logger, onServerRunning: onServerRunning)
        return (built, built.application)
    } _: { built, port in
        let merchant = TestMerchant(baseURL: "http://127.0.0.1:\(port)", port: port, directory: folder, built: built)
        if receivesNotifications {
            let url = merchant.baseURL + "/merchant/v1/notifications"
            let answer = try await store.request(
                .PATCH, AdminRoutes.app.path(bundleId),
                json: ["sandboxNotificationURLs": [url], "productionNotificationURLs": [url]])
            guard answer.status == 200 else {
                throw TestStoreError(message: "Setting the notification URL failed: \(answer.text)")
            }
        }
        return try await body(merchant)
    }
}
