import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol
import NIOCore

/// The merchant's HTTP routes (`MerchantPaths`).
struct MerchantController: Sendable {
    let service: MerchantService
    let tokens: UserTokens

    func addRoutes(to router: Router<MerchantRequestContext>) {
        let base = router.group(RouterPath(stringLiteral: String(MerchantPaths.base.dropFirst())))
        base.get("apps/:bundleId/:list", use: productList)
        base.group().add(middleware: BodyLimitMiddleware(MerchantBodyLimits.notification))
            .post("notifications", use: notification)
        base.get("content/:productId/files/**", use: download)

        let user = base.group().add(middleware: UserAuthMiddleware(tokens: tokens, clock: service.clock))
        user.post("orders", use: createOrder)
        user.get("orders/:orderId", use: order)
        user.group().add(middleware: BodyLimitMiddleware(MerchantBodyLimits.delivery))
            .post("transactions", use: deliver)
        user.get("entitlements") { _, context in try await service.entitlements(userId: try context.user()) }
        user.get("explain") { _, context in try await service.explain(userId: try context.user()) }
        user.get("content/:productId", use: content)
        user.post("balances/:balance/spend") { request, context in
            try await service.spend(
                userId: try context.user(), balance: try context.parameters.require("balance"),
                request: try await request.decodeJSON(as: MerchantSpendRequest.self, context: context))
        }

        let admin = base.group("admin").add(
            middleware: MerchantAdminMiddleware(adminToken: service.configuration.raw.adminToken))
        admin.get("users/:userId/entitlements") { _, context in
            try await service.entitlements(userId: try context.parameters.require("userId"))
        }
        admin.get("users/:userId/explain") { _, context in
            try await service.explain(userId: try context.parameters.require("userId"))
        }
        admin.get("probe/:appAccountToken") { request, context in
            try await service.probe(
                appAccountToken: try context.parameters.require("appAccountToken", as: UUID.self),
                at: try Self.probeTime(request))
        }
        admin.post("reconcile") { request, context in
            try await service.reconcile(
                try await request.decodeJSON(as: MerchantReconcileRequest.self, context: context))
        }
        admin.post("tokens", use: issueToken)
    }

    /// The probe's `now` (milliseconds since 1970), if given.
    static func probeTime(_ request: Request) throws -> Date? {
        guard let text = request.uri.queryParameters["now"] else { return nil }
        guard let milliseconds = Int64(text), (0...253_402_300_799_999).contains(milliseconds) else {
            throw KioskError(
                .invalidNow, "'\(text)' is not a time in milliseconds since 1970.", field: "now",
                fix: "Send e.g. ?now=1767225600000, or leave it out for the merchant's clock.")
        }
        return Date(millisecondsSince1970: milliseconds)
    }

    // MARK: Product lists

    /// `products_v1.json` (a JSON array of ids) or `products_v2.json`, with `ETag` and `Last-Modified`; 304 when
    /// the client's copy is current.
    @Sendable func productList(_ request: Request, context: MerchantRequestContext) async throws -> Response {
        let name = try context.parameters.require("list")
        let app = try service.configuration.app(try context.parameters.require("bundleId"))
        let listed = app.settings.products.filter { $0.listed ?? true }
        let body: Data
        switch name {
        case "products_v1.json":
            body = try JSONEncoder.kiosk.encode(listed.map(\.productId))
        case "products_v2.json":
            body = try JSONEncoder.kiosk.encode(
                MerchantProductList(
                    version: 2, bundleId: app.bundleId,
                    products: listed.map {
                        .init(
                            productId: $0.productId, type: $0.type.rawValue, entitlement: $0.entitlement,
                            balance: $0.balance, amount: $0.amount, hasContent: $0.content != nil)
                    }))
        default:
            throw KioskError(
                .unknownProductList, "There is no product list \(name).", field: "path",
                fix: "Ask for products_v1.json (an array of ids) or products_v2.json (ids with what they grant).")
        }
        let etag = "\"" + SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
        let lastModified = Date(
            timeIntervalSince1970: service.configuration.modifiedDate.timeIntervalSince1970.rounded(.down))
        var headers = HTTPFields()
        headers[.eTag] = etag
        headers[.lastModified] = HTTPDate.format(lastModified)
        headers[.cacheControl] = "no-cache"
        let notModified: Bool
        if let match = request.headers[.ifNoneMatch] {
            notModified =
                match == "*" || match.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
        } else if let since = request.headers[.ifModifiedSince].flatMap(HTTPDate.parse) {
            notModified = lastModified <= since
        } else {
            notModified = false
        }
        if notModified { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    // MARK: Orders and deliveries

    @Sendable func createOrder(_ request: Request, context: MerchantRequestContext) async throws -> EditedResponse<
        MerchantOrder
    > {
        let body = try await request.decodeJSON(as: MerchantOrderRequest.self, context: context)
        return EditedResponse(
            status: .created, response: try await service.createOrder(userId: try context.user(), request: body))
    }

    @Sendable func order(_ request: Request, context: MerchantRequestContext) async throws -> MerchantOrder {
        try await service.order(id: try context.parameters.require("orderId"), userId: try context.user())
    }

    @Sendable func deliver(_ request: Request, context: MerchantRequestContext) async throws -> MerchantDeliveryResponse
    {
        let body = try await request.decodeJSON(as: MerchantDeliveryRequest.self, context: context)
        return try await service.deliver(userId: try context.user(), request: body)
    }

    // MARK: Notifications

    /// App Store Server Notifications V2. 200 once the change is durable; a refusal (forged, wrong app) is 400,
    /// a failure to store it 5xx, so the store sends it again.
    @Sendable func notification(_ request: Request, context: MerchantRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(as: NotificationBody.self, context: context)
        let outcome = try await service.takeNotification(signedPayload: body.signedPayload)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        let json = try JSONEncoder.kiosk.encode(["outcome": outcome])
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }

    // MARK: Content

    @Sendable func content(_ request: Request, context: MerchantRequestContext) async throws -> MerchantContent {
        try await service.content(
            userId: try context.user(), productId: try context.parameters.require("productId"),
            baseURL: service.configuration.raw.publicURL ?? request.origin)
    }

    @Sendable func download(_ request: Request, context: MerchantRequestContext) async throws -> Response {
        let productId = try context.parameters.require("productId")
        let prefix = "\(MerchantPaths.content(productId: productId))/files/"
        let rawPath = request.uri.path.hasPrefix(prefix) ? String(request.uri.path.dropFirst(prefix.count)) : ""
        let path = rawPath.removingPercentEncoding ?? rawPath
        let query = request.uri.queryParameters
        let data = try service.download(
            productId: productId, path: path, user: query["user"].map(String.init),
            expires: query["expires"].map(String.init), signature: query["signature"].map(String.init))
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Admin

    @Sendable func issueToken(_ request: Request, context: MerchantRequestContext) async throws -> MerchantTokenResponse
    {
        let body = try await request.decodeJSON(as: MerchantTokenRequest.self, context: context)
        guard !body.userId.isEmpty, body.userId.count <= 256 else {
            throw KioskError(.invalidUserId, "userId must have 1–256 characters.", field: "userId")
        }
        guard let expires = UserTokens.expiry(lifetime: body.expiresIn ?? 30 * 86_400, from: service.clock.now())
        else {
            throw KioskError(
                .invalidLifetime,
                "expiresIn must be a positive number of seconds ending within \(Date.kioskRangeText).",
                field: "expiresIn", fix: "Send a lifetime such as 2592000 (30 days).")
        }
        return MerchantTokenResponse(
            userId: body.userId, token: tokens.issue(userId: body.userId, expiresAt: expires), expiresDate: expires)
    }
}

extension Request {
    /// `http://host:port` as the client addressed this server.
    var origin: String {
        "http://\(head.authority ?? "127.0.0.1")"
    }
}

extension MerchantOrder: ResponseEncodable {}
extension MerchantDeliveryResponse: ResponseEncodable {}
extension MerchantEntitlements: ResponseEncodable {}
extension CheckProbe: ResponseEncodable {}
extension MerchantExplanation: ResponseEncodable {}
extension MerchantContent: ResponseEncodable {}
extension MerchantReconcileReport: ResponseEncodable {}
extension MerchantTokenResponse: ResponseEncodable {}
extension MerchantSpendResponse: ResponseEncodable {}

/// HTTP dates (RFC 9110 IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDate {
    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    static func format(_ date: Date) -> String { formatter().string(from: date) }
    static func parse(_ text: String) -> Date? { formatter().date(from: text) }
}
