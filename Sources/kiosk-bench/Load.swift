import AsyncHTTPClient
import Foundation
import Hummingbird
import KioskHTTPClient
import KioskProtocol
import KioskSigning
import KioskTestSupport
import KioskTesting
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Throughput and latency of one request kind under concurrent load.
struct LoadResult {
    var requestsPerSecond: Double
    var p50Milliseconds: Double
    var p99Milliseconds: Double
}

/// Keeps `concurrency` requests in flight for about `seconds` and measures each one's latency.
func load(seconds: Double, concurrency: Int, _ request: @escaping @Sendable () async throws -> Void) async throws
    -> LoadResult
{
    try await load(seconds: seconds, concurrency: concurrency) { () async throws -> Bool in
        try await request()
        return true
    }
}

/// Sends a request for each of `items` once, `concurrency` at a time, until they run out or `seconds` pass, and
/// measures each one's latency.
func load<Item: Sendable>(
    each items: [Item], seconds: Double, concurrency: Int, _ request: @escaping @Sendable (Item) async throws -> Void
) async throws -> LoadResult {
    let next = NextIndex()
    return try await load(seconds: seconds, concurrency: concurrency) { () async throws -> Bool in
        let index = next.index.withLock { index in
            defer { index += 1 }
            return index
        }
        guard items.indices.contains(index) else { return false }
        try await request(items[index])
        return true
    }
}

/// The index of the next item to send, shared by the workers of `load(each:…)`.
private final class NextIndex: Sendable {
    let index = Mutex(0)
}

/// The loop of both: each of `concurrency` workers sends requests until the deadline or until `request` answers
/// false, which sends nothing and is not measured.
private func load(seconds: Double, concurrency: Int, _ request: @escaping @Sendable () async throws -> Bool)
    async throws -> LoadResult
{
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int(seconds * 1000))
    let start = clock.now
    let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var measured: [Duration] = []
                while clock.now < deadline {
                    let began = clock.now
                    guard try await request() else { break }
                    measured.append(clock.now - began)
                }
                return measured
            }
        }
        return try await group.reduce(into: [Duration]()) { $0 += $1 }
    }
    return LoadResult(latencies: latencies, elapsed: clock.now - start)
}

extension LoadResult {
    /// The rate and percentiles of requests that took `latencies`, all within `elapsed`.
    init(latencies unsorted: [Duration], elapsed: Duration) {
        let latencies = unsorted.sorted()
        func milliseconds(_ duration: Duration) -> Double { duration.inSeconds * 1000 }
        func percentile(_ fraction: Double) -> Double {
            latencies.isEmpty
                ? 0 : milliseconds(latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))])
        }
        self.init(
            requestsPerSecond: Double(latencies.count) / max(milliseconds(elapsed) / 1000, 0.001),
            p50Milliseconds: percentile(0.50), p99Milliseconds: percentile(0.99))
    }
}

func report(_ name: String, _ measured: LoadResult, baselineName: String, _ baseline: LoadResult) {
    func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
    emit(
        pad(name, 52)
            + pad(String(format: "%.0f/s p99 %.2f ms", measured.requestsPerSecond, measured.p99Milliseconds), 24)
            + " vs " + pad(baselineName, 16)
            + pad(String(format: "%.0f/s p99 %.2f ms", baseline.requestsPerSecond, baseline.p99Milliseconds), 24)
            + String(
                format: "  ratio %.3f, p99 ×%.1f", measured.requestsPerSecond / baseline.requestsPerSecond,
                measured.p99Milliseconds / max(baseline.p99Milliseconds, 0.001)))
}

/// A bare Hummingbird server on loopback answering `GET /json` with a fixed JSON body of `bodySize` bytes: the
/// cheapest JSON answer the framework can give, the baseline for the store's endpoints.
func withBareJSONServer<T>(bodySize: Int, _ body: (String) async throws -> T) async throws -> T {
    let text = "{\"signedTransactionInfo\":\"" + String(repeating: "a", count: max(0, bodySize - 28)) + "\"}"
    let bytes = ByteBuffer(string: text)
    let router = Router()
    router.get("json") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: bytes))
    }
    var logger = Logger(label: "kiosk-bench-bare")
    logger.logLevel = .error
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let application = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
    let services = ServiceGroup(
        configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { fatalError("the bare server did not start") }
        let result = try await body("http://127.0.0.1:\(port)/json")
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
        return result
    }
}

/// `GET url`, expecting 200.
func get(_ url: String, headers: [(String, String)] = []) async throws {
    let answer = try await JSONHTTPClient(http: .shared).send(
        .GET, url, headers: HTTPHeaders(headers), timeout: .seconds(30), limit: 1 << 20)
    precondition(answer.status == .ok, "GET \(url) answered \(answer.status)")
}

/// `POST url` with a JSON body, returning the body.
func post(_ url: String, json: Data) async throws -> Data {
    let answer = try await JSONHTTPClient(http: .shared).send(
        .POST, url, json: json, timeout: .seconds(30), limit: 1 << 20)
    precondition(answer.status == .ok, "POST \(url) answered \(answer.status)")
    return answer.body
}

/// What the verification sections send: an app receipt for verifyReceipt, and a transaction with a Server API
/// token to read it back.
struct VerificationFixture {
    var verifyReceiptURL: String
    /// `{"receipt-data": …}`.
    var verifyReceiptBody: String
    var transactionInfoURL: String
    var bearer: String
    var signedTransaction: String
    private var store: TestStore
    private var sessionToken: String

    /// Buys a non-consumable as a tester of `store` and makes an In-App Purchase key for it.
    init(_ store: TestStore) async throws {
        let token = try await store.openShop(
            bundleId: "com.example.verify", productId: "com.example.unlock", type: "non_consumable")
        let bought = try await store.request(
            .POST, "/sandbox/storekit/v1/payments",
            json: ["productId": "com.example.unlock", "quantity": 1, "idempotencyKey": UUID().uuidString],
            token: .some(token))
        guard let transaction = bought.json["transaction"] as? [String: Any],
            let transactionId = transaction["transactionId"] as? String,
            let signedTransaction = transaction["signedTransaction"] as? String
        else { fatalError("purchase failed: \(bought.text)") }
        let key = try await store.request(.POST, AdminRoutes.keys.path("com.example.verify"), json: ["name": "bench"])
        guard let keyId = key.json["keyId"] as? String, let issuerId = key.json["issuerId"] as? String,
            let privateKey = key.json["privateKey"] as? String
        else { fatalError("no key: \(key.text)") }
        bearer = try ServerAPIToken.sign(
            keyId: keyId, issuerId: issuerId, bundleId: "com.example.verify", privateKeyPEM: privateKey,
            expiresAt: Date() + 3000)
        verifyReceiptURL = store.baseURL + "/sandbox/verifyReceipt"
        verifyReceiptBody = try await Self.verifyReceiptBody(store, token: token)
        transactionInfoURL = store.baseURL + "/sandbox/inApps/v1/transactions/\(transactionId)"
        self.signedTransaction = signedTransaction
        self.store = store
        sessionToken = token
    }

    /// `count` verifyReceipt bodies, each of a receipt fetched anew (signed at another instant, so no two are the
    /// same bytes): what the store has never verified.
    func freshVerifyReceiptBodies(count: Int) async throws -> [String] {
        var bodies: [String] = []
        bodies.reserveCapacity(count)
        for _ in 0..<count { bodies.append(try await Self.verifyReceiptBody(store, token: sessionToken)) }
        return bodies
    }

    /// `{"receipt-data": …}` of the app receipt the store signs for the session `token` now.
    private static func verifyReceiptBody(_ store: TestStore, token: String) async throws -> String {
        let receipt = try await store.request(.GET, "/sandbox/storekit/v1/receipt", token: .some(token))
        guard let receiptData = receipt.json["receipt"] as? String else {
            throw BenchSetupFailed(description: "The store answered no receipt: \(receipt.text)")
        }
        return String(
            decoding: try JSONSerialization.data(withJSONObject: ["receipt-data": receiptData]), as: UTF8.self)
    }
}

/// A step that prepares a benchmark got an answer it cannot go on with.
struct BenchSetupFailed: Error, CustomStringConvertible {
    var description: String
}

extension TestStore {
    /// An app with one product on sale in the sandbox and a signed-in tester; returns the session token.
    func openShop(bundleId: String, productId: String, type: String) async throws -> String {
        _ = try await request(.POST, AdminRoutes.apps.path(), json: ["bundleId": bundleId, "name": "Bench"])
        _ = try await request(
            .POST, AdminRoutes.products.path(bundleId),
            json: [
                "productId": productId, "type": type, "referenceName": "Bench", "pricing": ["tier": 1],
                "localizations": [["locale": "en_US", "displayName": "Bench", "description": "A benchmark product"]],
            ])
        _ = try await request(.POST, AdminRoutes.acceptPaidAppsAgreement.path(), json: SampleAgreement.json)
        let email = "bench-\(bundleId)@example.com"
        _ = try await request(.POST, AdminRoutes.testers.path(), json: ["email": email, "password": "bench password"])
        let signIn = try await request(
            .POST, "/sandbox/storekit/v1/sessions",
            json: ["email": email, "password": "bench password", "bundleId": bundleId, "deviceId": UUID().uuidString])
        guard let token = signIn.json["sessionToken"] as? String else { fatalError("sign-in failed: \(signIn.text)") }
        return token
    }
}

extension VerifyReceiptResponse {
    /// A valid answer listing `purchases` purchases, the last an auto-renewable subscription with its renewal info
    /// and a 6 KB `latest_receipt`.
    static func benchSample(purchases: Int) -> VerifyReceiptResponse {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let inApp = (0..<purchases).map { index in
            let id = String(2_000_000_000_000_000 + index)
            let subscription = index == purchases - 1
            return ReceiptTransactionInfo(
                quantity: "1", productId: subscription ? "com.example.monthly" : "com.example.item\(index)",
                transactionId: id, originalTransactionId: id, isTrialPeriod: "false", inAppOwnershipType: "PURCHASED",
                purchaseDate: now - Double(index) * 3_600, originalPurchaseDate: now - Double(index) * 3_600,
                expiresDate: subscription ? now + 30 * 86_400 : nil, isInIntroOfferPeriod: subscription ? "false" : nil,
                webOrderLineItemId: subscription ? id : nil,
                subscriptionGroupIdentifier: subscription ? "21000001" : nil)
        }
        let receipt = AppReceiptInfo(
            receiptType: "ProductionSandbox", adamId: 0, appItemId: 0, bundleId: "com.example.verify",
            applicationVersion: "1.0", downloadId: 0, versionExternalIdentifier: 0, originalApplicationVersion: "1.0",
            receiptCreationDate: now, requestDate: now, originalPurchaseDate: now - 86_400 * 365, expirationDate: nil,
            inApp: inApp)
        let renewal = PendingRenewalInfo(
            autoRenewProductId: "com.example.monthly", productId: "com.example.monthly",
            originalTransactionId: inApp[purchases - 1].originalTransactionId, autoRenewStatus: "1",
            isInBillingRetryPeriod: nil, expirationIntent: nil, priceConsentStatus: nil, gracePeriodExpiresDate: nil)
        return VerifyReceiptResponse(
            status: 0, environment: "Sandbox", receipt: receipt, latestReceiptInfo: inApp,
            pendingRenewalInfo: [renewal], latestReceipt: String(repeating: "MIIT+/ab", count: 800),
            message: "The receipt is valid.")
    }
}
