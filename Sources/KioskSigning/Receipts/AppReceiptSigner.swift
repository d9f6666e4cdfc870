import Foundation
@_spi(CMS) import X509

/// Signs app receipts the way the App Store packages them: a DER CMS/PKCS #7 `SignedData` (RFC 5652) whose
/// encapsulated `pkcs7-data` content is the attached receipt payload, digested with SHA-256 and signed with
/// ECDSA by the identity's leaf key, with the leaf and the intermediate certificates embedded.
///
/// ```swift
/// let receiptDER = try AppReceiptSigner(identity: identity).sign(receipt)
/// let base64 = Data(receiptDER).base64EncodedString()   // what the app reads from appStoreReceiptURL
/// ```
public struct AppReceiptSigner: Sendable {
    /// The identity whose leaf key signs and whose leaf and intermediate are embedded.
    public let identity: SigningIdentity

    /// Creates a signer for one identity.
    public init(identity: SigningIdentity) {
        self.identity = identity
    }

    /// Encodes `receipt` with ``AppReceipt/payloadDER()`` and signs it.
    ///
    /// - Returns: The DER `ContentInfo`, the bytes of the receipt file.
    /// - Throws: when the payload cannot be encoded or the signature cannot be made.
    public func sign(_ receipt: AppReceipt) throws -> [UInt8] {
        try sign(payloadDER: receipt.payloadDER())
    }

    /// Signs payload bytes as they are, attached to the container.
    ///
    /// - Returns: The DER `ContentInfo`, the bytes of the receipt file.
    /// - Throws: when the signature cannot be made.
    public func sign(payloadDER: [UInt8]) throws -> [UInt8] {
        // No signing time means no signed attributes: the signature covers the payload itself, as in Apple's
        // receipts. `detached: false` attaches the payload as eContent.
        try CMS.sign(
            payloadDER,
            signatureAlgorithm: .ecdsaWithSHA256,
            additionalIntermediateCertificates: [identity.intermediate],
            certificate: identity.leaf,
            privateKey: Certificate.PrivateKey(identity.leafPrivateKey),
            signingTime: nil,
            detached: false
        )
    }
}
