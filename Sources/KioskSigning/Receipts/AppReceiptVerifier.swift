import Crypto
import Foundation
import KioskCore
import X509

/// Verifies app receipts made by ``AppReceiptSigner`` the way a device or a merchant server checks Apple's.
///
/// The checks, in order: a DER PKCS #7 `SignedData` with attached `pkcs7-data` content and one signer; digest
/// SHA-256 and ECDSA with SHA-256, without signed attributes; the embedded signer certificate's signature over
/// exactly the payload; the embedded leaf ← the embedded certificate that issued it ← one of the trusted roots
/// under RFC 5280 **at the receipt creation date** (attribute 12, the only field read before), with Apple's marker
/// extensions, as ``JWSVerifier`` checks a JWS chain; last, a payload that decodes as an ``AppReceipt``. So a
/// receipt signed while the leaf was valid stays verifiable after the leaf expires.
///
/// The answer depends on nothing but the receipt's bytes and the roots, so a verifier remembers the receipts it
/// accepted (the last 256 of at most 16 KiB, by the SHA-256 of their bytes): apps send the same receipt again and
/// again, and a receipt seen before is answered without parsing its container or checking its signature again. The
/// bounds keep what is remembered to a few megabytes, however many purchases a receipt lists.
///
/// ```swift
/// let verifier = AppReceiptVerifier(rootCertificates: [identity.root])
/// switch await verifier.verify(base64: receiptBase64) {
/// case .verified(let receipt): …
/// case .invalid(let failure): …
/// }
/// ```
public struct AppReceiptVerifier: Sendable {
    /// The roots a chain must lead to.
    public let rootCertificates: [Certificate]
    /// Keep one verifier to validate each signing chain once.
    private let validatedChains = ValidatedChainCache<[Certificate]>()
    /// The receipts this verifier accepted, by the SHA-256 of their DER bytes.
    private let verifiedReceipts = BoundedCache<SHA256Digest, AppReceipt>(capacity: 256)
    /// The largest receipt remembered; a receipt of a few purchases is 3–5 KiB.
    private static let rememberedBytes = 16 * 1_024

    /// Creates a verifier trusting exactly these roots (for Kiosk, the exported root of one environment).
    public init(rootCertificates: [Certificate]) {
        self.rootCertificates = rootCertificates
    }

    /// Verifies a receipt given as base64, as apps send it; line breaks are ignored.
    public func verify(base64 receipt: String) async -> ReceiptVerificationResult<AppReceipt> {
        guard let der = Data(base64Encoded: receipt, options: .ignoreUnknownCharacters), !der.isEmpty else {
            return .invalid(.malformedContainer("the receipt is not base64"))
        }
        return await verify(Array(der))
    }

    /// Verifies the DER bytes of a receipt file (see the type's documentation).
    ///
    /// - Returns: `.verified` with the decoded receipt, or `.invalid` with the first reason it was refused.
    public func verify(_ receiptDER: [UInt8]) async -> ReceiptVerificationResult<AppReceipt> {
        guard receiptDER.count <= Self.rememberedBytes else { return await verifyNow(receiptDER) }
        let digest = SHA256.hash(data: receiptDER)
        if let known = verifiedReceipts[digest] { return .verified(known) }
        let result = await verifyNow(receiptDER)
        if case .verified(let receipt) = result { verifiedReceipts.insert(receipt, for: digest) }
        return result
    }

    private func verifyNow(_ receiptDER: [UInt8]) async -> ReceiptVerificationResult<AppReceipt> {
        let container: SignedReceiptContainer
        do {
            container = try SignedReceiptContainer(derEncoded: receiptDER)
        } catch {
            return .invalid(.malformedContainer("\(error)"))
        }
        let signerInfo = container.signerInfo
        guard signerInfo.digestAlgorithm == SignedReceiptContainer.sha256OID,
            signerInfo.signatureAlgorithm == SignedReceiptContainer.ecdsaWithSHA256OID
        else {
            return .invalid(
                .unsupportedAlgorithm(
                    "digest \(signerInfo.digestAlgorithm), signature \(signerInfo.signatureAlgorithm)")
            )
        }
        guard !signerInfo.hasSignedAttributes else {
            return .invalid(.unsupportedAlgorithm("signed attributes; the signature must cover the payload itself"))
        }
        guard let leaf = container.signer else {
            return .invalid(.malformedContainer("no embedded certificate matches the signer info"))
        }
        guard
            leaf.publicKey.isValidSignature(
                signerInfo.signature, for: container.content, signatureAlgorithm: .ecdsaWithSHA256
            )
        else {
            return .invalid(.invalidSignature)
        }
        let creationDate: Date
        do {
            creationDate = try AppReceipt.creationDate(payloadDER: container.content)
        } catch {
            return .invalid(error)
        }
        guard let intermediate = container.certificates.first(where: { $0.subject == leaf.issuer && $0 != leaf })
        else {
            return .invalid(.untrustedChain("the receipt embeds no certificate that issued the signer"))
        }
        let chain = await ChainValidator.validate(
            leaf: leaf, intermediate: intermediate, roots: rootCertificates, at: creationDate,
            remembering: validatedChains
        )
        if case .failure(let failure) = chain {
            return .invalid(.untrustedChain(failure.description))
        }
        do {
            return .verified(try AppReceipt(payloadDER: container.content))
        } catch {
            return .invalid(error)
        }
    }
}
