import Foundation
import KioskCore

/// Signs iOS 6-style transaction receipts: the base64 of Apple's outer property list
///
/// ```
/// {
/// 	"signature" = "<base64>";
/// 	"purchase-info" = "<base64 of the purchase-info property list>";
/// 	"environment" = "Sandbox";
/// 	"pod" = "100";
/// 	"signing-status" = "0";
/// }
/// ```
///
/// with `environment` left out in production, as Apple does.
///
/// Apple's binary layout of `signature` is not public, so Kiosk documents its own: the byte `0x03`, the length
/// of the signature as 4 bytes big-endian, the DER ECDSA signature with SHA-256 by the leaf key over exactly
/// the `purchase-info` bytes (before base64), then the leaf certificate's DER and the intermediate's DER.
/// Embedding the intermediate lets a verifier check the chain with only the root, as for app receipts.
public struct TransactionReceiptSigner: Sendable {
    /// The identity whose leaf key signs and whose leaf and intermediate are embedded.
    public let identity: SigningIdentity
    private let certificatesDER: [UInt8]

    /// The first byte of Kiosk's `signature` layout.
    static let signatureVersion: UInt8 = 3

    /// Creates a signer for one identity.
    ///
    /// - Throws: when a certificate cannot be serialized to DER.
    public init(identity: SigningIdentity) throws {
        self.identity = identity
        self.certificatesDER =
            try SigningIdentity.derBytes(of: identity.leaf) + SigningIdentity.derBytes(of: identity.intermediate)
    }

    /// Renders and signs a receipt.
    ///
    /// - Returns: The base64 text an app reads from `transactionReceipt` and sends to its server.
    /// - Throws: when the signature cannot be made.
    public func sign(_ receipt: TransactionReceipt) throws -> String {
        try sign(purchaseInfo: receipt.purchaseInfo, environment: receipt.environment)
    }

    /// Signs `purchase-info` bytes as they are, as ``AppReceiptSigner/sign(payloadDER:)`` signs a payload.
    ///
    /// - Returns: The base64 text of the outer property list.
    /// - Throws: when the signature cannot be made.
    public func sign(purchaseInfo: [UInt8], environment: StoreEnvironment) throws -> String {
        let signature = try identity.leafPrivateKey.signature(for: purchaseInfo).derRepresentation
        var blob = [Self.signatureVersion]
        withUnsafeBytes(of: UInt32(signature.count).bigEndian) { blob.append(contentsOf: $0) }
        blob += signature + certificatesDER

        var entries: [(key: String, value: String)] = [
            ("signature", Data(blob).base64EncodedString()),
            ("purchase-info", Data(purchaseInfo).base64EncodedString()),
        ]
        if environment == .sandbox { entries.append(("environment", "Sandbox")) }
        entries += [("pod", "100"), ("signing-status", "0")]
        return Data(ASCIIPropertyList.render(entries).utf8).base64EncodedString()
    }
}
