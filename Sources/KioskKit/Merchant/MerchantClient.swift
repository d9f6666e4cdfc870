import AsyncHTTPClient
import Crypto
import Foundation
import KioskCore
import KioskHTTPClient
import KioskProtocol
import KioskSigning
import NIOCore
import NIOHTTP1
import Synchronization
import X509

/// The app's side of the merchant server (`kiosk merchant serve`, the seeds' "your server"): product ids, orders,
/// delivery of transactions, entitlements and downloadable content, over the routes of `MerchantPaths`.
///
/// ```swift
/// let merchant = try MerchantClient(baseURL: URL(string: "http://127.0.0.1:9090")!, userToken: token)
/// let ids = try await merchant.productIdentifiers(bundleId: "com.example.shop")   // then SKProductsRequest
/// let order = try await merchant.createOrder(productId: "com.example.shop.coins", quantity: 3)
/// // pay with applicationUsername = order.appAccountToken.uuidString; once `purchased`:
/// _ = try await merchant.deliver(signedTransaction: transaction.signedTransaction!, orderId: order.orderId)
/// // only now finish the transaction
/// await merchant.close()
/// ```
///
/// User routes send `Authorization: Bearer <userToken>`; product lists and downloads send none. Every failure is
/// a ``MerchantClientError``. Call ``close()`` before dropping a client.
public final class MerchantClient: Sendable {
    /// The merchant server, e.g. `http://127.0.0.1:9090`.
    public let baseURL: URL
    /// The signed-in user's token (what the developer's own sign-in handed the app); nil before sign-in.
    public let userToken: String?
    private let server: String
    private let http: HTTPClient
    private let requestTimeout: TimeAmount
    /// The last answer per product-list URL, for `If-None-Match` / `If-Modified-Since`.
    private let productListCache = Mutex<[String: CachedBody]>([:])
    /// How many product-list answers were 304 Not Modified and so read from the cache (for tests).
    let notModifiedAnswers = Mutex(0)

    private struct CachedBody: Sendable {
        var etag: String?
        var lastModified: String?
        var body: Data
    }

    /// A client of the merchant at `baseURL`, acting for the user `userToken` identifies. Each call gets
    /// `requestTimeout` for its whole answer; an `https` merchant's certificate may lead to `tlsTrustRoots` (the
    /// Kiosk TLS root) besides the system's roots.
    public init(
        baseURL: URL, userToken: String?, requestTimeout: Duration = .seconds(30), tlsTrustRoots: [Certificate] = []
    ) throws {
        self.baseURL = baseURL
        self.userToken = userToken
        var server = baseURL.absoluteString
        while server.hasSuffix("/") { server.removeLast() }
        self.server = server
        self.requestTimeout = TimeAmount(clamping: requestTimeout)
        self.http = try JSONHTTPClient.makeHTTPClient(
            trusting: tlsTrustRoots, readTimeout: self.requestTimeout, failFast: true)
    }

    /// Shuts the HTTP client down. The client is unusable after.
    public func close() async {
        try? await http.shutdown()
    }

    /// A client dropped without ``close()`` still shuts its HTTP client down (AsyncHTTPClient traps on a client
    /// released while running); after ``close()`` this does nothing.
    deinit {
        let http = self.http
        Task { try? await http.shutdown() }
    }

    // MARK: Product lists

    /// The app's product ids from `products_v1.json` (a JSON array, a server-hosted product list), to pass to an
    /// `SKProductsRequest`. Answers are cached in memory per URL: a repeated call sends `If-None-Match` /
    /// `If-Modified-Since` and a 304 returns the remembered list. Needs no user token.
    public func productIdentifiers(bundleId: String) async throws -> [String] {
        try decode(
            [String].self,
            from: await cachedGet(MerchantPaths.productList(bundleId: KioskRoute.escaped(bundleId), version: 1)))
    }

    /// `products_v2.json`: the product ids with what each one delivers; cached like ``productIdentifiers(bundleId:)``.
    public func productList(bundleId: String) async throws -> MerchantProductList {
        try decode(
            MerchantProductList.self,
            from: await cachedGet(MerchantPaths.productList(bundleId: KioskRoute.escaped(bundleId), version: 2)))
    }

    // MARK: Orders and delivery

    /// Creates an order for the user before paying. Pass its `appAccountToken` with the payment (as an SK1
    /// `applicationUsername`, `appAccountToken.uuidString`) and keep its `orderId` beside the transaction id
    /// until ``deliver(signedTransaction:orderId:)`` succeeded. `bundleId` is needed only when the merchant
    /// serves several apps.
    public func createOrder(productId: String, quantity: Int = 1, bundleId: String? = nil) async throws -> MerchantOrder
    {
        try await send(
            .POST, MerchantPaths.orders,
            body: MerchantOrderRequest(bundleId: bundleId, productId: productId, quantity: quantity))
    }

    /// The order `id`, with its state (`open` or `delivered`) and the transaction delivered for it.
    public func order(id: String) async throws -> MerchantOrder {
        try await send(.GET, MerchantPaths.order(KioskRoute.escaped(id)))
    }

    /// Sends a purchased transaction (`SKPaymentTransaction.signedTransaction`, StoreKit 2's
    /// `jwsRepresentation`) to the merchant, which verifies it and grants it exactly once. Finish the transaction
    /// only after this returns: the answer means it is durably delivered (a replay answers `already_granted`).
    public func deliver(signedTransaction: String, orderId: String?) async throws -> MerchantDeliveryResponse {
        try await send(
            .POST, MerchantPaths.transactions,
            body: MerchantDeliveryRequest(signedTransaction: signedTransaction, orderId: orderId))
    }

    /// Sends the app receipt (base64, as for `verifyReceipt`) instead of a signed transaction; the merchant
    /// validates it with the store and delivers every transaction in it.
    public func deliver(receiptData: String, orderId: String?) async throws -> MerchantDeliveryResponse {
        try await send(
            .POST, MerchantPaths.transactions, body: MerchantDeliveryRequest(receiptData: receiptData, orderId: orderId)
        )
    }

    // MARK: What the user owns

    /// Everything the user owns at the merchant (entitlements and balances): what a new device restores.
    public func entitlements() async throws -> MerchantEntitlements {
        try await send(.GET, MerchantPaths.entitlements)
    }

    /// Why the user has what they have, with the history that led there.
    public func explain() async throws -> MerchantExplanation {
        try await send(.GET, MerchantPaths.explain)
    }

    /// Spends `amount` of the balance `name` (coins the user bought). Make `idempotencyKey` once per spend and
    /// send the same key when retrying it: the merchant spends once. Fails with `insufficient_balance` (409)
    /// when the balance holds less.
    public func spend(_ amount: Int64, of name: String, idempotencyKey: String, reason: String? = nil) async throws
        -> MerchantSpendResponse
    {
        try await send(
            .POST, MerchantPaths.spend(balance: name),
            body: MerchantSpendRequest(amount: amount, idempotencyKey: idempotencyKey, reason: reason))
    }

    /// The downloadable files of a product the user owns, each with a signed URL.
    public func content(productId: String) async throws -> MerchantContent {
        try await send(.GET, MerchantPaths.content(productId: KioskRoute.escaped(productId)))
    }

    /// Downloads one file of ``content(productId:)`` from its signed URL (no bearer token) and checks its size
    /// and SHA-256.
    ///
    /// - Throws: ``MerchantClientError`` `checksum_mismatch` when the bytes are not the file's.
    public func download(_ file: MerchantContent.File) async throws -> Data {
        let url = file.url.contains("://") ? file.url : server + (file.url.hasPrefix("/") ? "" : "/") + file.url
        let data = try await perform(
            .GET, url: url, token: nil, limit: max(Int(clamping: file.size), 0).saturatingAdding(1)
        ).body
        let digest = SHA256.hash(data: data).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        guard data.count == file.size, digest == file.sha256.lowercased() else {
            throw MerchantClientError(
                code: "checksum_mismatch",
                message: "The download of \(file.name) is \(data.count) bytes with SHA-256 \(digest); the merchant "
                    + "listed \(file.size) bytes with SHA-256 \(file.sha256).",
                fix: "Download it again; if it keeps failing, the merchant's content changed since it was listed.")
        }
        return data
    }

    // MARK: HTTP

    /// GETs a product list with the cache's validators; on 304 returns the remembered body.
    private func cachedGet(_ path: String) async throws -> Data {
        let url = server + path
        let cached = productListCache.withLock { $0[url] }
        var headers = HTTPHeaders()
        if let etag = cached?.etag { headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = cached?.lastModified { headers.add(name: "If-Modified-Since", value: lastModified) }
        let answer = try await perform(.GET, url: url, token: nil, headers: headers, notModifiedIsOK: cached != nil)
        if answer.status == .notModified, let cached {
            notModifiedAnswers.withLock { $0 += 1 }
            return cached.body
        }
        let etag = answer.headers.first(name: "ETag")
        let lastModified = answer.headers.first(name: "Last-Modified")
        productListCache.withLock { cache in
            if etag != nil || lastModified != nil {
                cache[url] = CachedBody(etag: etag, lastModified: lastModified, body: answer.body)
            } else {
                cache[url] = nil
            }
        }
        return answer.body
    }

    /// A user route: JSON in, JSON out, with the bearer token.
    private func send<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, body: (some Encodable)? = Optional<Empty>.none
    ) async throws -> Answer {
        guard let userToken else {
            throw MerchantClientError(
                code: "no_user_token", message: "\(method) \(path) acts for a user, and this client has no user token.",
                fix: "Create the MerchantClient with the token your sign-in gave the user.")
        }
        var encoded: Data?
        if let body {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoded = try encoder.encode(body)
        }
        let answer = try await perform(method, url: server + path, token: userToken, body: encoded)
        return try decode(Answer.self, from: answer.body, what: "\(method) \(path)")
    }

    private func perform(
        _ method: HTTPMethod, url: String, token: String?, headers: HTTPHeaders = [:], body: Data? = nil,
        limit: Int = 16 << 20, notModifiedIsOK: Bool = false
    ) async throws -> JSONHTTPAnswer {
        let answer: JSONHTTPAnswer
        do {
            answer = try await JSONHTTPClient(http: http).send(
                method, url, bearer: token, headers: headers, json: body, timeout: requestTimeout, limit: limit)
        } catch {
            switch error {
            case .cancelled: throw CancellationError()
            case .untrustedCertificate(let cause):
                throw MerchantClientError(
                    code: "network",
                    message: "The merchant's TLS certificate at \(url) does not lead to a trusted root.",
                    fix: TLSTrust.untrustedFix, cause: cause)
            case .unreachable(let cause):
                throw MerchantClientError(
                    code: "network", message: "No answer from the merchant to \(method) \(url).",
                    fix: "Check the merchant's URL and that it is running.", cause: cause)
            }
        }
        let status = answer.status
        guard (200..<300).contains(status.code) || (notModifiedIsOK && status == .notModified) else {
            if let error = answer.kioskError {
                throw MerchantClientError(
                    status: Int(status.code), code: error.code, message: error.message, field: error.field,
                    fix: error.fix)
            }
            throw MerchantClientError(
                status: Int(status.code), code: "http_\(status.code)",
                message: "The merchant answered \(method) \(url) with \(status.code) \(status.reasonPhrase).")
        }
        return answer
    }

    private func decode<Value: Decodable>(_ type: Value.Type, from data: Data, what: String? = nil) throws -> Value {
        do {
            return try Self.decoder.decode(type, from: data)
        } catch {
            throw MerchantClientError(
                code: "invalid_response",
                message: "The merchant's answer\(what.map { " to \($0)" } ?? "") is not a \(Value.self).",
                cause: error)
        }
    }

    /// ISO 8601 dates, with or without fractional seconds.
    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
            if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(text) is not an ISO 8601 date.")
        }
        return decoder
    }

    /// A value made safe for one path segment.
    /// The body of requests that send none.
    private struct Empty: Encodable {}
}
