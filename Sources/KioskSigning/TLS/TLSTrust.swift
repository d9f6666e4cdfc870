import AsyncHTTPClient
import Foundation
import KioskCore
import NIOSSL
import SwiftASN1
import X509

/// Roots a Kiosk client trusts for HTTPS besides the system's: the Kiosk TLS root (`kiosk certs tls`), or an
/// operator's own CA.
public enum TLSTrust {
    /// The certificates of a PEM file (one or more, as `kiosk-tls-root.pem` or a CA bundle holds them).
    ///
    /// - Throws: ``KioskError`` naming `field` (the flag or setting that named the file) when it cannot be read or
    ///   holds no certificate.
    public static func certificates(inPEMFile path: String, field: String) throws -> [Certificate] {
        let certificates: [Certificate]
        do {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            certificates = try PEMDocument.parseMultiple(pemString: text)
                .filter { $0.discriminator == "CERTIFICATE" }
                .map { try Certificate(derEncoded: $0.derBytes) }
        } catch {
            throw KioskError(
                .tlsRootUnreadable, "The TLS root \(path) cannot be read: \(error).", field: field,
                fix: "Give the PEM file `kiosk certs tls` wrote (kiosk-data/tls/kiosk-tls-root.pem).")
        }
        guard !certificates.isEmpty else {
            throw KioskError(
                .tlsRootUnreadable, "The TLS root \(path) holds no certificate.", field: field,
                fix: "Give the PEM file `kiosk certs tls` wrote (kiosk-data/tls/kiosk-tls-root.pem).")
        }
        return certificates
    }

    /// Whether `error` is a TLS handshake that failed because the server's certificate does not lead to a trusted
    /// root (a Kiosk store or merchant served with a certificate of a Kiosk TLS root the client was not given).
    public static func isUntrustedCertificate(_ error: any Error) -> Bool {
        "\(error)".contains("CERTIFICATE_VERIFY_FAILED")
    }

    /// What to say when a TLS handshake failed on an untrusted certificate.
    public static let untrustedFix =
        "Trust the Kiosk TLS root the server's certificate was issued from: pass --tls-root (or set KIOSK_TLS_ROOT "
        + "to) kiosk-data/tls/kiosk-tls-root.pem, or install that root in the system's trust store."
}

extension HTTPClient.Configuration {
    /// Trusts `roots` for HTTPS besides the system's trust store.
    public mutating func trust(_ roots: [Certificate]) throws {
        guard !roots.isEmpty else { return }
        var tls = tlsConfiguration ?? TLSConfiguration.makeClientConfiguration()
        let converted = try roots.map { root in
            var serializer = DER.Serializer()
            try serializer.serialize(root)
            return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
        }
        tls.additionalTrustRoots.append(.certificates(converted))
        tlsConfiguration = tls
    }
}
