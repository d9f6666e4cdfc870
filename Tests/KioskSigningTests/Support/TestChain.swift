import Crypto
import Foundation
import KioskSigning
import SwiftASN1
import X509

/// Builds deliberately varied chains (missing markers, odd validity, other keys) that
/// `SigningChain.generate` never produces, to prove the verifier and the key store refuse them.
struct TestChain {
    var root: Certificate
    var intermediate: Certificate
    var leaf: Certificate
    var leafKey: P256.Signing.PrivateKey

    struct Options {
        var leafMarker = true
        var intermediateMarker = true
        var criticalLeafMarker = false
        var leafNotBefore: Date
        var leafNotAfter: Date
        var commonNamePrefix = "Operator"

        init(now: Date) {
            leafNotBefore = now - 86_400
            leafNotAfter = now + 365 * 86_400
        }
    }

    static func build(now: Date, configure: (inout Options) -> Void = { _ in }) throws -> TestChain {
        var options = Options(now: now)
        configure(&options)
        let rootKey = P384.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("\(options.commonNamePrefix) Root") }
        let rootSKI = SubjectKeyIdentifier(hash: Certificate.PublicKey(rootKey.publicKey))
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: now - 365 * 86_400, notValidAfter: now + 10 * 365 * 86_400,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                rootSKI
            },
            issuerPrivateKey: .init(rootKey)
        )
        let intermediateKey = P384.Signing.PrivateKey()
        let intermediateName = try DistinguishedName { CommonName("\(options.commonNamePrefix) Intermediate") }
        let intermediateSKI = SubjectKeyIdentifier(hash: Certificate.PublicKey(intermediateKey.publicKey))
        var intermediateExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            intermediateSKI
            AuthorityKeyIdentifier(keyIdentifier: rootSKI.keyIdentifier)
        }
        if options.intermediateMarker {
            try intermediateExtensions.append(
                .init(oid: SigningProfile.intermediateMarkerOID, critical: false, value: [0x05, 0x00])
            )
        }
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: now - 365 * 86_400, notValidAfter: now + 10 * 365 * 86_400,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: intermediateExtensions,
            issuerPrivateKey: .init(rootKey)
        )
        let leafKey = P256.Signing.PrivateKey()
        var leafExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            AuthorityKeyIdentifier(keyIdentifier: intermediateSKI.keyIdentifier)
        }
        if options.leafMarker {
            try leafExtensions.append(
                .init(oid: SigningProfile.leafMarkerOID, critical: options.criticalLeafMarker, value: [0x05, 0x00])
            )
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: options.leafNotBefore, notValidAfter: options.leafNotAfter,
            issuer: intermediateName,
            subject: try DistinguishedName { CommonName("\(options.commonNamePrefix) Leaf") },
            signatureAlgorithm: .ecdsaWithSHA384, extensions: leafExtensions,
            issuerPrivateKey: .init(intermediateKey)
        )
        return TestChain(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }

    var identity: SigningIdentity {
        get throws { try SigningIdentity(root: root, intermediate: intermediate, leaf: leaf, leafPrivateKey: leafKey) }
    }
}
