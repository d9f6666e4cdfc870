import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

/// Lets a client-protocol request through only with `Authorization: Bearer <session token>` of a session in
/// this environment, and puts the session in the context.
struct ClientAuthMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    let purchases: PurchaseService
    let environment: StoreEnvironment

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let prefix = "Bearer "
        guard let header = request.headers[.authorization], header.hasPrefix(prefix) else {
            throw KioskError(
                .missingSession, "This endpoint needs a signed-in session.",
                field: "Authorization",
                fix: "Sign in (POST …/sessions) and send 'Authorization: Bearer <sessionToken>'.",
                storeKitCode: StoreKitErrorCode.clientInvalid.rawValue)
        }
        var context = context
        context.client = try await purchases.client(
            token: String(header.dropFirst(prefix.count)), environment: environment)
        return try await next(request, context)
    }
}

extension KioskRequestContext {
    /// The signed-in client; only `ClientAuthMiddleware`'s routes call it.
    func requireClient() throws -> ClientSession {
        guard let client else { preconditionFailure("client-protocol route without ClientAuthMiddleware") }
        return client
    }
}
