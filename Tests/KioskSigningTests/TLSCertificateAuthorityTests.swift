import Crypto
import Foundation
import KioskCore
import KioskSigning
import SwiftASN1
import Testing
import X509

/// The Kiosk TLS root (`kiosk certs tls`): made once and kept, issuing server certificates for the names and
/// addresses given, refusing what is neither, and never pairing a root with another key.
@Suite struct TLSCertificateAuthorityTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")

    @Test func theRootIsMadeOnceAndKept() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (first, created) = try TLSCertificateAuthority.loadOrCreate(in: folder)
        let (again, createdAgain) = try TLSCertificateAuthority.loadOrCreate(in: folder)
        #expect(created && !createdAgain)
        #expect(first.root == again.root)
        #expect(try first.root.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        let keyFile = folder.appendingPathComponent(TLSCertificateAuthority.rootKeyFileName).path
        let mode = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func serverCertificatesNameEveryHostAndChainToTheRoot() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (authority, _) = try TLSCertificateAuthority.loadOrCreate(in: folder)
        let issued = try authority.issue(hosts: ["localhost", "127.0.0.1", "::1", "*.example.test"])
        let names = try #require(try issued.certificate.extensions.subjectAlternativeNames)
        #expect(names.contains(.dnsName("localhost")) && names.contains(.dnsName("*.example.test")))
        #expect(names.contains(.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))))
        #expect(
            names.contains(
                .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1])))))
        #expect(try issued.certificate.extensions.extendedKeyUsage?.contains(.serverAuth) == true)
        let lifetime = issued.certificate.notValidAfter.timeIntervalSince(issued.certificate.notValidBefore)
        #expect(lifetime <= Double(TLSCertificateAuthority.serverLifetimeDays) * 86_400)

        // The chain file is the certificate then the root; the key is the certificate's.
        let chain = try PEMDocument.parseMultiple(pemString: issued.certificateChainPEM)
            .map { try Certificate(derEncoded: $0.derBytes) }
        #expect(chain == [issued.certificate, authority.root])
        let key = try P256.Signing.PrivateKey(pemRepresentation: issued.privateKeyPEM)
        #expect(Certificate.PublicKey(key.publicKey) == issued.certificate.publicKey)
        var verifier = Verifier(rootCertificates: CertificateStore([authority.root])) {
            RFC5280Policy()
        }
        let result = await verifier.validate(leaf: issued.certificate, intermediates: CertificateStore())
        guard case .validCertificate = result else {
            Issue.record("the server certificate does not chain to the root: \(result)")
            return
        }
    }

    @Test(arguments: ["bad host", "-leading.test", "trailing-.test", "a..b", "", "*.test", "host/path", "ünï.test"])
    func namesThatAreNeitherHostsNorAddressesAreRefused(host: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (authority, _) = try TLSCertificateAuthority.loadOrCreate(in: folder)
        #expect {
            try authority.issue(hosts: ["localhost", host])
        } throws: { ($0 as? KioskError)?.code == .invalidHost && ($0 as? KioskError)?.field == "--host" }
    }

    @Test func aRootWithAnotherKeyIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try TLSCertificateAuthority.loadOrCreate(in: folder)
        let keyFile = folder.appendingPathComponent(TLSCertificateAuthority.rootKeyFileName)
        try P256.Signing.PrivateKey().pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        #expect {
            try TLSCertificateAuthority.loadOrCreate(in: folder)
        } throws: { ($0 as? KioskError)?.code == .tlsRootMismatch }
    }
}
