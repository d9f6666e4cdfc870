import Crypto
import Foundation
import Hummingbird
import KioskCore
import KioskSigning
import KioskStorage

/// Accepts an App Store Connect API request only with `Authorization: Bearer <JWT>` as Apple checks it: ES256
/// signed by an unrevoked team key (`kid`), `iss` the store's issuer id, `aud` `appstoreconnect-v1`, `exp` in the
/// future and at most 20 minutes (plus a minute of clock skew) ahead, `iat` optional. The key goes in the context.
struct ConnectAPIAuthMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    let database: any KioskDatabase
    let clock: any KioskClock

    /// The longest lifetime a token may have left: App Store Connect refuses tokens good for more than 20 minutes.
    static let maximumLifetime: TimeInterval = 20 * 60
    /// Leeway for clocks that disagree.
    static let clockSkew: TimeInterval = 60

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.teamKey = try await authenticate(request.headers[.authorization])
        return try await next(request, context)
    }

    private func authenticate(_ authorization: String?) async throws -> TeamAPIKey {
        func refuse(_ reason: String) -> ConnectAPIError {
            var error = ConnectAPIError.notAuthorized
            error.detail = reason
            return error
        }
        guard let authorization, authorization.hasPrefix("Bearer ") else { throw refuse("no bearer token") }
        let token: ServerAPIToken
        do {
            token = try ServerAPIToken(parsing: String(authorization.dropFirst("Bearer ".count)))
        } catch {
            throw refuse("\(error)")
        }
        if let reason = token.refusal(at: clock.now(), maximumLifetime: Self.maximumLifetime, clockSkew: Self.clockSkew)
        {
            throw refuse(reason)
        }
        guard let keyId = token.header.kid else { throw refuse("no kid") }
        let (key, issuer) = try await database.transaction { tx in
            (try await tx.teamKey(id: keyId), try await CatalogService.issuerId(in: tx))
        }
        guard let key, key.revokedAt == nil else { throw refuse("unknown or revoked kid") }
        guard token.claims.iss == issuer else { throw refuse("iss is not this store's issuer id") }
        guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM),
            token.hasValidSignature(by: publicKey)
        else { throw refuse("bad signature") }
        return key
    }
}

extension KioskRequestContext {
    /// The team key that signed the request; set on every `/v1` route.
    func requireTeamKey() throws -> TeamAPIKey {
        guard let teamKey else { throw ConnectAPIError.notAuthorized }
        return teamKey
    }
}
