import ArgumentParser
import Foundation
import KioskStore

/// `kiosk certs …`: the root certificates merchants trust.
struct CertsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "certs", abstract: "Export the signing roots and check verifiers against them.",
        subcommands: [Export.self, TestNotification.self])

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
                    "/certificates/\(environment.pathEscaped)/root", query: ["format": format])
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
                    "/apps/\(app.pathEscaped)/signed-test-notification", query: ["environment": environment])
                struct Signed: Decodable { var signedPayload: String }
                try connection.print(answer) { [try $0.decode(Signed.self).signedPayload] }
            }
        }
    }
}
