import Foundation
import HummingbirdCore
import HummingbirdTLS
import KioskCore
import NIOSSL

/// The certificate and key a Kiosk server answers HTTPS with (`--tls-certificate`, `--tls-key`), read and checked
/// at startup, before the port is bound.
public struct ServerTLS: Sendable {
    public let certificateFile: String
    public let keyFile: String
    let configuration: TLSConfiguration

    /// Reads a PEM certificate chain (the server's certificate first) and its PEM private key.
    ///
    /// - Parameters:
    ///   - certificateFlag, keyFlag: the flags (or variables) that named the files, for errors.
    /// - Throws: ``KioskError`` when a file cannot be read or the key is not the certificate's.
    public init(
        certificateFile: String, keyFile: String, certificateFlag: String = "--tls-certificate",
        keyFlag: String = "--tls-key"
    ) throws {
        let fix = "Issue a certificate and key with `kiosk certs tls --host NAME`, and pass both files."
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw KioskError(
                .tlsCertificateUnreadable, "The TLS certificate \(certificateFile) cannot be read: \(error).",
                field: certificateFlag, fix: fix)
        }
        guard !chain.isEmpty else {
            throw KioskError(
                .tlsCertificateUnreadable, "\(certificateFile) holds no PEM certificate.", field: certificateFlag,
                fix: fix)
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw KioskError(
                .tlsKeyUnreadable, "The TLS key \(keyFile) cannot be read: \(error).", field: keyFlag, fix: fix)
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw KioskError(
                .tlsKeyMismatch, "The TLS key \(keyFile) does not go with the certificate \(certificateFile).",
                field: keyFlag, fix: "Pass the key issued with that certificate.")
        }
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.configuration = configuration
    }

    /// `base` served over TLS.
    func wrapping(_ base: HTTPServerBuilder) throws -> HTTPServerBuilder {
        try .tls(base, tlsConfiguration: configuration)
    }
}
