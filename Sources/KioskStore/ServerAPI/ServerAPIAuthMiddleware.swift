import Crypto
import Foundation
import Hummingbird
import KioskCore
import KioskSigning
import KioskStorage

/// Who is calling the App Store Server API, once ``ServerAPIAuthMiddleware`` accepted the token.
public struct ServerAPICaller: Sendable {
    public var environment: StoreEnvironment
    /// The app the token's `bid` names, which owns the key that signed it.
    public var app: App
    public var keyId: String
}

/// Accepts a request only with `Authorization: Bearer <JWT>` as Apple checks it: ES256 signed by an unrevoked
/// In-App Purchase key (`kid`) of the app `bid` names, `iss` the store's issuer id, `aud` `appstoreconnect-v1`,
/// `exp` in the future and at most an hour (plus a minute of clock skew) ahead, `iat` optional. Anything else
/// is a bare 401, as Apple answers.
struct ServerAPIAuthMiddleware: RouterMiddleware {
    typealias Context = KioskRequestContext

    let database: any KioskDatabase
    let clock: any KioskClock
    let environment: StoreEnvironment
    let keys: ServerAPIKeyCache

    /// The longest lifetime a token may have left: Apple refuses tokens that expire more than an hour out.
    static let maximumLifetime: TimeInterval = 3600
    /// Leeway for clocks that disagree.
    static let clockSkew: TimeInterval = 60

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.serverAPI = try await authenticate(request.headers[.authorization])
        return try await next(request, context)
    }

    private func authenticate(_ authorization: String?) async throws -> ServerAPICaller {
        guard let authorization, authorization.hasPrefix("Bearer ") else {
            throw ServerAPIUnauthorized(reason: "no bearer token")
        }
        let text = String(authorization.dropFirst("Bearer ".count))
        let verified = keys.verifiedToken(text)
        let token: ServerAPIToken
        do {
            token = try verified ?? ServerAPIToken(parsing: text)
        } catch {
            throw ServerAPIUnauthorized(reason: "\(error)")
        }
        if let reason = token.refusal(
            at: clock.now(), maximumLifetime: Self.maximumLifetime, clockSkew: Self.clockSkew)
        {
            throw ServerAPIUnauthorized(reason: reason)
        }
        guard let keyId = token.header.kid else { throw ServerAPIUnauthorized(reason: "no kid") }
        guard let issuer = token.claims.iss, let bundleId = token.claims.bid else {
            throw ServerAPIUnauthorized(reason: "iss or bid missing")
        }
        let entry = try await keys.entry(keyId: keyId) {
            try await database.transaction { tx -> ServerAPIKeyCache.Entry? in
                guard let key = try await tx.key(id: keyId), let app = try await tx.app(id: key.appId) else {
                    return nil
                }
                return ServerAPIKeyCache.Entry(
                    key: key, app: app, issuer: try await CatalogService.issuerId(in: tx),
                    publicKey: try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM), readAt: .now)
            }
        }
        guard let entry, entry.key.revokedAt == nil else {
            throw ServerAPIUnauthorized(reason: "unknown or revoked kid")
        }
        guard issuer == entry.issuer else { throw ServerAPIUnauthorized(reason: "iss is not this store's issuer id") }
        guard bundleId == entry.app.bundleId else { throw ServerAPIUnauthorized(reason: "bid is not the key's app") }
        if verified == nil {
            guard let publicKey = entry.publicKey, token.hasValidSignature(by: publicKey) else {
                throw ServerAPIUnauthorized(reason: "bad signature")
            }
            keys.rememberVerified(token, as: text)
        }
        let app = entry.app
        return ServerAPICaller(environment: environment, app: app, keyId: keyId)
    }
}

extension KioskRequestContext {
    /// The authenticated Server API caller; set on every `/inApps` route.
    func requireServerAPICaller() throws -> ServerAPICaller {
        guard let serverAPI else {
            throw ServerAPIUnauthorized(reason: "route mounted without ServerAPIAuthMiddleware")
        }
        return serverAPI
    }
}
