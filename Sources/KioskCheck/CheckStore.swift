import AsyncHTTPClient
import Foundation
import KioskCore
import KioskHTTPClient
import KioskProtocol
import NIOHTTP1

/// The store's console API and sandbox test controls, as `kiosk check` uses them (admin token).
struct CheckStore: Sendable {
    let server: String
    let token: String
    let client: JSONHTTPClient
    let bundleId: String

    private var app: String { AdminRoutes.app.path(bundleId) }

    func appResource() async throws -> AppResource { try await call(.GET, app) }

    func updateApp(_ body: AppUpdateBody) async throws -> AppResource { try await call(.PATCH, app, body) }

    /// The app's one-time offer codes, redeemed or not.
    func offerCodes() async throws -> [OfferCodeResource] {
        let list: OfferCodeList = try await call(.GET, AdminRoutes.offerCodes.path(bundleId))
        return list.offerCodes
    }

    /// The same store acting on another app.
    func app(_ other: String) -> CheckStore {
        CheckStore(server: server, token: token, client: client, bundleId: other)
    }

    /// Creates the app if the store has none with this bundle id.
    func ensureApp(name: String) async throws {
        let answer = try await client.send(.GET, server + app, bearer: token, timeout: .seconds(60))
        guard answer.status == .notFound else { return }
        let _: AppResource = try await call(
            .POST, AdminRoutes.apps.path(), AppCreateBody(bundleId: bundleId, name: name))
    }

    /// Creates a consumable sold in the sandbox if the app has no product `productId`.
    func ensureConsumable(_ productId: String) async throws {
        guard try await !products().contains(where: { $0.productId == productId }) else { return }
        _ = try await send(
            .POST, AdminRoutes.products.path(bundleId),
            body: try JSONSerialization.data(withJSONObject: [
                "productId": productId, "type": "consumable", "referenceName": "kiosk check", "pricing": ["tier": 1],
                "localizations": [
                    ["locale": "en_US", "displayName": "Check coins", "description": "For kiosk check."]
                ],
            ]))
    }

    func products() async throws -> [ProductResource] {
        let list: ProductList = try await call(.GET, AdminRoutes.products.path(bundleId))
        return list.products
    }

    func createTester(email: String, password: String) async throws {
        let _: TesterResource = try await call(
            .POST, AdminRoutes.testers.path(),
            TesterBody(email: email, password: password, firstName: "Check", lastName: "Kiosk", storefront: "USA"))
    }

    /// How the tester's next charges end (`approve`, `decline`, `insufficient_funds`).
    func setPaymentOutcome(tester: String, _ outcome: String) async throws {
        _ = try await send(
            .PATCH, AdminRoutes.tester.path(tester), body: Data(#"{"paymentOutcome": "\#(outcome)"}"#.utf8))
    }

    func clock() async throws -> TestClockResponse { try await call(.GET, TestControlRoutes.clock.path()) }

    @discardableResult
    func clock(_ request: TestClockRequest) async throws -> TestClockResponse {
        try await call(.POST, TestControlRoutes.clock.path(), request)
    }

    func purchase(_ request: TestPurchaseRequest) async throws -> QueueEntry {
        try await call(.POST, TestControlRoutes.purchases.path(bundleId), request)
    }

    func transactions(tester: String) async throws -> [TestTransactionInfo] {
        let list: TestTransactionsResponse = try await call(
            .GET, TestControlRoutes.transactions.path(bundleId, query: ["tester": tester]))
        return list.transactions
    }

    func refund(_ transactionId: String, action: String, body: Data = Data("{}".utf8)) async throws {
        _ = try await send(.POST, TestControlRoutes.transactionAction.path(bundleId, transactionId, action), body: body)
    }

    func subscriptions(tester: String) async throws -> [TestSubscriptionInfo] {
        let list: TestSubscriptionsResponse = try await call(
            .GET, TestControlRoutes.subscriptions.path(bundleId, query: ["tester": tester]))
        return list.subscriptions
    }

    @discardableResult
    func subscription(_ originalTransactionId: String, _ request: TestSubscriptionRequest) async throws
        -> TestSubscriptionInfo
    {
        try await call(
            .POST, TestControlRoutes.subscription.path(bundleId, originalTransactionId), request)
    }

    func gracePeriod() async throws -> TestGracePeriod {
        try await call(.GET, TestControlRoutes.gracePeriod.path(bundleId))
    }

    @discardableResult
    func setGracePeriod(_ days: Int?) async throws -> TestGracePeriod {
        try await call(.PUT, TestControlRoutes.gracePeriod.path(bundleId), TestGracePeriod(days: days))
    }

    func notifications() async throws -> [TestNotificationInfo] {
        let list: TestNotificationsResponse = try await call(
            .GET, TestControlRoutes.notifications.path(bundleId, query: ["environment": "sandbox"]))
        return list.notifications
    }

    func receipt(tester: String) async throws -> String {
        let answer: ReceiptResponse = try await call(
            .GET, TestControlRoutes.receipt.path(bundleId, query: ["tester": tester]))
        return answer.receipt
    }

    /// A signed `TEST` notification for the app, as Apple's "Request a Test Notification" makes.
    func signedTestNotification() async throws -> String {
        struct Signed: Decodable { var signedPayload: String }
        let signed: Signed = try await call(.POST, "\(app)/signed-test-notification?environment=sandbox")
        return signed.signedPayload
    }

    /// What the app's server sent with Send Consumption Information for `transactionId`, nil before it did.
    func consumptionReport(_ transactionId: String) async throws -> TestConsumptionReport? {
        let path = TestControlRoutes.consumption.path(bundleId, transactionId)
        let answer = try await client.send(.GET, server + path, bearer: token, timeout: .seconds(60))
        if answer.status == .notFound { return nil }
        guard answer.isSuccess else { throw CheckError("The store answered GET \(path) with \(answer.status.code).") }
        return try Self.decoder.decode(TestConsumptionReport.self, from: answer.body)
    }

    /// A new In-App Purchase key of the app (its private key is answered only now).
    func createKey(name: String) async throws -> KeyResource {
        try await call(.POST, "\(app)/keys", KeyCreateBody(name: name))
    }

    /// Revokes a key the check made.
    func revokeKey(_ keyId: String) async throws {
        _ = try await send(.DELETE, AdminRoutes.key.path(bundleId, keyId), body: nil)
    }

    /// Keeps the verdict in the store for the console's Checks page.
    func record(_ report: CheckReport) async throws -> CheckRunSummary {
        try await call(.POST, AdminRoutes.recordCheckRun.path(bundleId), report)
    }

    // MARK: Sending

    private func call<Answer: Decodable>(_ method: HTTPMethod, _ path: String) async throws -> Answer {
        try Self.decoder.decode(Answer.self, from: try await send(method, path, body: nil))
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    private func call<Answer: Decodable>(_ method: HTTPMethod, _ path: String, _ body: some Encodable) async throws
        -> Answer
    {
        try Self.decoder.decode(Answer.self, from: try await send(method, path, body: try JSONEncoder().encode(body)))
    }

    private func send(_ method: HTTPMethod, _ path: String, body: Data?) async throws -> Data {
        let answer: JSONHTTPAnswer
        do {
            answer = try await client.send(
                method, server + path, bearer: token, json: body ?? (method == .POST ? Data("{}".utf8) : nil),
                timeout: .seconds(120))
        } catch {
            throw CheckError("The store at \(server) did not answer (\(error)). Start it with `kiosk serve`.")
        }
        guard answer.isSuccess else {
            let detail = answer.kioskError.map { "\($0.message)\($0.fix.map { " \($0)" } ?? "")" } ?? "no detail"
            throw CheckError("The store answered \(method) \(path) with \(answer.status.code): \(detail)")
        }
        return answer.body
    }
}
