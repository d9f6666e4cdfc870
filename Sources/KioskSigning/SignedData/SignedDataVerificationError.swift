/// Why ``SignedDataVerifier`` refused signed data: one of the statuses of Apple's `VerificationException`, plus a
/// sentence saying exactly what was wrong.
public struct SignedDataVerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's `VerificationStatus` values (python/node/java), with the same numbers.
    public enum Status: Int, Sendable, Hashable, CaseIterable {
        /// The signature, format, marker extensions or revocation status are wrong.
        case verificationFailure = 1
        /// Signed for another app: `bundleId`, or `appAppleId` in production.
        case invalidAppIdentifier = 2
        /// An `x5c` entry is not a certificate, or the leaf key is not P-256.
        case invalidCertificate = 3
        /// `x5c` does not hold exactly three certificates.
        case invalidChainLength = 4
        /// The chain does not lead to a trusted root at the validation time.
        case invalidChain = 5
        /// Signed for the other environment.
        case invalidEnvironment = 6
        /// An online check could not be made (network error, or the responder did not answer 200); try again later.
        case retryableVerificationFailure = 7
    }

    public let status: Status
    /// What was wrong, for logs and error messages.
    public let detail: String
    /// The finer reason when the JWS itself was refused (before any identity or online check).
    public let jwsFailure: JWSVerificationFailure?

    public init(_ status: Status, _ detail: String) {
        self.status = status
        self.detail = detail
        self.jwsFailure = nil
    }

    private init(_ status: Status, jwsFailure: JWSVerificationFailure) {
        self.status = status
        self.detail = jwsFailure.description
        self.jwsFailure = jwsFailure
    }

    /// Bridges a JWS refusal: a bad chain length, certificate or chain keep their own status; a malformed JWS, an
    /// algorithm other than ES256, a missing marker or a bad signature are a `verificationFailure`.
    public init(_ failure: JWSVerificationFailure) {
        switch failure {
        case .invalidChainLength: self.init(.invalidChainLength, jwsFailure: failure)
        case .invalidCertificate: self.init(.invalidCertificate, jwsFailure: failure)
        case .invalidChain: self.init(.invalidChain, jwsFailure: failure)
        case .malformed, .unsupportedAlgorithm, .missingMarker, .invalidSignature:
            self.init(.verificationFailure, jwsFailure: failure)
        }
    }

    /// Bridges an app-receipt refusal: an untrusted chain is `invalidChain`, anything else `verificationFailure`.
    public init(_ failure: ReceiptVerificationFailure) {
        switch failure {
        case .untrustedChain: self.init(.invalidChain, failure.description)
        case .malformedContainer, .malformedPayload, .unsupportedAlgorithm, .invalidSignature:
            self.init(.verificationFailure, failure.description)
        }
    }

    public var description: String { "\(status) (\(status.rawValue)): \(detail)" }
}
