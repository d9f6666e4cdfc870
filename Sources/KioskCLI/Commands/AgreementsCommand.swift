import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk agreements …`: the Paid Apps agreement (App Store Connect's "Agreements, Tax, and Banking").
struct AgreementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agreements",
        abstract: "Accept or inspect the Paid Apps agreement; no product is sold until it is active.",
        subcommands: [Accept.self, Show.self, Reset.self, SmallBusiness.self])

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

    struct SmallBusiness: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "small-business",
            abstract: "Enrol in the Small Business Program (15% commission from a date on), or end it.")
        @Option(help: "The first day (UTC) or ISO 8601 date-time of the 15% rate; today when absent.") var since:
            String?
        @Flag(help: "End the enrolment: sales pay 30% again.") var end = false
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            var since: Any = NSNull()
            if !end {
                guard let date = self.since.map(TaxCommand.instant) ?? Date() else {
                    throw ValidationError(
                        "--since is a day such as 2027-01-01 or a date-time such as 2027-01-01T00:00:00Z.")
                }
                since = ISO8601DateFormatter().string(from: date)
            }
            try await reportingErrors {
                let answer = try await connection.client.put(
                    "/agreements/small-business", raw: try JSONBody(["since": since]))
                try connection.print(answer) { answer in
                    guard let date = try answer.decode(AgreementResource.self).smallBusinessProgramSince else {
                        return ["Small Business Program: not enrolled (30% commission)"]
                    }
                    return ["Small Business Program: 15% commission from \(ISO8601DateFormatter().string(from: date))"]
                }
            }
        }
    }
}
