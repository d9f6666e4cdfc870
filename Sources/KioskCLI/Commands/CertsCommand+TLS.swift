import ArgumentParser
import Foundation
import KioskCore
import KioskSigning

extension CertsCommand {
    /// `kiosk certs tls --host NAME…`: a server certificate for HTTPS from the Kiosk TLS root, made on first use.
    struct TLS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tls",
            abstract:
                "Issue a TLS server certificate for the store or the merchant, from this machine's Kiosk TLS root.",
            discussion: """
                The first run makes the Kiosk TLS root in <data-dir>/tls (kiosk-tls-root.pem, its key mode 0600); \
                install that root once where apps and servers connect from (a simulator, a device, a CI runner) or \
                give it to Kiosk's clients with --tls-root / KIOSK_TLS_ROOT. Each run issues a new certificate and \
                key for the hosts, valid 825 days, for `kiosk serve` and `kiosk merchant serve` \
                (--tls-certificate, --tls-key). Works offline: no store needs to run.
                """)

        @Option(
            name: .customLong("host"),
            help: "A DNS name or IP address clients use to reach the server (repeat for several).")
        var hosts: [String] = []

        @Option(
            help: "The store's data directory; the root and certificates go into its tls folder (default ./kiosk-data)."
        )
        var dataDir: String?

        @Option(help: "The file name of the certificate and key, without extension (default: the first host).")
        var name: String?

        func run() async throws {
            try await reportingErrors {
                let environment = ProcessInfo.processInfo.environment
                let dataDirectory = URL(fileURLWithPath: dataDir ?? environment["KIOSK_DATA_DIR"] ?? "kiosk-data")
                let folder = dataDirectory.appendingPathComponent("tls")
                do {
                    let (authority, created) = try TLSCertificateAuthority.loadOrCreate(in: folder)
                    let issued = try authority.issue(hosts: hosts)
                    let base = Self.fileName(name ?? hosts[0])
                    let certificate = folder.appendingPathComponent(base + ".pem")
                    let key = folder.appendingPathComponent(base + ".key")
                    try Data(issued.certificateChainPEM.utf8).write(to: certificate, options: .atomic)
                    try Data(issued.privateKeyPEM.utf8).write(to: key, options: .atomic)
                    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
                    let root = folder.appendingPathComponent(TLSCertificateAuthority.rootFileName)
                    let expires = ISO8601DateFormatter().string(from: issued.certificate.notValidAfter)
                    writeLines([
                        "Root:        \(root.relativePath) (\(created ? "made now: install it once where clients run" : "as before"))",
                        "Certificate: \(certificate.relativePath) for \(hosts.joined(separator: ", ")), until \(expires)",
                        "Key:         \(key.relativePath) (mode 0600)",
                        "Serve HTTPS: kiosk serve --tls-certificate \(certificate.relativePath) --tls-key \(key.relativePath)",
                        "Trust it:    --tls-root \(root.relativePath) (or KIOSK_TLS_ROOT) for Kiosk's clients; "
                            + "a simulator or device installs the root as a profile",
                    ])
                } catch let error as KioskError {
                    throw CLIError(error)
                }
            }
        }

        /// A host as a file name: `*.example.test` → `wildcard.example.test`, `::1` → `--1`.
        static func fileName(_ host: String) -> String {
            host.replacingOccurrences(of: "*", with: "wildcard").replacingOccurrences(of: ":", with: "-")
                .replacingOccurrences(of: "/", with: "-")
        }
    }
}
