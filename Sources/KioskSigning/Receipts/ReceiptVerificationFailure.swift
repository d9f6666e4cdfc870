/// Why an app receipt or a transaction receipt was refused.
public enum ReceiptVerificationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not base64, or not the container the receipt kind uses: a DER PKCS #7 `SignedData` with attached content
    /// and one signer, or an ASCII plist with `purchase-info` and a Kiosk `signature`.
    case malformedContainer(String)
    /// The signed content is not a receipt payload: a missing attribute or key, a wrong encoding, a bad date.
    case malformedPayload(String)
    /// The signer used something other than ECDSA with SHA-256, or CMS signed attributes.
    case unsupportedAlgorithm(String)
    /// The signature is not the embedded leaf's signature over exactly the payload bytes.
    case invalidSignature
    /// The leaf and intermediate do not lead to a trusted root at the receipt's signing date, or lack Apple's
    /// marker extensions, as ``JWSVerifier`` requires of a JWS chain.
    case untrustedChain(String)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .malformedContainer(let detail): "malformed receipt container: \(detail)"
        case .malformedPayload(let detail): "malformed receipt payload: \(detail)"
        case .unsupportedAlgorithm(let detail): "unsupported receipt signature: \(detail)"
        case .invalidSignature: "the signature does not match the receipt payload"
        case .untrustedChain(let detail): "receipt certificate chain not trusted: \(detail)"
        }
    }
}
