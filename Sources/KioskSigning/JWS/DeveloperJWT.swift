import Crypto
import ExtrasBase64
import Foundation

/// A compact JWT signed ES256 with one of the developer's keys (`kid`), as Apple's clients make them: the App
/// Store Server API's bearer tokens (``ServerAPIToken``) and the signed offers StoreKit carries to the store
/// (``SignedOfferJWS``). Parsing checks only the form; the caller checks the claims and the signature.
public struct DeveloperJWT<Claims: Codable & Sendable>: Sendable {
    public var header: JWTHeader
    public var claims: Claims
    private let signingInput: [UInt8]
    private let signature: [UInt8]

    /// Splits and decodes a compact JWT.
    ///
    /// - Throws: ``JWTMalformed`` when it is not three base64url segments with a JSON header and claims.
    public init(parsing token: String) throws {
        let bytes = Array(token.utf8)
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw JWTMalformed(description: "expected 3 dot-separated segments, found \(segments.count)")
        }
        let options: Base64.DecodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
        guard let headerJSON = try? Base64.decode(bytes: segments[0], options: options),
            let claimsJSON = try? Base64.decode(bytes: segments[1], options: options),
            let signature = try? Base64.decode(bytes: segments[2], options: options)
        else { throw JWTMalformed(description: "a segment is not base64url") }
        do {
            header = try JSONDecoder().decode(JWTHeader.self, from: Data(headerJSON))
            claims = try JSONDecoder().decode(Claims.self, from: Data(claimsJSON))
        } catch {
            throw JWTMalformed(description: "the header or claims are not the JSON Apple defines: \(error)")
        }
        self.signingInput = Array(bytes[..<segments[1].endIndex])
        self.signature = signature
    }

    /// Whether the signature is an ES256 signature (raw r‖s) by `publicKey` over the header and claims.
    public func hasValidSignature(by publicKey: P256.Signing.PublicKey) -> Bool {
        guard header.alg == "ES256",
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return publicKey.isValidSignature(signature, for: signingInput)
    }

    /// Signs `claims` with the key `keyId` (PKCS#8 PEM, the `.p8` file), header `{"alg":"ES256","kid":…,"typ":"JWT"}`.
    ///
    /// - Throws: when the key cannot be read.
    public static func sign(_ claims: Claims, keyId: String, privateKeyPEM: String) throws -> String {
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let options: Base64.EncodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
        let header = JWTHeader(alg: "ES256", kid: keyId, typ: "JWT")
        var input = Base64.encodeToBytes(bytes: Array(try encoder.encode(header)), options: options)
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: Base64.encodeToBytes(bytes: Array(try encoder.encode(claims)), options: options))
        let signature = try key.signature(for: input)
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: Base64.encodeToBytes(bytes: signature.rawRepresentation, options: options))
        return String(decoding: input, as: UTF8.self)
    }
}

/// A developer-signed JWT's header.
public struct JWTHeader: Codable, Sendable {
    public var alg: String
    public var kid: String?
    public var typ: String?
}

/// Why a developer-signed JWT could not even be read.
public struct JWTMalformed: Error, Sendable, CustomStringConvertible {
    public var description: String
}
