import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol

/// The request context of the merchant's routes: Kiosk's JSON coding, the user a user token named, and the body
/// limit of the route's family.
public struct MerchantRequestContext: RequestContext, BodyLimitedContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``UserAuthMiddleware``.
    public var userId: String?
    /// The largest body the route reads: ``MerchantBodyLimits/other`` unless the route sets its own.
    public var maxUploadSize = MerchantBodyLimits.other

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    public var requestDecoder: JSONDecoder { .kiosk }
    public var responseEncoder: JSONEncoder { .kiosk }

    /// The signed-in user; the middleware guarantees it on user routes.
    func user() throws -> String {
        guard let userId else {
            throw KioskError(.missingUserToken, "This endpoint needs a user token.")
        }
        return userId
    }
}

/// The largest request body each of the merchant's routes reads, in bytes; a larger body is refused with 413
/// `body_too_large` before it is read whole.
public enum MerchantBodyLimits {
    /// `POST /merchant/v1/transactions`, a signed transaction or a whole base64 app receipt: 8 MiB, as the store's
    /// `verifyReceipt` reads.
    public static let delivery = 8 * 1_048_576
    /// `POST /merchant/v1/notifications`, Apple's signed payload (a few kilobytes): 1 MiB.
    public static let notification = 1_048_576
    /// Every other route: 64 KiB.
    public static let other = 64 * 1024
}

/// Lets a request through with `Authorization: Bearer <user token>` (``UserTokens``) and records its user.
struct UserAuthMiddleware: RouterMiddleware {
    typealias Context = MerchantRequestContext
    let tokens: UserTokens
    let clock: any KioskClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let token = request.bearerToken else {
            throw KioskError(
                .missingUserToken, "This endpoint needs a user token.",
                field: "Authorization",
                fix:
                    "Send Authorization: Bearer <token> with the token your sign-in issued (`kiosk merchant token --user ID`)."
            )
        }
        var context = context
        context.userId = try tokens.userId(from: token, now: clock.now())
        return try await next(request, context)
    }
}

/// Lets a request through only with the merchant's admin token.
struct MerchantAdminMiddleware: RouterMiddleware {
    typealias Context = MerchantRequestContext
    let adminToken: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let token = request.bearerToken,
            Array(token.utf8).elementsEqualInConstantTime(Array(adminToken.utf8))
        else {
            throw KioskError(
                .invalidAdminToken, "This endpoint needs the merchant's admin token.",
                field: "Authorization", fix: "Send Authorization: Bearer <adminToken from the merchant configuration>.")
        }
        return try await next(request, context)
    }
}

extension Request {
    /// The token of an `Authorization: Bearer …` header.
    var bearerToken: String? {
        guard let header = headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

extension MerchantDeliveryRequest: TextRuledBody {
    package static let textRules: [String: TextRule] = ["signedTransaction": .document, "receiptData": .document]
}

/// Apple's notification body.
struct NotificationBody: TextRuledBody {
    var signedPayload: String
    static let textRules: [String: TextRule] = ["signedPayload": .document]
}
