import Foundation
import Hummingbird
import KioskCore
import KioskSigning

/// Lets a request through only with `Authorization: Bearer <admin token>`. The store keeps only the token's
/// SHA-256, so the comparison is between hashes. Wrong tokens are counted per client address by `throttle`.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    let tokenSHA256: String
    let throttle: TokenGuessThrottle
    let clock: any KioskClock

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw KioskError(
                .missingAdminToken, "This endpoint needs the admin token.",
                field: "Authorization",
                fix: "Send 'Authorization: Bearer <token>' (the CLI reads --token or KIOSK_ADMIN_TOKEN).")
        }
        let prefix = "Bearer "
        let sent = header.hasPrefix(prefix) ? SecretGenerator.sha256Hex(String(header.dropFirst(prefix.count))) : ""
        let right = try await throttle.check(from: TokenGuessThrottle.address(of: context.channel), now: clock.now()) {
            Self.constantTimeEquals(sent, tokenSHA256)
        }
        guard right else {
            throw KioskError(
                .invalidAdminToken, "The admin token is wrong.",
                field: "Authorization",
                fix:
                    "Use the token `kiosk serve` printed at first start, or restart it with --admin-token-file to set a new one."
            )
        }
        return try await next(request, context)
    }

    /// Compares two hex digests without stopping at the first difference.
    static func constantTimeEquals(_ left: String, _ right: String) -> Bool {
        let left = Array(left.utf8)
        let right = Array(right.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
