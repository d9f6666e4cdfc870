import Foundation
import KioskCore
import KioskSigning

/// The store's signing identities, one chain per environment, and their JWS signers.
public struct StoreSigning: Sendable {
    public let identities: [StoreEnvironment: SigningIdentity]
    private let signers: [StoreEnvironment: JWSSigner]
    private let transactionReceiptSigners: [StoreEnvironment: TransactionReceiptSigner]
    /// One of each receipt verifier per environment, kept so each validates its signing chain once.
    private let appReceiptVerifiers: [StoreEnvironment: AppReceiptVerifier]
    private let transactionReceiptVerifiers: [StoreEnvironment: TransactionReceiptVerifier]

    /// - Throws: when a certificate of an identity cannot be serialized (it was read from disk, so it can).
    public init(identities: [StoreEnvironment: SigningIdentity]) throws {
        self.identities = identities
        self.signers = identities.mapValues { JWSSigner(identity: $0) }
        self.transactionReceiptSigners = try identities.mapValues { try TransactionReceiptSigner(identity: $0) }
        self.appReceiptVerifiers = identities.mapValues { AppReceiptVerifier(rootCertificates: [$0.root]) }
        self.transactionReceiptVerifiers = identities.mapValues {
            TransactionReceiptVerifier(rootCertificates: [$0.root])
        }
    }

    /// Verifies app receipts signed by the environment's chain.
    func appReceiptVerifier(_ environment: StoreEnvironment) -> AppReceiptVerifier {
        guard let verifier = appReceiptVerifiers[environment] else {
            preconditionFailure("no signing identity for \(environment)")
        }
        return verifier
    }

    /// Verifies iOS 6-style transaction receipts signed by the environment's chain.
    func transactionReceiptVerifier(_ environment: StoreEnvironment) -> TransactionReceiptVerifier {
        guard let verifier = transactionReceiptVerifiers[environment] else {
            preconditionFailure("no signing identity for \(environment)")
        }
        return verifier
    }

    public func identity(_ environment: StoreEnvironment) -> SigningIdentity {
        guard let identity = identities[environment] else {
            preconditionFailure("no signing identity for \(environment)")
        }
        return identity
    }

    /// Signs `payload` as a compact JWS with the environment's leaf key and `x5c` chain.
    public func sign(_ payload: some Encodable, environment: StoreEnvironment) throws -> String {
        guard let signer = signers[environment] else { preconditionFailure("no signer for \(environment)") }
        return try signer.sign(payload: payload)
    }

    /// Signs payload bytes that are already JSON (``JWSSigner/payloadJSON(_:)``) as a compact JWS with the
    /// environment's leaf key and `x5c` chain.
    public func sign(payloadJSON: [UInt8], environment: StoreEnvironment) throws -> String {
        guard let signer = signers[environment] else { preconditionFailure("no signer for \(environment)") }
        return try signer.sign(payloadJSON: payloadJSON)
    }

    /// Signs a notification's payload: the `signedPayload` it is sent and listed with.
    public func sign(_ notification: ServerNotification) throws -> String {
        try sign(payloadJSON: Array(notification.payload.utf8), environment: notification.environment)
    }

    /// Signs an iOS 6-style transaction receipt; returns its base64 text.
    public func sign(_ receipt: TransactionReceipt) throws -> String {
        guard let signer = transactionReceiptSigners[receipt.environment] else {
            preconditionFailure("no signer for \(receipt.environment)")
        }
        return try signer.sign(receipt)
    }

    /// Signs an app receipt as PKCS #7; returns the DER bytes.
    public func sign(_ receipt: AppReceipt, environment: StoreEnvironment) throws -> [UInt8] {
        try AppReceiptSigner(identity: identity(environment)).sign(receipt)
    }
}
