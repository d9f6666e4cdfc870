import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk certs …`: the root certificates merchants trust.
struct CertsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "certs",
        abstract: "Export the signing roots, revoke certificates, check verifiers, issue TLS certificates.",
        subcommands: [Export.self, Revoke.self, Revocations.self, TestNotification.self, TLS.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an environment's root certificate, the one merchants' verifiers trust.")
        @Option(help: "sandbox or production.") var environment: String
        @Option(help: "pem or der (default pem).") var format: String = "pem"
        @Option(help: "Write to this file instead of standard output.") var output: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(
                    AdminRoutes.rootCertificate.path(environment), query: ["format": format])
                if let output {
                    try answer.body.write(to: URL(fileURLWithPath: output))
                    print("Wrote the \(environment) root (\(format.uppercased())) to \(output)")
                } else if format.lowercased() == "der" {
                    FileHandle.standardOutput.write(answer.body)
                } else {
                    print(String(decoding: answer.body, as: UTF8.self), terminator: "")
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an environment's leaf or intermediate certificate.",
            discussion: """
                The store's OCSP responder answers `revoked` for it from then on, so verifiers with online checks \
                (Apple's enable_online_checks=True) refuse everything it signed. Offline verification is unaffected. \
                Revoking twice changes nothing.
                """)
        @Option(help: "sandbox or production.") var environment: String
        @Option(help: "leaf or intermediate.") var certificate: String
        @Option(help: "CRLReason code: 0 unspecified, 1 keyCompromise, 4 superseded, 5 cessationOfOperation, …")
        var reason: Int?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                var body: [String: Any] = ["certificate": certificate]
                if let reason { body["reason"] = reason }
                let answer = try await connection.client.post(
                    AdminRoutes.certificateRevocations.path(environment), raw: try JSONBody(body))
                try connection.print(answer) { answer in
                    let revocation = try answer.decode(RevocationLine.self)
                    return [
                        (answer.status == 201 ? "Revoked" : "Already revoked") + " the \(revocation.environment) "
                            + "\(revocation.certificate) (serial \(revocation.serialNumber)) at \(revocation.revokedAt)"
                            + (revocation.reason.map { ", reason \($0)" } ?? "") + "."
                    ]
                }
            }
        }
    }

    struct Revocations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List an environment's revoked certificates.")
        @Option(help: "sandbox or production.") var environment: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.certificateRevocations.path(environment))
                try connection.print(answer) { answer in
                    struct List: Decodable { var revocations: [RevocationLine] }
                    let list = try answer.decode(List.self).revocations
                    if list.isEmpty { return ["No revoked certificates in \(environment)."] }
                    return list.map {
                        "\($0.certificate)  serial \($0.serialNumber)  revoked \($0.revokedAt)"
                            + ($0.reason.map { "  reason \($0)" } ?? "")
                    }
                }
            }
        }
    }

    /// A revocation as the admin API answers it (dates left as the store's text).
    struct RevocationLine: Decodable {
        var environment: String
        var certificate: String
        var serialNumber: String
        var revokedAt: String
        var reason: Int?
    }

    struct TestNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-notification",
            abstract: "Print a signed TEST notification (signedPayload) to check a verifier against the root.")
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "sandbox or production.") var environment: String = "sandbox"
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.post(
                    AdminRoutes.signedTestNotification.path(app), query: ["environment": environment])
                struct Signed: Decodable { var signedPayload: String }
                try connection.print(answer) { [try $0.decode(Signed.self).signedPayload] }
            }
        }
    }
}
