import Foundation
import KioskCore
import SwiftASN1
import X509

/// Verifies iOS 6-style transaction receipts made by ``TransactionReceiptSigner``.
///
/// The checks, in order: base64 of an old-style property list with `purchase-info` and `signature`, and an
/// `environment` that is absent (production) or `Sandbox`; Kiosk's `signature` layout (see
/// ``TransactionReceiptSigner``); the embedded leaf's ECDSA-SHA256 signature over exactly the `purchase-info`
/// bytes; the leaf ← embedded intermediate ← one of the trusted roots under RFC 5280 at the purchase date (the
/// only field read before), with Apple's marker extensions, as ``JWSVerifier`` checks a JWS chain; last, the
/// purchase-info fields, which must parse.
///
/// ```swift
/// let verifier = TransactionReceiptVerifier(rootCertificates: [identity.root])
/// if let receipt = await verifier.verify(transactionReceipt).receipt { deliver(receipt.productId) }
/// ```
public struct TransactionReceiptVerifier: Sendable {
    /// The roots a chain must lead to.
    public let rootCertificates: [Certificate]
    /// Keep one verifier to validate each signing chain once.
    private let validatedChains = ValidatedChainCache<[Certificate]>()

    /// Creates a verifier trusting exactly these roots (for Kiosk, the exported root of one environment).
    public init(rootCertificates: [Certificate]) {
        self.rootCertificates = rootCertificates
    }

    /// Verifies the base64 text of a transaction receipt.
    ///
    /// - Returns: `.verified` with the parsed receipt, or `.invalid` with the first reason it was refused.
    public func verify(_ transactionReceipt: String) async -> ReceiptVerificationResult<TransactionReceipt> {
        let parts: Parts
        do {
            parts = try Parts(transactionReceipt)
        } catch {
            return .invalid(.malformedContainer("\(error)"))
        }
        guard
            parts.leaf.publicKey.isValidSignature(
                parts.signature, for: parts.purchaseInfo, signatureAlgorithm: .ecdsaWithSHA256
            )
        else {
            return .invalid(.invalidSignature)
        }
        let purchaseDate: Date
        do {
            purchaseDate = try TransactionReceipt.purchaseDate(purchaseInfo: parts.purchaseInfo)
        } catch {
            return .invalid(.malformedPayload("\(error)"))
        }
        let chain = await ChainValidator.validate(
            leaf: parts.leaf, intermediate: parts.intermediate, roots: rootCertificates, at: purchaseDate,
            remembering: validatedChains
        )
        if case .failure(let failure) = chain {
            return .invalid(.untrustedChain(failure.description))
        }
        do {
            return .verified(try TransactionReceipt(purchaseInfo: parts.purchaseInfo, environment: parts.environment))
        } catch {
            return .invalid(.malformedPayload("\(error)"))
        }
    }

    /// The outer property list taken apart, nothing verified yet.
    private struct Parts {
        var environment: StoreEnvironment
        var purchaseInfo: [UInt8]
        var signature: [UInt8]
        var leaf: Certificate
        var intermediate: Certificate

        init(_ transactionReceipt: String) throws {
            guard let outer = Data(base64Encoded: transactionReceipt, options: .ignoreUnknownCharacters) else {
                throw ReceiptDecodingError("the receipt is not base64")
            }
            let fields = try ASCIIPropertyList.parse(String(decoding: outer, as: UTF8.self))
            switch fields["environment"] {
            case nil: environment = .production
            case "Sandbox": environment = .sandbox
            case let other?: throw ReceiptDecodingError("unknown environment \"\(other)\"")
            }
            guard let purchaseInfo = fields["purchase-info"].flatMap({ Data(base64Encoded: $0) }),
                let blob = fields["signature"].flatMap({ Data(base64Encoded: $0) }).map(Array.init)
            else {
                throw ReceiptDecodingError("\"purchase-info\" and \"signature\" must both be present, in base64")
            }
            self.purchaseInfo = Array(purchaseInfo)

            guard blob.count > 5, blob[0] == TransactionReceiptSigner.signatureVersion else {
                throw ReceiptDecodingError("the signature does not start with version byte 3")
            }
            let length = blob[1..<5].reduce(0) { $0 << 8 | Int($1) }
            guard length <= blob.count - 5 else { throw ReceiptDecodingError("the signature length is too long") }
            signature = Array(blob[5..<(5 + length)])
            // The certificates are concatenated DER, which is exactly the content of a SEQUENCE OF Certificate.
            var sequence = DER.Serializer()
            sequence.appendConstructedNode(identifier: .sequence) { $0.serializeRawBytes(blob[(5 + length)...]) }
            let certificates = try DER.sequence(DER.parse(sequence.serializedBytes), identifier: .sequence) { nodes in
                var parsed: [Certificate] = []
                while let node = nodes.next() { parsed.append(try Certificate(embeddedInReceipt: node)) }
                return parsed
            }
            guard certificates.count == 2 else {
                throw ReceiptDecodingError("the signature embeds \(certificates.count) certificates; 2 are required")
            }
            leaf = certificates[0]
            intermediate = certificates[1]
        }
    }
}
