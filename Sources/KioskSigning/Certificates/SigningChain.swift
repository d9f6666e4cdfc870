import Crypto
import Foundation
import KioskCore
import X509

/// A whole generated chain with the CA private keys: what Kiosk writes to disk on first start, so an
/// operator can later issue new leaves from the same root.
///
/// Only ``identity`` is needed to sign; the CA keys never leave the key store.
public struct SigningChain: Sendable {
    /// The certificates and the leaf key.
    public let identity: SigningIdentity
    /// The root CA's P-384 private key.
    public let rootPrivateKey: P384.Signing.PrivateKey
    /// The intermediate CA's P-384 private key.
    public let intermediatePrivateKey: P384.Signing.PrivateKey

    /// Generates a fresh root, intermediate and leaf for one environment, with the profile of ``SigningProfile``.
    ///
    /// - Parameters:
    ///   - environment: Names the environment in every subject, so the two chains can never be confused.
    ///   - now: The instant the validity windows are computed from.
    ///   - ocspURL: The OCSP responder the intermediate and the leaf name in their AuthorityInformationAccess
    ///     extension (`<public URL>/ocsp/<environment>`), or `nil` for a chain without one (offline checks only).
    /// - Throws: when a certificate cannot be built (which would be a programming error).
    public static func generate(
        environment: StoreEnvironment, now: Date, ocspURL: String? = nil
    ) throws -> SigningChain {
        let notBefore = now - SigningProfile.backdatingSeconds
        let authorityNotAfter = now + SigningProfile.authorityLifetimeSeconds
        let leafNotAfter = now + SigningProfile.leafLifetimeSeconds

        let rootKey = P384.Signing.PrivateKey()
        let rootPublicKey = Certificate.PublicKey(rootKey.publicKey)
        let rootSubject = try SigningProfile.rootSubject(environment)
        let rootKeyIdentifier = SubjectKeyIdentifier(hash: rootPublicKey)
        let root = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: rootPublicKey,
            notValidBefore: notBefore,
            notValidAfter: authorityNotAfter,
            issuer: rootSubject,
            subject: rootSubject,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                rootKeyIdentifier
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )

        let intermediateKey = P384.Signing.PrivateKey()
        let intermediatePublicKey = Certificate.PublicKey(intermediateKey.publicKey)
        let intermediateSubject = try SigningProfile.intermediateSubject(environment)
        let intermediateKeyIdentifier = SubjectKeyIdentifier(hash: intermediatePublicKey)
        let intermediate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: intermediatePublicKey,
            notValidBefore: notBefore,
            notValidAfter: authorityNotAfter,
            issuer: rootSubject,
            subject: intermediateSubject,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                intermediateKeyIdentifier
                AuthorityKeyIdentifier(keyIdentifier: rootKeyIdentifier.keyIdentifier)
                Certificate.Extension(
                    oid: SigningProfile.intermediateMarkerOID, critical: false, value: SigningProfile.markerValue[...]
                )
                if let ocspURL { SigningProfile.authorityInformationAccess(ocspURL: ocspURL) }
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )

        let leafKey = P256.Signing.PrivateKey()
        let leafPublicKey = Certificate.PublicKey(leafKey.publicKey)
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: leafPublicKey,
            notValidBefore: notBefore,
            notValidAfter: leafNotAfter,
            issuer: intermediateSubject,
            subject: try SigningProfile.leafSubject(environment),
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: leafPublicKey)
                AuthorityKeyIdentifier(keyIdentifier: intermediateKeyIdentifier.keyIdentifier)
                Certificate.Extension(
                    oid: SigningProfile.leafMarkerOID, critical: false, value: SigningProfile.markerValue[...]
                )
                if let ocspURL { SigningProfile.authorityInformationAccess(ocspURL: ocspURL) }
            },
            issuerPrivateKey: Certificate.PrivateKey(intermediateKey)
        )

        return SigningChain(
            identity: try SigningIdentity(root: root, intermediate: intermediate, leaf: leaf, leafPrivateKey: leafKey),
            rootPrivateKey: rootKey,
            intermediatePrivateKey: intermediateKey
        )
    }

    /// Issues a new intermediate and leaf for the same keys, subjects and validity windows, with new serial numbers
    /// and `ocspURL` in their AuthorityInformationAccess extension. The root and every key stay, so merchants'
    /// trust and signatures made before keep working.
    ///
    /// - Throws: when a certificate cannot be built.
    public func reissued(ocspURL: String) throws -> SigningChain {
        let old = identity
        func reissue(_ certificate: Certificate, signer: P384.Signing.PrivateKey) throws -> Certificate {
            var extensions = certificate.extensions
            let aia = try SigningProfile.authorityInformationAccess(ocspURL: ocspURL).makeCertificateExtension()
            extensions[oid: aia.oid] = aia
            return try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: certificate.publicKey,
                notValidBefore: certificate.notValidBefore,
                notValidAfter: certificate.notValidAfter,
                issuer: certificate.issuer,
                subject: certificate.subject,
                signatureAlgorithm: certificate.signatureAlgorithm,
                extensions: extensions,
                issuerPrivateKey: Certificate.PrivateKey(signer)
            )
        }
        return SigningChain(
            identity: try SigningIdentity(
                root: old.root,
                intermediate: try reissue(old.intermediate, signer: rootPrivateKey),
                leaf: try reissue(old.leaf, signer: intermediatePrivateKey),
                leafPrivateKey: old.leafPrivateKey
            ),
            rootPrivateKey: rootPrivateKey,
            intermediatePrivateKey: intermediatePrivateKey
        )
    }
}
