import Crypto
import Foundation
import KioskCore
import SwiftASN1
import X509

/// The Kiosk TLS root and the server certificates it issues (`kiosk certs tls`): a local certificate authority that
/// a developer installs once on a simulator, a device or a CI runner, so apps reach a Kiosk store over HTTPS as App
/// Transport Security demands. It has nothing to do with the signing chains: it only vouches for host names.
///
/// ```swift
/// let (authority, _) = try TLSCertificateAuthority.loadOrCreate(in: dataDirectory.appendingPathComponent("tls"))
/// let issued = try authority.issue(hosts: ["localhost", "127.0.0.1"])
/// ```
public struct TLSCertificateAuthority: Sendable {
    /// The root certificate to install (`kiosk-tls-root.pem`).
    public let root: Certificate
    private let rootKey: P256.Signing.PrivateKey

    /// The root's file names in its folder.
    public static let rootFileName = "kiosk-tls-root.pem"
    public static let rootKeyFileName = "kiosk-tls-root.key"
    /// How long the root is valid: 20 years.
    static let rootLifetime: TimeInterval = 20 * 365 * 86_400
    /// How long a server certificate is valid: 825 days, the most Apple's platforms accept for a TLS server
    /// certificate from a root the user installed.
    public static let serverLifetimeDays = 825

    /// A server certificate and its private key, as PEM.
    public struct Issued: Sendable {
        public var certificate: Certificate
        /// The certificate followed by the root, for `--tls-certificate`.
        public var certificateChainPEM: String
        /// The PKCS #8 private key, for `--tls-key`.
        public var privateKeyPEM: String
    }

    /// Reads the root from `folder`, or makes one (written with its key, mode 0600) when the folder has none.
    ///
    /// - Returns: the authority, and whether its root was made now.
    /// - Throws: ``KioskError`` when the folder's files cannot be read or written, or hold something else.
    public static func loadOrCreate(in folder: URL, now: Date = Date()) throws -> (
        TLSCertificateAuthority, created: Bool
    ) {
        let rootFile = folder.appendingPathComponent(rootFileName)
        let keyFile = folder.appendingPathComponent(rootKeyFileName)
        let manager = FileManager.default
        if manager.fileExists(atPath: rootFile.path) || manager.fileExists(atPath: keyFile.path) {
            do {
                let root = try Certificate(pemEncoded: String(contentsOf: rootFile, encoding: .utf8))
                let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: keyFile, encoding: .utf8))
                guard root.publicKey == Certificate.PublicKey(key.publicKey) else {
                    throw KioskError(
                        .tlsRootMismatch, "\(keyFile.path) is not the key of \(rootFile.path).",
                        field: folder.path,
                        fix: "Restore the pair, or remove both to make a new root (and install it again).")
                }
                return (TLSCertificateAuthority(root: root, rootKey: key), false)
            } catch let error as KioskError {
                throw error
            } catch {
                throw KioskError(
                    .tlsRootUnreadable, "The Kiosk TLS root in \(folder.path) cannot be read: \(error).",
                    field: folder.path,
                    fix: "Restore \(rootFileName) and \(rootKeyFileName), or remove both to make a new root.")
            }
        }
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let host = ProcessInfo.processInfo.hostName
        let subject = try DistinguishedName {
            OrganizationName("Kiosk")
            OrganizationalUnitName("Development")
            CommonName("Kiosk TLS Root CA (\(host.isEmpty ? "local" : host))")
        }
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 3_600, notValidAfter: now + rootLifetime, issuer: subject, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        do {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            try writeSecret(key.pemRepresentation, to: keyFile)
            try root.serializeAsPEM().pemString.appending("\n").write(to: rootFile, atomically: true, encoding: .utf8)
        } catch {
            throw KioskError(
                .tlsRootUnwritable, "The Kiosk TLS root cannot be written to \(folder.path): \(error).",
                field: folder.path, fix: "Choose a folder you can write to.")
        }
        return (TLSCertificateAuthority(root: root, rootKey: key), true)
    }

    /// Issues a server certificate for `hosts`: DNS names (`localhost`, `store.test`, `*.example.test`) and IP
    /// addresses (`127.0.0.1`, `::1`), each a subject alternative name; the first is also its common name.
    ///
    /// - Throws: ``KioskError`` `invalid_host` for a name that is neither.
    public func issue(hosts: [String], now: Date = Date()) throws -> Issued {
        guard !hosts.isEmpty else {
            throw KioskError(
                .invalidHost, "A server certificate needs at least one host name.", field: "--host",
                fix: "Give the names apps use to reach the store, e.g. --host localhost --host 127.0.0.1.")
        }
        let names = try hosts.map(Self.subjectAlternativeName)
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 3_600,
            notValidAfter: now + TimeInterval(Self.serverLifetimeDays) * 86_400 - 3_600,
            issuer: root.subject,
            subject: try DistinguishedName {
                OrganizationName("Kiosk")
                CommonName(hosts[0])
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: publicKey)
                if let rootKeyIdentifier = try root.extensions.subjectKeyIdentifier {
                    AuthorityKeyIdentifier(keyIdentifier: rootKeyIdentifier.keyIdentifier)
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        return Issued(
            certificate: certificate,
            certificateChainPEM: try certificate.serializeAsPEM().pemString + "\n" + root.serializeAsPEM().pemString
                + "\n",
            privateKeyPEM: key.pemRepresentation + "\n")
    }

    /// A host as a subject alternative name: an IP address when it parses as one, else a DNS name.
    static func subjectAlternativeName(_ host: String) throws -> GeneralName {
        if let address = IPAddress(host) { return .ipAddress(ASN1OctetString(contentBytes: address.bytes[...])) }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            host.count <= 253 && !labels.isEmpty
            && labels.enumerated().allSatisfy { index, label in
                (index == 0 && label == "*" && labels.count > 2)
                    || (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                        && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            }
        guard valid else {
            throw KioskError(
                .invalidHost, "'\(host)' is neither a host name nor an IP address.", field: "--host",
                fix: "Give a name such as localhost or store.test, or an address such as 127.0.0.1.")
        }
        return .dnsName(host.lowercased())
    }

    /// Writes `text` readable by its owner only.
    private static func writeSecret(_ text: String, to file: URL) throws {
        try Data((text + "\n").utf8).write(to: file, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }
}
