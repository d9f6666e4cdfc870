import Crypto
import Foundation
import SwiftASN1
import X509

/// Asks a certificate's OCSP responder whether it is revoked, the way Apple's verifiers do with online checks on:
/// the URL from the certificate's AuthorityInformationAccess extension, a CertID hashed with SHA-256, an HTTP POST.
///
/// The answer must be a `successful` BasicOCSPResponse from the issuer (ResponderID byKey or byName of the issuer,
/// signed by the issuer's key; delegated responder certificates are not accepted), about this CertID, with
/// `thisUpdate ≤ now + 60 s` and a `nextUpdate ≥ now − 60 s`, and the request's nonce if it echoes one.
struct OCSPStatusChecker: Sendable {
    /// Clock skew tolerated on `thisUpdate` and `nextUpdate`, as Apple's verifiers allow.
    static let leewaySeconds: TimeInterval = 60

    let transport: any OCSPTransport

    /// Checks that `certificate` (called `role` in errors) is `good` according to `issuer`'s responder at `now`.
    ///
    /// - Throws: ``SignedDataVerificationError``: `verificationFailure` when the certificate names no responder,
    ///   is revoked or unknown, or the answer is not acceptable; `retryableVerificationFailure` when the responder
    ///   cannot be reached or answers another HTTP status than 200.
    func requireGood(_ certificate: Certificate, role: String, issuer: Certificate, now: Date) async throws {
        func failure(_ detail: String) -> SignedDataVerificationError {
            .init(.verificationFailure, "\(role): \(detail)")
        }
        guard let url = SigningProfile.ocspURL(of: certificate) else {
            throw failure("the certificate names no OCSP responder (AuthorityInformationAccess), so online checks fail")
        }
        let certID: OCSP.CertID
        let requestDER: [UInt8]
        let nonce: Certificate.Extension
        do {
            certID = try OCSP.CertID(certificate: certificate, issuer: issuer, sha256: true)
            let nonceBytes = (0..<16).map { _ in UInt8.random(in: .min ... .max) }
            nonce = Certificate.Extension(
                oid: OCSP.nonceOID, critical: false,
                value: try ASN1OctetString(contentBytes: nonceBytes[...]).derBytes[...])
            requestDER = try OCSP.Request(certIDs: [certID], extensions: [nonce]).derBytes
        } catch {
            throw failure("cannot build an OCSP request: \(error)")
        }

        let answer: (status: Int, body: [UInt8])
        do {
            answer = try await transport.post(requestDER, to: url)
        } catch {
            throw SignedDataVerificationError(
                .retryableVerificationFailure, "\(role): the OCSP responder \(url) cannot be reached: \(error)")
        }
        guard answer.status == 200 else {
            throw SignedDataVerificationError(
                .retryableVerificationFailure, "\(role): the OCSP responder \(url) answered HTTP \(answer.status)")
        }
        guard let response = try? OCSP.Response(derEncoded: answer.body) else {
            throw failure("the answer of \(url) is not a DER OCSPResponse")
        }
        guard let basic = response.basic else {
            throw failure("the OCSP responder \(url) answered \(response.status)")
        }
        let data = basic.responseData
        switch data.responderID {
        case .byKey(let hash) where hash == Array(Insecure.SHA1.hash(data: issuer.publicKey.subjectPublicKeyInfoBytes)):
            break
        case .byName(let name) where name == issuer.subject:
            break
        default:
            throw failure("the OCSP response is not from the issuer \(issuer.subject)")
        }
        guard basic.isSigned(by: issuer) else {
            throw failure("the OCSP response's signature is not the issuer's")
        }
        if let echoed = data.extensions.first(where: { $0.oid == OCSP.nonceOID }), echoed.value != nonce.value {
            throw failure("the OCSP response's nonce is not the request's")
        }
        guard let single = data.responses.first(where: { $0.certID == certID }) else {
            throw failure("the OCSP response does not answer for this certificate")
        }
        guard single.thisUpdate <= now + Self.leewaySeconds else {
            throw failure("the OCSP response's thisUpdate \(single.thisUpdate) is in the future (now \(now))")
        }
        guard let nextUpdate = single.nextUpdate, nextUpdate >= now - Self.leewaySeconds else {
            throw failure("the OCSP response has no nextUpdate, or it has passed (now \(now))")
        }
        switch single.status {
        case .good:
            return
        case .revoked(let at, let reason):
            throw failure("the certificate was revoked at \(at)\(reason.map { " (CRLReason \($0))" } ?? "")")
        case .unknown:
            throw failure("the OCSP responder does not know the certificate")
        }
    }
}
