import Crypto
import Foundation
import KioskCore
import X509

extension SigningKeyStore {
    /// The parsed files of one environment's directory, before validation.
    struct StoredChain {
        var directory: String
        var root: Certificate
        var intermediate: Certificate
        var leaf: Certificate
        var leafPrivateKey: P256.Signing.PrivateKey

        private static let regenerateHint =
            "delete the directory to have Kiosk generate a new chain "
            + "(merchants must then trust the new root)"

        /// Reads and parses the files, checking presence, key-file modes and PEM syntax.
        static func read(from directory: String) throws -> StoredChain {
            func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

            let missing = FileName.required.filter { !FileManager.default.fileExists(atPath: path($0)) }
            if let first = missing.first {
                throw KioskError(
                    .signingChainIncomplete,
                    "The signing directory \(directory) is incomplete: \(missing.joined(separator: ", ")) "
                        + "\(missing.count == 1 ? "is" : "are") missing.",
                    field: path(first),
                    fix: "Put back \(missing.joined(separator: ", ")) (an operator-supplied chain needs "
                        + "\(FileName.required.joined(separator: ", "))), or \(regenerateHint)."
                )
            }
            for name in FileName.privateKeys {
                guard let mode = PrivateFileWriter.mode(of: path(name)) else { continue }
                if mode & 0o077 != 0 {
                    throw KioskError(
                        .signingKeyPermissions,
                        "The private key \(path(name)) is readable by others (mode \(String(mode, radix: 8))).",
                        field: path(name),
                        fix: "Run `chmod 600 \(path(name))` so only the owner can read it."
                    )
                }
            }

            let root = try certificate(at: path(FileName.root))
            let intermediate = try certificate(at: path(FileName.intermediate))
            let leaf = try certificate(at: path(FileName.leaf))
            let leafKeyPath = path(FileName.leafKey)
            let leafKey: P256.Signing.PrivateKey
            do {
                leafKey = try P256.Signing.PrivateKey(pemRepresentation: try text(at: leafKeyPath))
            } catch let error as KioskError {
                throw error
            } catch {
                throw KioskError(
                    .signingKeyInvalid, "\(leafKeyPath) is not an EC P-256 private key in PEM (PKCS#8 or SEC1).",
                    field: leafKeyPath,
                    fix:
                        "Put the leaf's P-256 private key there as `-----BEGIN PRIVATE KEY-----`, or \(regenerateHint)."
                )
            }
            try checkOptionalKey(at: path(FileName.rootKey), matches: root)
            try checkOptionalKey(at: path(FileName.intermediateKey), matches: intermediate)
            return StoredChain(
                directory: directory,
                root: root,
                intermediate: intermediate,
                leaf: leaf,
                leafPrivateKey: leafKey
            )
        }

        /// Checks that the parts belong together and form a chain Apple's verifiers accept at `now`.
        func validated(at now: Date) async throws -> SigningIdentity {
            func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }

            guard let leafPublicKey = P256.Signing.PublicKey(leaf.publicKey) else {
                throw KioskError(
                    .signingLeafNotP256,
                    "The leaf certificate \(path(FileName.leaf)) has a key that is not EC P-256; ES256 needs P-256.",
                    field: path(FileName.leaf),
                    fix: "Issue the leaf for a P-256 key, or \(Self.regenerateHint)."
                )
            }
            guard leafPublicKey.rawRepresentation == leafPrivateKey.publicKey.rawRepresentation else {
                throw KioskError(
                    .signingKeyMismatch,
                    "\(path(FileName.leafKey)) is not the private key of the leaf certificate \(path(FileName.leaf)).",
                    field: path(FileName.leafKey),
                    fix: "Put the leaf's own private key in \(FileName.leafKey), or \(Self.regenerateHint)."
                )
            }
            guard root.issuer == root.subject, root.publicKey.isValidSignature(root.signature, for: root) else {
                throw KioskError(
                    .signingRootNotSelfSigned, "\(path(FileName.root)) is not a self-signed root certificate.",
                    field: path(FileName.root),
                    fix: "Put the chain's self-signed root CA in \(FileName.root), or \(Self.regenerateHint)."
                )
            }
            let result = await ChainValidator.validate(leaf: leaf, intermediate: intermediate, roots: [root], at: now)
            switch result {
            case .success:
                break
            case .failure(.missingMarker(let detail)):
                let file = detail.contains("leaf") ? FileName.leaf : FileName.intermediate
                throw KioskError(
                    .signingMarkerMissing, "\(path(file)): \(detail). Apple's verifiers refuse a chain without it.",
                    field: path(file),
                    fix: "Reissue it with the non-critical extension \(SigningProfile.leafMarkerOID) (leaf) or "
                        + "\(SigningProfile.intermediateMarkerOID) (intermediate), value DER NULL, or "
                        + "\(Self.regenerateHint)."
                )
            case .failure(let failure):
                throw KioskError(
                    .signingChainInvalid,
                    "The certificates in \(directory) do not form a valid chain at \(now): \(failure).",
                    field: directory,
                    fix: "Make \(FileName.leaf) issued by \(FileName.intermediate), issued by \(FileName.root), all "
                        + "valid now, with the extensions of Apple's chain; or \(Self.regenerateHint)."
                )
            }
            do {
                return try SigningIdentity(
                    root: root,
                    intermediate: intermediate,
                    leaf: leaf,
                    leafPrivateKey: leafPrivateKey
                )
            } catch {
                throw KioskError(
                    .signingChainInvalid, "The certificates in \(directory) cannot be re-encoded as DER: \(error).",
                    field: directory,
                    fix: "Replace the certificates, or \(Self.regenerateHint)."
                )
            }
        }

        private static func text(at path: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw KioskError(
                    .signingFileUnreadable, "\(path) cannot be read.",
                    field: path,
                    fix: "Make it readable by the user running Kiosk."
                )
            }
            return String(decoding: data, as: UTF8.self)
        }

        private static func certificate(at path: String) throws -> Certificate {
            let pem = try text(at: path)
            do {
                return try Certificate(pemEncoded: pem)
            } catch {
                throw KioskError(
                    .signingCertificateInvalid,
                    "\(path) is not a PEM certificate (`-----BEGIN CERTIFICATE-----`): \(error).",
                    field: path,
                    fix: "Put the PEM certificate back, or \(regenerateHint)."
                )
            }
        }

        private static func checkOptionalKey(at path: String, matches certificate: Certificate) throws {
            guard FileManager.default.fileExists(atPath: path) else { return }
            let key: Certificate.PrivateKey
            do {
                key = try Certificate.PrivateKey(pemEncoded: try text(at: path))
            } catch let error as KioskError {
                throw error
            } catch {
                throw KioskError(
                    .signingKeyInvalid, "\(path) is not a private key in PEM.",
                    field: path,
                    fix: "Put the PKCS#8 PEM private key back, or remove the file (it is optional)."
                )
            }
            guard key.publicKey == certificate.publicKey else {
                throw KioskError(
                    .signingKeyMismatch, "\(path) is not the private key of the certificate beside it.",
                    field: path,
                    fix: "Put the matching key there, or remove the file (it is optional)."
                )
            }
        }
    }
}
