import Crypto
import ExtrasBase64
import Foundation

/// Signs payloads as compact JWS the way the App Store does: ES256 with the leaf key and
/// the header `{"alg":"ES256","x5c":[leaf, intermediate, root]}`.
///
/// The encoded header is computed once per signer; signing a payload costs one JSON encoding,
/// two byte-level base64url encodings and one P-256 signature.
///
/// ```swift
/// let signer = JWSSigner(identity: identity)
/// let signedTransaction = try signer.sign(payload: transaction)
/// ```
public struct JWSSigner: Sendable {
    /// The identity whose leaf key signs and whose chain goes into `x5c`.
    public let identity: SigningIdentity
    /// The header, UTF-8 JSON then base64url without padding, followed by the `.` separator.
    private let encodedHeaderAndDot: [UInt8]

    /// Creates a signer for one identity.
    public init(identity: SigningIdentity) {
        self.identity = identity
        // Written by hand rather than with JSONEncoder so the member order and the absence of escaped
        // slashes are fixed: base64 contains `/`, and Apple's header has exactly these two members.
        let certificates = identity.x5c.map { "\"\($0)\"" }.joined(separator: ",")
        let header = #"{"alg":"ES256","x5c":["# + certificates + "]}"
        var encodedHeader = Base64.encodeToBytes(bytes: Array(header.utf8), options: Self.base64URL)
        encodedHeader.append(UInt8(ascii: "."))
        self.encodedHeaderAndDot = encodedHeader
    }

    /// Encodes a payload with `JSONEncoder` (keys sorted, slashes unescaped) and signs it.
    ///
    /// The payload's own types decide the JSON: give ids as `String`, dates as integer milliseconds.
    /// - Throws: when the payload cannot be encoded, or signing fails.
    public func sign(payload: some Encodable) throws -> String {
        try sign(payloadJSON: Self.payloadJSON(payload))
    }

    /// The JSON ``sign(payload:)`` signs: keys sorted, slashes unescaped. Sorted, so a payload's bytes are the same
    /// in every process: unsorted, `JSONEncoder` writes an object's members in its dictionary's hash order, which is
    /// seeded afresh in each process.
    /// - Throws: when the payload cannot be encoded.
    public static func payloadJSON(_ payload: some Encodable) throws -> [UInt8] {
        Array(try payloadEncoder.encode(payload))
    }

    private static let payloadEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()

    /// Signs payload bytes that are already JSON.
    ///
    /// - Parameter payloadJSON: The UTF-8 JSON of the payload, used as is.
    /// - Returns: `header.payload.signature`, each part base64url without padding.
    /// - Throws: when the P-256 signature cannot be made.
    public func sign(payloadJSON: [UInt8]) throws -> String {
        var signingInput = encodedHeaderAndDot
        signingInput.reserveCapacity(
            encodedHeaderAndDot.count + Base64.encodedLength(bytesCount: payloadJSON.count) + 1 + 86
        )
        signingInput.append(contentsOf: Base64.encodeToBytes(bytes: payloadJSON, options: Self.base64URL))
        let signature = try identity.leafPrivateKey.signature(for: signingInput)
        signingInput.append(UInt8(ascii: "."))
        signingInput.append(
            contentsOf: Base64.encodeToBytes(bytes: signature.rawRepresentation, options: Self.base64URL))
        return String(decoding: signingInput, as: UTF8.self)
    }

    static let base64URL: Base64.EncodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
}
