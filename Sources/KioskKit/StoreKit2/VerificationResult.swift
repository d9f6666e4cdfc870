import KioskSigning

/// A signed value and whether its signature checked out, as in StoreKit 2.
///
/// `.verified` means the JWS chains to one of the client's trusted roots, its ES256 signature matches, and
/// it was signed for this app's bundle id and environment.
public enum VerificationResult<SignedType: Sendable>: Sendable {
    case unverified(SignedType, VerificationError)
    case verified(SignedType)

    /// Why a signed value is not trusted.
    public enum VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The JWS is malformed or uses another algorithm.
        case invalidEncoding(String)
        /// The certificate chain is missing, malformed or does not lead to a trusted root.
        case invalidCertificateChain(String)
        /// The signature does not match.
        case invalidSignature
        /// Signed for another app (`bundleId`) or environment.
        case invalidEnvironment(String)

        public var description: String {
            switch self {
            case .invalidEncoding(let detail): "invalid encoding: \(detail)"
            case .invalidCertificateChain(let detail): "invalid certificate chain: \(detail)"
            case .invalidSignature: "invalid signature"
            case .invalidEnvironment(let detail): "wrong app or environment: \(detail)"
            }
        }

        init(_ failure: JWSVerificationFailure) {
            switch failure {
            case .malformed, .unsupportedAlgorithm: self = .invalidEncoding(failure.description)
            case .invalidChainLength, .invalidCertificate, .invalidChain, .missingMarker:
                self = .invalidCertificateChain(failure.description)
            case .invalidSignature: self = .invalidSignature
            }
        }
    }

    /// The value if verified.
    ///
    /// - Throws: the ``VerificationError`` when it is not.
    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let value): return value
            case .unverified(_, let error): throw error
            }
        }
    }

    /// The value whether verified or not; do not grant anything on an unverified one.
    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): value
        }
    }
}
