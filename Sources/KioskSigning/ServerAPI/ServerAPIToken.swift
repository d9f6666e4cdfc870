import Crypto
import ExtrasBase64
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
public struct ServerAPIToken: Sendable {
    /// The audience every token must name.
    public static let audience = "appstoreconnect-v1"

    public var header: Header
    public var claims: Claims
    private let signingInput: [UInt8]
    private let signature: [UInt8]

    public struct Header: Codable, Sendable {
        public var alg: String
        public var kid: String?
        public var typ: String?
    }

    /// The claims Apple reads. Times are seconds since 1970 (JSON numbers).
    public struct Claims: Codable, Sendable {
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

    /// Why a token could not even be read.
    public struct Malformed: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Splits and decodes a compact JWT; checks nothing but its form.
    ///
    /// - Throws: ``Malformed`` when it is not three base64url segments with a JSON header and claims.
    public init(parsing token: String) throws {
        let bytes = Array(token.utf8)
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw Malformed(description: "expected 3 dot-separated segments, found \(segments.count)")
        }
        let options: Base64.DecodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
        guard let headerJSON = try? Base64.decode(bytes: segments[0], options: options),
            let claimsJSON = try? Base64.decode(bytes: segments[1], options: options),
            let signature = try? Base64.decode(bytes: segments[2], options: options)
        else { throw Malformed(description: "a segment is not base64url") }
        do {
            header = try JSONDecoder().decode(Header.self, from: Data(headerJSON))
            claims = try JSONDecoder().decode(Claims.self, from: Data(claimsJSON))
        } catch {
            throw Malformed(description: "the header or claims are not the JSON Apple defines: \(error)")
        }
        self.signingInput = Array(bytes[..<segments[1].endIndex])
        self.signature = signature
    }

    /// Why Apple would refuse this token at `now` before looking up its key, or nil: not ES256, no `kid`, `aud`
    /// not `appstoreconnect-v1`, no `exp` or one passed, `exp` more than `maximumLifetime` (plus `clockSkew`) ahead,
    /// `iat` more than `clockSkew` ahead.
    public func refusal(at now: Date, maximumLifetime: TimeInterval, clockSkew: TimeInterval) -> String? {
        let now = now.timeIntervalSince1970
        guard header.alg == "ES256" else { return "alg is not ES256" }
        guard header.kid != nil else { return "no kid" }
        guard claims.aud == Self.audience else { return "aud is not \(Self.audience)" }
        guard let expiry = claims.exp, expiry > now else { return "expired or no exp" }
        guard expiry <= now + maximumLifetime + clockSkew else {
            return "exp is more than \(Int(maximumLifetime / 60)) minutes ahead"
        }
        if let issuedAt = claims.iat, issuedAt > now + clockSkew { return "iat is in the future" }
        return nil
    }

    /// Whether the signature is an ES256 signature (raw r‖s) by `publicKey` over the header and claims.
    public func hasValidSignature(by publicKey: P256.Signing.PublicKey) -> Bool {
        guard header.alg == "ES256",
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return publicKey.isValidSignature(signature, for: signingInput)
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
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let header = Header(alg: "ES256", kid: keyId, typ: "JWT")
        let claims = Claims(
            iss: issuerId, bid: bundleId, aud: audience, exp: expiresAt.timeIntervalSince1970.rounded(.down),
            iat: issuedAt.map { $0.timeIntervalSince1970.rounded(.down) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let options: Base64.EncodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
        var input = Base64.encodeToBytes(bytes: Array(try encoder.encode(header)), options: options)
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: Base64.encodeToBytes(bytes: Array(try encoder.encode(claims)), options: options))
        let signature = try key.signature(for: input)
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: Base64.encodeToBytes(bytes: signature.rawRepresentation, options: options))
        return String(decoding: input, as: UTF8.self)
    }
}
