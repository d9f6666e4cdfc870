import Foundation

/// The bearer token of the App Store Server API: a JWT signed ES256 with an In-App Purchase key, header
/// `{"alg":"ES256","kid":…,"typ":"JWT"}`, claims `iss`, `bid`, `aud: "appstoreconnect-v1"`, `exp` and optionally
/// `iat` (Apple's Python and Java clients send none).
///
/// ```swift
/// let token = try ServerAPIToken.sign(keyId: "ABCDEFGHIJ", issuerId: issuer, bundleId: "com.example.app",
///                                     privateKeyPEM: pem, expiresAt: now + 300)
/// let parsed = try ServerAPIToken(parsing: token)   // then check claims and `hasValidSignature(by:)`
/// ```
public typealias ServerAPIToken = DeveloperJWT<ServerAPIClaims>

/// The claims Apple reads in a Server API token. Times are seconds since 1970 (JSON numbers).
public struct ServerAPIClaims: Codable, Sendable {
    /// The audience every token must name.
    public static let audience = "appstoreconnect-v1"

    public var iss: String?
    public var bid: String?
    public var aud: String?
    public var exp: Double?
    public var iat: Double?

    public init(iss: String?, bid: String?, aud: String?, exp: Double?, iat: Double? = nil) {
        self.iss = iss
        self.bid = bid
        self.aud = aud
        self.exp = exp
        self.iat = iat
    }
}

extension DeveloperJWT where Claims == ServerAPIClaims {
    /// Why Apple would refuse this token at `now` before looking up its key, or nil: not ES256, no `kid`, `aud`
    /// not `appstoreconnect-v1`, no `exp` or one passed, `exp` more than `maximumLifetime` (plus `clockSkew`) ahead,
    /// `iat` more than `clockSkew` ahead.
    public func refusal(at now: Date, maximumLifetime: TimeInterval, clockSkew: TimeInterval) -> String? {
        let now = now.timeIntervalSince1970
        guard header.alg == "ES256" else { return "alg is not ES256" }
        guard header.kid != nil else { return "no kid" }
        guard claims.aud == ServerAPIClaims.audience else { return "aud is not \(ServerAPIClaims.audience)" }
        guard let expiry = claims.exp, expiry > now else { return "expired or no exp" }
        guard expiry <= now + maximumLifetime + clockSkew else {
            return "exp is more than \(Int(maximumLifetime / 60)) minutes ahead"
        }
        if let issuedAt = claims.iat, issuedAt > now + clockSkew { return "iat is in the future" }
        return nil
    }

    /// Makes a token the way Apple's clients do.
    ///
    /// - Parameters:
    ///   - bundleId: Written as `bid`; nil for a team key of the App Store Connect API, whose tokens name no app.
    ///   - privateKeyPEM: The key, PKCS#8 PEM (the `.p8` file).
    ///   - issuedAt: Written as `iat` when given; Apple's Python client leaves it out.
    /// - Throws: when the key cannot be read.
    public static func sign(
        keyId: String, issuerId: String, bundleId: String?, privateKeyPEM: String, expiresAt: Date,
        issuedAt: Date? = nil
    ) throws -> String {
        try sign(
            ServerAPIClaims(
                iss: issuerId, bid: bundleId, aud: ServerAPIClaims.audience,
                exp: expiresAt.timeIntervalSince1970.rounded(.down),
                iat: issuedAt.map { $0.timeIntervalSince1970.rounded(.down) }),
            keyId: keyId, privateKeyPEM: privateKeyPEM)
    }
}
