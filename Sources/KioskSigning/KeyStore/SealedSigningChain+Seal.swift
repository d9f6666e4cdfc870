import Crypto
import Foundation
import KioskCore
import SwiftASN1
import X509

extension SealedSigningChain {
    /// Seals a chain for the database: the certificates as PEM, each private key sealed with `key` and bound to its
    /// environment and role, so a sealed key moved to another column or row no longer opens.
    ///
    /// - Throws: when a certificate cannot be serialized (a programming error for a validated chain).
    public init(
        sealing identity: SigningIdentity, authorityKeys: SigningKeyStore.AuthorityKeys?,
        environment: StoreEnvironment, version: Int64, with key: IdentityKey, at now: Date
    ) throws {
        func seal(_ raw: Data, _ role: String) throws -> String {
            try key.seal(raw, context: Self.sealingContext(environment, role))
        }
        self.init(
            environment: environment, version: version,
            rootCertificatePEM: try identity.root.serializeAsPEM().pemString,
            intermediateCertificatePEM: try identity.intermediate.serializeAsPEM().pemString,
            leafCertificatePEM: try identity.leaf.serializeAsPEM().pemString,
            sealedLeafKey: try seal(identity.leafPrivateKey.rawRepresentation, "leaf"),
            sealedRootKey: try authorityKeys.map { try seal($0.rootPrivateKey.rawRepresentation, "root") },
            sealedIntermediateKey: try authorityKeys.map {
                try seal($0.intermediatePrivateKey.rawRepresentation, "intermediate")
            },
            updatedAt: now)
    }

    /// The SHA-256 of the root certificate's DER in lower-case hex, which tells chains apart without the identity
    /// key (see ``SigningIdentity/rootSHA256``).
    ///
    /// - Throws: ``KioskError`` `signing_identity_corrupt` when the stored root is not a PEM certificate.
    public func rootSHA256() throws -> String {
        do {
            return SigningIdentity.sha256Hex(try PEMDocument(pemString: rootCertificatePEM).derBytes)
        } catch {
            throw corrupt("its root certificate is not PEM")
        }
    }

    /// Opens the sealed keys with `key` and checks the chain as one read from a directory is checked: the leaf is
    /// P-256 and its key's, the root self-signed, the chain valid at `now` with Apple's markers, and the CA keys, if
    /// any, the certificates' own.
    ///
    /// - Throws: ``KioskError`` `signing_identity_key_wrong` when `key` does not open the keys (the only way to tell
    ///   a wrong key), `signing_identity_corrupt` when the row is not what Kiosk writes, or the chain's own error.
    public func open(with key: IdentityKey, now: Date) async throws -> (
        identity: SigningIdentity, authorityKeys: SigningKeyStore.AuthorityKeys?
    ) {
        func unseal(_ sealed: String, _ role: String) throws -> Data {
            let opened: Data?
            do {
                opened = try key.open(sealed, context: Self.sealingContext(environment, role))
            } catch {
                throw corrupt("its sealed \(role) key is not base64 of an AES-GCM box")
            }
            guard let opened else {
                throw KioskError(
                    .signingIdentityKeyWrong,
                    "The identity key from \(key.source) does not open this database's \(environment.rawValue) "
                        + "signing keys: they were sealed with another key.",
                    field: key.source,
                    fix: "Use the identity key of the store that first started on this database: the text of its "
                        + "<data-dir>/\(IdentityKey.fileName), or the KIOSK_IDENTITY_KEY it was given.")
            }
            return opened
        }
        let leafKey: P256.Signing.PrivateKey
        do {
            leafKey = try P256.Signing.PrivateKey(rawRepresentation: try unseal(sealedLeafKey, "leaf"))
        } catch let error as KioskError {
            throw error
        } catch {
            throw corrupt("its sealed leaf key is not a P-256 key")
        }
        var authorityKeys: SigningKeyStore.AuthorityKeys?
        switch (sealedRootKey, sealedIntermediateKey) {
        case (let root?, let intermediate?):
            do {
                authorityKeys = SigningKeyStore.AuthorityKeys(
                    rootPrivateKey: try P384.Signing.PrivateKey(rawRepresentation: try unseal(root, "root")),
                    intermediatePrivateKey: try P384.Signing.PrivateKey(
                        rawRepresentation: try unseal(intermediate, "intermediate")))
            } catch let error as KioskError {
                throw error
            } catch {
                throw corrupt("its sealed CA keys are not P-384 keys")
            }
        case (nil, nil):
            authorityKeys = nil
        default:
            throw corrupt("it holds one CA key without the other")
        }
        let chain: SigningKeyStore.StoredChain
        do {
            chain = SigningKeyStore.StoredChain(
                directory: "the database's \(environment.rawValue) signing chain",
                root: try Certificate(pemEncoded: rootCertificatePEM),
                intermediate: try Certificate(pemEncoded: intermediateCertificatePEM),
                leaf: try Certificate(pemEncoded: leafCertificatePEM), leafPrivateKey: leafKey)
        } catch {
            throw corrupt("its certificates are not PEM")
        }
        let identity = try await chain.validated(at: now)
        if let authorityKeys {
            guard Certificate.PublicKey(authorityKeys.rootPrivateKey.publicKey) == chain.root.publicKey,
                Certificate.PublicKey(authorityKeys.intermediatePrivateKey.publicKey) == chain.intermediate.publicKey
            else { throw corrupt("its CA keys are not its certificates' keys") }
        }
        return (identity, authorityKeys)
    }

    /// What a sealed key is bound to: a box sealed for another environment or role does not open.
    static func sealingContext(_ environment: StoreEnvironment, _ role: String) -> String {
        "kiosk signing key v1 \(environment.rawValue) \(role)"
    }

    private func corrupt(_ what: String) -> KioskError {
        KioskError(
            .signingIdentityCorrupt,
            "The database's \(environment.rawValue) signing chain (table signing_chains) cannot be used: \(what).",
            field: "signing_chains",
            fix: "Restore the database from a backup; Kiosk writes this table itself and never leaves it so.")
    }
}
