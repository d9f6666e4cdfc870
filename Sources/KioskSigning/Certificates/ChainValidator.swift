import Crypto
import Foundation
import KioskCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Checks a leaf and intermediate against trusted roots the way Apple's verifiers do: RFC 5280 path
/// validation at a chosen instant, then the marker extensions, then a P-256 leaf key.
enum ChainValidator {
    /// Validates `leaf ← intermediate ← one of roots` at `validationTime`, or takes the answer from `cache` when it
    /// validated the same two certificates before and `validationTime` lies within that path's validity.
    static func validate(
        leaf: Certificate, intermediate: Certificate, roots: [Certificate], at validationTime: Date,
        remembering cache: ValidatedChainCache<[Certificate]>
    ) async -> Result<ValidatedChain, JWSVerificationFailure> {
        let key = [leaf, intermediate]
        if let known = cache.chain(for: key, at: validationTime) { return .success(known) }
        let result = await validate(leaf: leaf, intermediate: intermediate, roots: roots, at: validationTime)
        if case .success(let chain) = result { cache.insert(chain, for: key) }
        return result
    }

    /// Validates `leaf ← intermediate ← one of roots` at `validationTime`.
    ///
    /// - Returns: The leaf's P-256 public key and the instants the same path is valid at, or the first reason
    ///   the chain is refused.
    static func validate(
        leaf: Certificate,
        intermediate: Certificate,
        roots: [Certificate],
        at validationTime: Date
    ) async -> Result<ValidatedChain, JWSVerificationFailure> {
        // swift-certificates traps on a validation time X.509 cannot write (outside years 0–9999); no certificate
        // is valid at a time outside Kiosk's range anyway.
        guard Date.kioskRange.contains(validationTime) else {
            return .failure(
                .invalidChain(
                    "the validation time (\(validationTime.timeIntervalSince1970) s since 1970) is outside "
                        + Date.kioskRangeText))
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: validationTime)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        let validity: ClosedRange<Date>
        switch result {
        case .validCertificate(let chain):
            // Apple's verifiers trust the leaf only through the intermediate they were given, so a path that
            // skips or replaces it is refused even if it would verify.
            let certificates = Array(chain)
            guard certificates.count == 3, certificates[0] == leaf, certificates[1] == intermediate else {
                return .failure(.invalidChain("the chain must be leaf, then the x5c intermediate, then a root"))
            }
            validity =
                certificates.map(\.notValidBefore).max()!...certificates.map(\.notValidAfter).min()!
        case .couldNotValidate(let failures):
            let reasons = failures.map { "\($0.policyFailureReason)" }
            let detail =
                reasons.isEmpty
                ? "no path from the leaf through the intermediate to a trusted root"
                : reasons.joined(separator: "; ")
            return .failure(.invalidChain("\(detail) (validated at \(validationTime))"))
        }
        if let failure = markerFailure(leaf, SigningProfile.leafMarkerOID, "leaf")
            ?? markerFailure(intermediate, SigningProfile.intermediateMarkerOID, "intermediate")
        {
            return .failure(failure)
        }
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            return .failure(.invalidCertificate("the leaf key is not EC P-256, which ES256 requires"))
        }
        return .success(ValidatedChain(leafKey: leafKey, validity: validity))
    }

    /// A path that validated: the leaf's key, and the instants at which every certificate of the path is within
    /// its validity window. Without revocation checks, path validation depends on the time only through those
    /// windows, so the same certificates validate at any instant in `validity`.
    struct ValidatedChain: Sendable {
        var leafKey: P256.Signing.PublicKey
        var validity: ClosedRange<Date>
    }

    private static func markerFailure(
        _ certificate: Certificate,
        _ oid: ASN1ObjectIdentifier,
        _ role: String
    ) -> JWSVerificationFailure? {
        guard let marker = certificate.extensions[oid: oid] else {
            return .missingMarker("the \(role) certificate lacks extension \(oid)")
        }
        if marker.critical {
            return .missingMarker("the \(role) certificate marks extension \(oid) critical; it must be non-critical")
        }
        return nil
    }
}

/// The chains one verifier validated, with the interval their path is valid in, so verifying many payloads or
/// receipts signed by one chain validates it once. Keyed by what identifies the chain exactly (the `x5c` text, or
/// the certificates themselves).
typealias ValidatedChainCache<Key: Hashable & Sendable> = BoundedCache<Key, ChainValidator.ValidatedChain>

extension BoundedCache where Value == ChainValidator.ValidatedChain {
    /// A cache of the 64 chains validated last: Kiosk signs with one chain per environment at a time.
    convenience init() { self.init(capacity: 64) }

    /// The chain validated under `key`, if `time` lies within its path's validity.
    func chain(for key: Key, at time: Date) -> ChainValidator.ValidatedChain? {
        guard let chain = self[key], chain.validity.contains(time) else { return nil }
        return chain
    }
}
