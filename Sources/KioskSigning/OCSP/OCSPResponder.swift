import Crypto
import Foundation
import SwiftASN1
import X509

/// Answers OCSP requests about one environment's intermediate and leaf, the way Apple's verifiers need it
/// (App Store Server Library, online checks on): a `successful` BasicOCSPResponse, ResponderID byKey, signed with
/// ecdsa-with-SHA384 by the issuer itself (the root key for the intermediate, the intermediate key for the leaf),
/// `thisUpdate` now, `nextUpdate` an hour later, the request's nonce echoed.
///
/// Each CertID, hashed with SHA-1 or SHA-256, is matched against the two issuers: `good` or `revoked` for the
/// certificate of the chain with that serial, `unknown` for any other serial of the same issuer. A request whose
/// CertIDs are not all of one issuer of this chain gets `unauthorized`; one that is not DER of an unsigned
/// OCSPRequest with at least one CertID gets `malformedRequest`.
///
/// ```swift
/// let responder = OCSPResponder(identity: identity, keys: keys)
/// let der = responder.respond(to: requestDER, revocations: [:], now: clock.now())
/// ```
public struct OCSPResponder: Sendable {
    /// How long an answer may be cached: `nextUpdate - thisUpdate`.
    public static let validitySeconds: TimeInterval = 60 * 60

    /// A revoked certificate's entry, looked up by serial number.
    public struct Revocation: Sendable, Hashable {
        public var revokedAt: Date
        /// The CRLReason (0…10), when given.
        public var reason: Int?

        public init(revokedAt: Date, reason: Int?) {
            self.revokedAt = revokedAt
            self.reason = reason
        }
    }

    private struct Issuer {
        var certificate: Certificate
        var key: P384.Signing.PrivateKey
        /// The one certificate of the chain this issuer answers for.
        var subject: Certificate
    }

    private let issuers: [Issuer]

    /// A responder for `identity`'s chain, signing with its CA keys.
    public init(identity: SigningIdentity, keys: SigningKeyStore.AuthorityKeys) {
        issuers = [
            Issuer(certificate: identity.root, key: keys.rootPrivateKey, subject: identity.intermediate),
            Issuer(certificate: identity.intermediate, key: keys.intermediatePrivateKey, subject: identity.leaf),
        ]
    }

    /// The serial number as upper-case hex of its INTEGER content bytes, the key of `revocations`.
    public static func serialKey(_ certificate: Certificate) -> String {
        serialKey(Array(certificate.serialNumber.bytes))
    }

    static func serialKey(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02X", $0) }.joined()
    }

    /// Answers a DER OCSPRequest with a DER OCSPResponse (never throws: failures are OCSP error statuses).
    ///
    /// - Parameters:
    ///   - requestDER: The request's bytes, as POSTed or base64-decoded from a GET path.
    ///   - revocations: Revoked certificates of this chain by ``serialKey(_:)``.
    ///   - now: `producedAt` and `thisUpdate`.
    public func respond(to requestDER: [UInt8], revocations: [String: Revocation], now: Date) -> [UInt8] {
        let response: OCSP.Response
        if let request = try? OCSP.Request(derEncoded: requestDER), !request.certIDs.isEmpty {
            response = answer(request, revocations: revocations, now: now)
        } else {
            response = OCSP.Response(error: .malformedRequest)
        }
        // An error response is a status and nothing else, which always encodes.
        return (try? response.derBytes) ?? [0x30, 0x03, 0x0A, 0x01, UInt8(OCSP.ResponseStatus.internalError.rawValue)]
    }

    private func answer(_ request: OCSP.Request, revocations: [String: Revocation], now: Date) -> OCSP.Response {
        let matched = request.certIDs.map { certID in issuers.first { Self.matches(certID, issuer: $0.certificate) } }
        guard let issuer = matched.first ?? nil,
            matched.allSatisfy({ $0?.certificate == issuer.certificate })
        else {
            return OCSP.Response(error: .unauthorized)
        }
        let responses = request.certIDs.map { certID in
            let status: OCSP.CertStatus
            if certID.serialNumber != Array(issuer.subject.serialNumber.bytes) {
                status = .unknown
            } else if let revocation = revocations[Self.serialKey(certID.serialNumber)] {
                status = .revoked(at: revocation.revokedAt, reason: revocation.reason)
            } else {
                status = .good
            }
            return OCSP.SingleResponse(
                certID: certID, status: status, thisUpdate: now, nextUpdate: now + Self.validitySeconds)
        }
        let data = OCSP.ResponseData(
            responderID: .byKey(of: issuer.certificate), producedAt: now, responses: responses,
            extensions: request.nonce.map { [$0] } ?? [])
        do {
            return OCSP.Response(basic: try OCSP.BasicResponse(signing: data, with: issuer.key))
        } catch {
            return OCSP.Response(error: .internalError)
        }
    }

    /// Whether a CertID names `issuer` by SHA-1 or SHA-256 hashes of its subject and key.
    private static func matches(_ certID: OCSP.CertID, issuer: Certificate) -> Bool {
        let sha256: Bool
        switch certID.hashAlgorithm.algorithm {
        case OCSP.sha256OID: sha256 = true
        case OCSP.sha1OID: sha256 = false
        default: return false
        }
        guard let expected = try? OCSP.CertID(certificate: issuer, issuer: issuer, sha256: sha256) else { return false }
        return certID.issuerNameHash == expected.issuerNameHash && certID.issuerKeyHash == expected.issuerKeyHash
    }
}
