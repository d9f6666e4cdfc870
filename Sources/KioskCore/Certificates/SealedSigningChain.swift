import Foundation

/// One environment's signing chain as the database keeps it, so every replica of a store signs with the same
/// chain: the certificates in PEM, the private keys sealed (AES-GCM) with the store's identity key, which never
/// enters the database. `KioskSigning` seals and opens it.
public struct SealedSigningChain: Sendable, Hashable {
    public var environment: StoreEnvironment
    /// Starts at 1 and grows by one with each change (a reissue), so two replicas never overwrite each other's
    /// change unseen: a change names the version it replaces.
    public var version: Int64
    public var rootCertificatePEM: String
    public var intermediateCertificatePEM: String
    public var leafCertificatePEM: String
    /// Base64 of the sealed box (nonce, ciphertext, tag) of the leaf's private key.
    public var sealedLeafKey: String
    /// The sealed CA keys, both or neither (an operator's chain may come without them).
    public var sealedRootKey: String?
    public var sealedIntermediateKey: String?
    public var updatedAt: Date

    public init(
        environment: StoreEnvironment, version: Int64, rootCertificatePEM: String, intermediateCertificatePEM: String,
        leafCertificatePEM: String, sealedLeafKey: String, sealedRootKey: String?, sealedIntermediateKey: String?,
        updatedAt: Date
    ) {
        self.environment = environment
        self.version = version
        self.rootCertificatePEM = rootCertificatePEM
        self.intermediateCertificatePEM = intermediateCertificatePEM
        self.leafCertificatePEM = leafCertificatePEM
        self.sealedLeafKey = sealedLeafKey
        self.sealedRootKey = sealedRootKey
        self.sealedIntermediateKey = sealedIntermediateKey
        self.updatedAt = updatedAt
    }
}
