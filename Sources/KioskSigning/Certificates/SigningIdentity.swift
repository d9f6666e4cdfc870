import Crypto
import ExtrasBase64
import Foundation
import SwiftASN1
import X509

/// What one store environment signs with: the chain root → intermediate → leaf and the leaf's private key.
///
/// ```swift
/// let identity = try SigningIdentity.generate(environment: .sandbox, now: clock.now())
/// let signer = JWSSigner(identity: identity)
/// let jws = try signer.sign(payload: transaction)
/// ```
public struct SigningIdentity: Sendable {
    /// The self-signed root CA; merchants trust it the way they trust Apple Root CA - G3.
    public let root: Certificate
    /// The intermediate CA, issued by the root; it carries the intermediate marker extension.
    public let intermediate: Certificate
    /// The leaf that signs JWS payloads, issued by the intermediate; it carries the leaf marker extension.
    public let leaf: Certificate
    /// The leaf's P-256 private key.
    public let leafPrivateKey: P256.Signing.PrivateKey
    /// The JWS `x5c` header value: standard base64 (with padding, no newlines) of each certificate's DER,
    /// in the order leaf, intermediate, root.
    public let x5c: [String]
    /// The root certificate as DER, what `kiosk certs export --format der` writes.
    public let rootDER: [UInt8]

    /// Assembles an identity from its parts, without checking that they belong together
    /// (``SigningKeyStore`` validates what it loads before calling this).
    ///
    /// - Throws: when a certificate cannot be serialized to DER.
    public init(
        root: Certificate,
        intermediate: Certificate,
        leaf: Certificate,
        leafPrivateKey: P256.Signing.PrivateKey
    ) throws {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafPrivateKey = leafPrivateKey
        let rootDER = try Self.derBytes(of: root)
        self.rootDER = rootDER
        self.x5c = [
            Base64.encodeToString(bytes: try Self.derBytes(of: leaf)),
            Base64.encodeToString(bytes: try Self.derBytes(of: intermediate)),
            Base64.encodeToString(bytes: rootDER),
        ]
    }

    /// The root certificate as PEM (`-----BEGIN CERTIFICATE-----`), what `kiosk certs export` writes by default.
    public var rootPEM: String {
        PEMDocument(type: "CERTIFICATE", derBytes: rootDER).pemString
    }

    /// The SHA-256 of the root certificate's DER in lower-case hex: the root's fingerprint, what tells two chains
    /// apart (`openssl x509 -noout -fingerprint -sha256` shows the same bytes, upper-case with colons).
    public var rootSHA256: String {
        Self.sha256Hex(rootDER)
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        SecretGenerator.hexString(SHA256.hash(data: bytes))
    }

    /// The DER encoding of a certificate.
    static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
