/// Why a JWS was refused. The cases follow the statuses of Apple's `SignedDataVerifier`
/// (`INVALID_CHAIN_LENGTH`, `INVALID_CERTIFICATE`, `INVALID_CHAIN`, `VERIFICATION_FAILURE`), split finer.
public enum JWSVerificationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not three base64url segments, or a header or payload that is not a JSON object.
    case malformed(String)
    /// The header's `alg` is not exactly `ES256`, or it names `crit` extensions.
    case unsupportedAlgorithm(String)
    /// `x5c` is missing or does not hold exactly three certificates (leaf, intermediate, root).
    case invalidChainLength(Int)
    /// An `x5c` entry is not standard base64 of a DER certificate, or the leaf key is not P-256.
    case invalidCertificate(String)
    /// The chain does not lead to a trusted root under RFC 5280 at the validation time.
    case invalidChain(String)
    /// The leaf or intermediate lacks Apple's marker extension, or marks it critical.
    case missingMarker(String)
    /// The signature is not the leaf's ES256 signature over the header and payload.
    case invalidSignature

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .malformed(let detail): "malformed JWS: \(detail)"
        case .unsupportedAlgorithm(let alg): "unsupported JWS algorithm \(alg); only ES256 is accepted"
        case .invalidChainLength(let count): "x5c holds \(count) certificates; exactly 3 are required"
        case .invalidCertificate(let detail): "invalid certificate in x5c: \(detail)"
        case .invalidChain(let detail): "certificate chain not trusted: \(detail)"
        case .missingMarker(let detail): "missing marker extension: \(detail)"
        case .invalidSignature: "the ES256 signature does not match the header and payload"
        }
    }
}
