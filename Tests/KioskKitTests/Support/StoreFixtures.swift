import Foundation
import KioskProtocol
import KioskTestSupport
import KioskTesting
import Testing
import X509

@testable import KioskKit

/// A real store with the shop's catalog, and devices (KioskKit clients) talking to it.
struct ShopStore: Sendable {
    static let bundleId = "com.example.shop"
    static let coins = "com.example.shop.coins"
    static let removeAds = "com.example.shop.remove_ads"
    static let tester = "tester@example.com"
    static let password = "correct horse battery"

    let store: TestStore
    let root: Certificate

    /// Runs `body` against a fresh store holding the app, coins (consumable), remove-ads (non-consumable), the
    /// Paid Apps agreement and a sandbox tester with `testerSettings`.
    static func with(
        _ engine: TestDatabaseEngine = .sqlite, testerSettings: [String: Any] = [:],
        _ body: @Sendable (ShopStore) async throws -> Void
    ) async throws {
        let settings = try JSONSerialization.data(withJSONObject: testerSettings)
        try await withTestStore(engine: engine) { store in
            try await expectCreated(
                store.request(.POST, "/admin/v1/apps", json: ["bundleId": bundleId, "name": "Shop"]))
            for (productId, type) in [(coins, "consumable"), (removeAds, "non_consumable")] {
                try await expectCreated(
                    store.request(
                        .POST, "/admin/v1/apps/\(bundleId)/products",
                        json: [
                            "productId": productId, "type": type, "referenceName": productId, "pricing": ["tier": 1],
                            "localizations": [
                                ["locale": "en_US", "displayName": "Coins", "description": "A pile of coins"]
                            ],
                        ]))
            }
            let agreement = try await store.request(
                .POST, "/admin/v1/agreements/paid-apps/accept", json: SampleAgreement.json)
            #expect(agreement.status == 200, "\(agreement.text)")
            var tester: [String: Any] = ["email": tester, "password": password, "storefront": "USA"]
            tester.merge(try JSONSerialization.jsonObject(with: settings) as? [String: Any] ?? [:]) { $1 }
            try await expectCreated(store.request(.POST, "/admin/v1/testers", json: tester))
            let pem = try await store.request(.GET, "/admin/v1/certificates/sandbox/root?format=pem").text
            try await body(ShopStore(store: store, root: try Certificate(pemEncoded: pem)))
        }
    }

    private static func expectCreated(_ answer: TestStore.Answer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == 201, "\(answer.text)", sourceLocation: sourceLocation)
    }

    /// A device: a client on its own state directory (reuse `directory` to relaunch the same device).
    func device(
        directory: URL = Fixtures.temporaryDirectory(), deviceId: UUID = UUID(), roots: [Certificate]? = nil
    ) throws -> KioskStoreClient {
        try KioskStoreClient(
            configuration: KioskStoreClient.Configuration(
                serverURL: URL(string: store.baseURL)!, environment: .sandbox, bundleId: Self.bundleId,
                deviceId: deviceId, stateDirectory: directory, trustedRoots: roots ?? [root],
                // The full suite runs hundreds of stores at once on two cores; a slow answer there is load, not
                // the behaviour under test.
                retryDelayMaximum: .milliseconds(500), requestTimeout: .seconds(120)))
    }

    /// A signed-in device.
    func signedInDevice(directory: URL = Fixtures.temporaryDirectory(), roots: [Certificate]? = nil) async throws
        -> KioskStoreClient
    {
        let client = try device(directory: directory, roots: roots)
        do {
            try await client.signIn(email: Self.tester, password: Self.password)
        } catch {
            // An unclosed client's HTTP client traps when released: close it, then report the failure.
            await client.close()
            throw error
        }
        return client
    }

    /// The tester's transactions as the test controls see them (each charge once).
    func transactions() async throws -> [TestTransactionInfo] {
        try await store.request(
            .GET, "/sandbox/test/v1/apps/\(Self.bundleId)/transactions?tester=\(Self.tester)",
            token: .some(store.adminToken)
        ).decode(TestTransactionsResponse.self).transactions
    }

    /// Waits until the test controls show every transaction finished (finishes are sent in the background).
    func expectAllFinished(count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var listed: [TestTransactionInfo] = []
        while true {
            listed = try await transactions()
            if listed.count == count, listed.allSatisfy(\.finished) { return }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("expected \(count) finished transactions, got \(listed)", sourceLocation: sourceLocation)
    }

    /// The payments waiting for a parent's approval.
    func deferredPayments() async throws -> [TestPaymentInfo] {
        try await store.request(
            .GET, "/sandbox/test/v1/apps/\(Self.bundleId)/payments?state=deferred", token: .some(store.adminToken)
        )
        .decode(TestPaymentsResponse.self).payments
    }

    /// Buys a product for the tester as if started outside the app (`promoted`: on the App Store's page).
    func purchaseOutsideTheApp(_ productId: String, promoted: Bool) async throws {
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/apps/\(Self.bundleId)/purchases",
            body: try JSONEncoder().encode(
                TestPurchaseRequest(tester: Self.tester, productId: productId, promoted: promoted)),
            token: .some(store.adminToken), headers: ["Content-Type": "application/json"])
        #expect(answer.status == 201, "\(answer.text)")
    }

    /// Approves or declines a deferred payment.
    func decide(_ paymentId: UUID, approve: Bool) async throws {
        let answer = try await store.request(
            .POST, "/sandbox/test/v1/apps/\(Self.bundleId)/payments/\(paymentId)/\(approve ? "approve" : "decline")",
            token: .some(store.adminToken))
        #expect(answer.status == 200, "\(answer.text)")
    }
}

/// Hears an `SKProductsRequest`'s outcome.
final class RecordingProductsDelegate: SKProductsRequestDelegate, Sendable {
    let response = AsyncStream<Result<SKProductsResponse, SKError>>.makeStream()

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
        self.response.continuation.yield(.success(response))
    }

    func request(_ request: SKRequest, didFailWithError error: any Error) {
        response.continuation.yield(.failure(error as? SKError ?? SKError(.unknown)))
    }
}

/// Waits (60 s at most: the full suite is busy) until `condition` holds, looking every 20 ms and once more after the
/// deadline; records an issue if it never does. For what
/// a test can observe but not await: a client released, a finish acknowledged in the background.
func expectEventually(
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition(), ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(20))
    }
    #expect(condition(), "never happened: \(what)", sourceLocation: sourceLocation)
}

extension KioskStoreClient {
    /// Waits until the device answered every promoted purchase it holds and the store acknowledged their finishes:
    /// the device is then done with them.
    func expectPromotionsFinished(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await expectEventually("promoted purchases answered and finished", sourceLocation: sourceLocation) {
            paymentQueue.locked.withLock { $0.device.promotions.isEmpty && $0.device.pendingFinishes.isEmpty }
        }
    }
}
