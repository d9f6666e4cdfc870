import Foundation
import Hummingbird
import KioskCore
import KioskHTTP

/// Answers every failure under `/inApps` in Apple's error shape: ``ServerAPIError`` as it is, a body or query
/// the handler could not read (too large for ``StoreBodyLimits/other``, broken framing) as `4000000`, since Apple
/// defines no code of its own for those, anything else as `5000000` with the details only in the log.
struct ServerAPIErrorMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ServerAPIError {
            return try error.response()
        } catch let error as ServerAPIUnauthorized {
            context.logger.info("Server API request refused", metadata: ["reason": "\(error.reason)"])
            return Response(status: .unauthorized)
        } catch let error as HTTPError where error.status == .notFound {
            return Response(status: .notFound)
        } catch let error as HTTPError where error.status.code < 500 {
            return try ServerAPIError(4_000_000, error.body ?? "Bad request.").response()
        } catch let error as KioskError where error.kind == .invalidInput || error.kind == .tooLarge {
            return try ServerAPIError(4_000_000, error.message).response()
        } catch {
            context.logger.error(
                "Server API request failed",
                metadata: ["error": "\(error)", "path": "\(request.uri.path)", "method": "\(request.method)"])
            return try ServerAPIError.generalInternal.response()
        }
    }
}

/// A request whose JWT Kiosk refused: answered with a bare 401 and no body, as Apple answers; the reason goes
/// to the log only.
struct ServerAPIUnauthorized: Error, Sendable {
    var reason: String
}
