import Crypto
import Foundation
import KioskCore
import KioskSigning
import SwiftASN1
import Testing
import X509

@Suite("Generated signing chain")
struct SigningChainTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)

    // Proves the root has Apple's root profile: P-384 self-signed with SHA-384, critical CA, critical
    // keyCertSign+cRLSign, SKI.
    @Test func rootProfile() throws {
        let root = try SigningIdentity.generate(environment: .sandbox, now: now).root
        #expect(root.subject == root.issuer)
        #expect(P384.Signing.PublicKey(root.publicKey) != nil)
        #expect(root.signatureAlgorithm == .ecdsaWithSHA384)
        #expect(root.publicKey.isValidSignature(root.signature, for: root))
        let basic = try #require(root.extensions[oid: .X509ExtensionID.basicConstraints])
        #expect(basic.critical)
        #expect(try BasicConstraints(basic) == .isCertificateAuthority(maxPathLength: nil))
        let usage = try #require(root.extensions[oid: .X509ExtensionID.keyUsage])
        #expect(usage.critical)
        #expect(try KeyUsage(usage) == KeyUsage(keyCertSign: true, cRLSign: true))
        #expect(try root.extensions.subjectKeyIdentifier != nil)
        #expect(root.extensions[oid: SigningProfile.intermediateMarkerOID] == nil)
        #expect(root.extensions.count == 3)
    }

    // Proves the intermediate has Apple's WWDR profile: P-384, pathlen 0, SKI + AKI matching the root, non-critical
    // DER NULL marker.
    @Test func intermediateProfile() throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        let intermediate = identity.intermediate
        #expect(intermediate.issuer == identity.root.subject)
        #expect(P384.Signing.PublicKey(intermediate.publicKey) != nil)
        #expect(intermediate.signatureAlgorithm == .ecdsaWithSHA384)
        #expect(identity.root.publicKey.isValidSignature(intermediate.signature, for: intermediate))
        let basic = try #require(intermediate.extensions[oid: .X509ExtensionID.basicConstraints])
        #expect(basic.critical)
        #expect(try BasicConstraints(basic) == .isCertificateAuthority(maxPathLength: 0))
        let usage = try #require(intermediate.extensions[oid: .X509ExtensionID.keyUsage])
        #expect(usage.critical)
        #expect(try KeyUsage(usage) == KeyUsage(keyCertSign: true, cRLSign: true))
        let authority = try #require(try intermediate.extensions.authorityKeyIdentifier?.keyIdentifier)
        let rootKey = try #require(try identity.root.extensions.subjectKeyIdentifier)
        #expect(authority == rootKey.keyIdentifier)
        #expect(try intermediate.extensions.subjectKeyIdentifier != nil)
        let marker = try #require(intermediate.extensions[oid: SigningProfile.intermediateMarkerOID])
        #expect(!marker.critical)
        #expect(Array(marker.value) == [0x05, 0x00])
        #expect(try intermediate.extensions.extendedKeyUsage == nil)
        #expect(intermediate.extensions.count == 5)
    }

    // Proves the leaf has Apple's receipt-signing profile: P-256 signed with SHA-384, critical CA:FALSE and
    // digitalSignature, SKI + AKI, marker, no EKU.
    @Test func leafProfile() throws {
        let identity = try SigningIdentity.generate(environment: .production, now: now)
        let leaf = identity.leaf
        #expect(leaf.issuer == identity.intermediate.subject)
        #expect(
            P256.Signing.PublicKey(leaf.publicKey)?.rawRepresentation
                == identity.leafPrivateKey.publicKey.rawRepresentation)
        #expect(leaf.signatureAlgorithm == .ecdsaWithSHA384)
        #expect(identity.intermediate.publicKey.isValidSignature(leaf.signature, for: leaf))
        let basic = try #require(leaf.extensions[oid: .X509ExtensionID.basicConstraints])
        #expect(basic.critical)
        #expect(try BasicConstraints(basic) == .notCertificateAuthority)
        let usage = try #require(leaf.extensions[oid: .X509ExtensionID.keyUsage])
        #expect(usage.critical)
        #expect(try KeyUsage(usage) == KeyUsage(digitalSignature: true))
        let authority = try #require(try leaf.extensions.authorityKeyIdentifier?.keyIdentifier)
        let intermediateKey = try #require(try identity.intermediate.extensions.subjectKeyIdentifier)
        #expect(authority == intermediateKey.keyIdentifier)
        #expect(try leaf.extensions.subjectKeyIdentifier != nil)
        let marker = try #require(leaf.extensions[oid: SigningProfile.leafMarkerOID])
        #expect(!marker.critical)
        #expect(Array(marker.value) == [0x05, 0x00])
        #expect(try leaf.extensions.extendedKeyUsage == nil)
        #expect(leaf.extensions.count == 5)
    }

    // Proves each validity window nests in its issuer's and spans years either side of now, for sandbox clock travel.
    @Test func validityNests() throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        let (root, intermediate, leaf) = (identity.root, identity.intermediate, identity.leaf)
        #expect(root.notValidBefore <= intermediate.notValidBefore)
        #expect(intermediate.notValidAfter <= root.notValidAfter)
        #expect(intermediate.notValidBefore <= leaf.notValidBefore)
        #expect(leaf.notValidAfter < intermediate.notValidAfter)
        #expect(leaf.notValidBefore <= now - 2 * SigningProfile.secondsPerYear)
        #expect(leaf.notValidAfter >= now + 20 * SigningProfile.secondsPerYear)
        #expect(root.notValidAfter >= now + 25 * SigningProfile.secondsPerYear)
    }

    // Proves subjects name the environment and serial numbers are random and positive.
    @Test(arguments: StoreEnvironment.allCases)
    func subjectsAndSerials(environment: StoreEnvironment) throws {
        let first = try SigningIdentity.generate(environment: environment, now: now)
        let second = try SigningIdentity.generate(environment: environment, now: now)
        let name = environment.appleName
        #expect("\(first.root.subject)" == "CN=Kiosk Root CA - \(name),O=Kiosk,C=US")
        #expect("\(first.intermediate.subject)" == "CN=Kiosk Worldwide Developer Relations CA - \(name),O=Kiosk,C=US")
        #expect("\(first.leaf.subject)" == "CN=Kiosk Store Receipt Signing - \(name),O=Kiosk,C=US")
        let serials = [first.root, first.intermediate, first.leaf, second.leaf].map(\.serialNumber)
        #expect(Set(serials.map(\.bytes)).count == 4)
        for certificate in [first.root, first.intermediate, first.leaf] {
            let encodedSerial = try derSerialContent(of: certificate)
            #expect(
                encodedSerial.first.map { $0 & 0x80 == 0 } == true, "a DER INTEGER with the top bit set is negative")
            #expect(encodedSerial.count <= 21 && encodedSerial.count >= 8)
        }
    }

    // Proves x5c is standard padded base64 of each certificate's DER in leaf, intermediate, root order, and the root
    // exports as PEM and DER.
    @Test func x5cAndRootExport() throws {
        let identity = try SigningIdentity.generate(environment: .sandbox, now: now)
        #expect(identity.x5c.count == 3)
        for (entry, certificate) in zip(identity.x5c, [identity.leaf, identity.intermediate, identity.root]) {
            let der = try #require(Data(base64Encoded: entry))
            #expect(try Certificate(derEncoded: Array(der)) == certificate)
            #expect(!entry.contains("\n") && !entry.contains("-") && !entry.contains("_"))
        }
        #expect(identity.rootPEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(try Certificate(pemEncoded: identity.rootPEM) == identity.root)
        #expect(try Certificate(derEncoded: identity.rootDER) == identity.root)
    }

    /// The content octets of the DER INTEGER serialNumber inside the TBSCertificate.
    private func derSerialContent(of certificate: Certificate) throws -> ArraySlice<UInt8> {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let root = try DER.parse(serializer.serializedBytes)
        guard case .constructed(let certificateNodes) = root.content,
            let tbs = certificateNodes.first(where: { _ in true }),
            case .constructed(let tbsNodes) = tbs.content
        else { throw CertificateShapeError() }
        let serial = try #require(tbsNodes.first { $0.identifier == .integer })
        guard case .primitive(let bytes) = serial.content else { throw CertificateShapeError() }
        return bytes
    }
}

/// A DER certificate not shaped as the test expects.
private struct CertificateShapeError: Error {}
