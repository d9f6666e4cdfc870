import Foundation
import KioskSigning
import X509

/// Checks signed transactions: the JWS against the trusted roots, then the bundle id and environment.
struct TransactionVerifier: Sendable {
    let jwsVerifier: JWSVerifier
    let bundleId: String
    let environment: AppStore.Environment

    init(rootCertificates: [Certificate], bundleId: String, environment: AppStore.Environment) {
        self.jwsVerifier = JWSVerifier(rootCertificates: rootCertificates)
        self.bundleId = bundleId
        self.environment = environment
    }

    /// The decoded payload and, if it is not to be trusted, why. Nil when the payload cannot even be read.
    func verify(_ jws: String) async -> (
        payload: JWSTransactionDecodedPayload, error: VerificationResult<Transaction>.VerificationError?
    )? {
        let result = await jwsVerifier.verify(jws)
        guard let payloadJSON = result.payloadJSON ?? Self.unverifiedPayload(of: jws),
            let payload = try? JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(payloadJSON))
        else {
            return nil
        }
        if let failure = result.failure { return (payload, .init(failure)) }
        guard payload.bundleId == bundleId, payload.environment == environment.rawValue else {
            return (
                payload,
                .invalidEnvironment(
                    "signed for \(payload.bundleId) in \(payload.environment), expected \(bundleId) in \(environment)")
            )
        }
        return (payload, nil)
    }

    /// The payload segment of a compact JWS, decoded without any check.
    static func unverifiedPayload(of jws: String) -> [UInt8]? {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { return nil }
        var base64 = segments[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}
