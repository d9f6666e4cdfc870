import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk agreements …`: the Paid Apps agreement (App Store Connect's "Agreements, Tax, and Banking").
struct AgreementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agreements",
        abstract: "Accept or inspect the Paid Apps agreement; no product is sold until it is active.",
        subcommands: [Accept.self, Show.self, Reset.self])

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Accept the Paid Apps agreement.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.post("/agreements/paid-apps/accept")
                try connection.print(answer) { _ in ["Paid Apps agreement: active"] }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the Paid Apps agreement's status.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get("/agreements/paid-apps")
                try connection.print(answer) {
                    ["Paid Apps agreement: \(try $0.decode(AgreementResource.self).status.rawValue)"]
                }
            }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the agreement back to pending (reproduces seed 002's \"zero products\").")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.put(
                    "/agreements/paid-apps", raw: try JSONBody(AgreementBody(status: .pending)))
                try connection.print(answer) { _ in ["Paid Apps agreement: pending"] }
            }
        }
    }
}
