import Foundation
import KioskCore
import KioskSigning
import X509

/// Checks signed transactions with KioskSigning's ``SignedDataVerifier``: the JWS against the trusted roots, then
/// the bundle id and environment, as Apple's verifier checks a `signedTransactionInfo`.
struct TransactionVerifier: Sendable {
    let verifier: SignedDataVerifier
    let bundleId: String
    let environment: AppStore.Environment

    init(rootCertificates: [Certificate], bundleId: String, environment: AppStore.Environment) {
        // A device knows no appAppleId, and transactions carry none: the transaction-only verifier fits.
        self.verifier = SignedDataVerifier.forTransactions(
            rootCertificates: rootCertificates, environment: environment == .production ? .production : .sandbox,
            bundleId: bundleId)
        self.bundleId = bundleId
        self.environment = environment
    }

    /// The decoded payload and, if it is not to be trusted, why. Nil when the payload cannot even be read.
    ///
    /// The chain and the signature are checked before the payload is read (only `signedDate` is read first, with
    /// checked conversions, as the validation time); an unverified payload is decoded only afterwards, because
    /// StoreKit hands it to the app with the reason it is not trusted.
    func verify(_ jws: String) async -> (
        payload: JWSTransactionDecodedPayload, error: VerificationResult<Transaction>.VerificationError?
    )? {
        // An environment the verifier cannot express (neither Production nor Sandbox) matches no payload.
        guard environment == .production || environment == .sandbox else {
            return Self.unverified(
                jws, .invalidEnvironment("KioskKit verifies Production or Sandbox, not \(environment)"))
        }
        do {
            return (try await verifier.verifyAndDecodeTransaction(jws), nil)
        } catch let error as SignedDataVerificationError {
            return Self.unverified(jws, Self.verificationError(error))
        } catch {
            return Self.unverified(jws, .invalidEncoding("\(error)"))
        }
    }

    /// The payload of a JWS that failed verification, read only to hand it to the app with `error`.
    private static func unverified(
        _ jws: String, _ error: VerificationResult<Transaction>.VerificationError
    ) -> (payload: JWSTransactionDecodedPayload, error: VerificationResult<Transaction>.VerificationError?)? {
        guard let payloadJSON = unverifiedPayload(of: jws),
            let payload = try? JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(payloadJSON))
        else { return nil }
        return (payload, error)
    }

    /// StoreKit's error for a refusal of the verifier.
    static func verificationError(
        _ error: SignedDataVerificationError
    ) -> VerificationResult<Transaction>.VerificationError {
        if let failure = error.jwsFailure { return .init(failure) }
        switch error.status {
        case .invalidAppIdentifier, .invalidEnvironment: return .invalidEnvironment(error.detail)
        default: return .invalidCertificateChain(error.detail)
        }
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
