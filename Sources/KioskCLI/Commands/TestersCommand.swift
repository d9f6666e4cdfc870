import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk testers …`: sandbox test users.
struct TestersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "testers", abstract: "Manage sandbox test users.",
        subcommands: [Create.self, List.self, Show.self, Update.self, Delete.self, ClearHistory.self])

    /// Per-tester sandbox settings, shared by `create` and `update`.
    struct Settings: ParsableArguments {
        /// The flag of each field an error may name.
        static let flagNames = CLIError.flags(named: [
            "email", "password", "firstName", "lastName", "storefront", "interruptPurchases", "askToBuy",
            "renewalRate", "paymentOutcome",
        ])

        @Option(help: "First name.") var firstName: String?
        @Option(help: "Last name.") var lastName: String?
        @Option(help: "Storefront, alpha-3 (e.g. USA, CHN).") var storefront: String?
        @Option(help: "Interrupt purchases: true or false.") var interruptPurchases: Bool?
        @Option(help: "Ask to Buy: true or false.") var askToBuy: Bool?
        @Option(help: "Renewal rate: how long a monthly period lasts (3m, 5m, 15m, 30m, 1h).") var renewalRate: String?
        @Option(help: "What the simulated card does: approve, decline or insufficient_funds.") var paymentOutcome:
            String?

        var fields: [String: Any] {
            var body: [String: Any] = [:]
            if let firstName { body["firstName"] = firstName }
            if let lastName { body["lastName"] = lastName }
            if let storefront { body["storefront"] = storefront }
            if let interruptPurchases { body["interruptPurchases"] = interruptPurchases }
            if let askToBuy { body["askToBuy"] = askToBuy }
            if let renewalRate { body["renewalRate"] = renewalRate }
            if let paymentOutcome { body["paymentOutcome"] = paymentOutcome }
            return body
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a sandbox tester.")
        @Option(help: "Email (unique).") var email: String
        @Option(help: "Password (at least 8 characters).") var password: String
        @OptionGroup var settings: Settings
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(flags: Settings.flagNames) {
                var body = settings.fields
                body["email"] = email
                body["password"] = password
                let answer = try await connection.client.post(AdminRoutes.testers.path(), raw: try JSONBody(body))
                try connection.print(answer) { try TestersCommand.describe($0.decode(TesterResource.self)) }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List sandbox testers.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.testers.path())
                try connection.print(answer) { answer in
                    var table = TextTable("EMAIL", "STOREFRONT", "ASK TO BUY", "INTERRUPT", "RENEWAL RATE")
                    for tester in try answer.decode(TesterList.self).testers {
                        table.add(
                            tester.email, tester.storefront, tester.askToBuy ? "yes" : "no",
                            tester.interruptPurchases ? "yes" : "no", tester.renewalRate.rawValue)
                    }
                    return table.lines
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a sandbox tester.")
        @Argument(help: "The tester's email.") var email: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.tester.path(email))
                try connection.print(answer) { try TestersCommand.describe($0.decode(TesterResource.self)) }
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a sandbox tester's settings.")
        @Argument(help: "The tester's email.") var email: String
        @Option(help: "A new password.") var password: String?
        @OptionGroup var settings: Settings
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(flags: Settings.flagNames) {
                var body = settings.fields
                if let password { body["password"] = password }
                guard !body.isEmpty else {
                    throw CLIError(message: "Nothing to change.", fix: "See `kiosk testers update --help`.")
                }
                let answer = try await connection.client.patch(AdminRoutes.tester.path(email), raw: try JSONBody(body))
                try connection.print(answer) { try TestersCommand.describe($0.decode(TesterResource.self)) }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a sandbox tester.")
        @Argument(help: "The tester's email.") var email: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.delete(AdminRoutes.tester.path(email))
                try connection.print(answer) { _ in ["Deleted tester \(email)."] }
            }
        }
    }

    struct ClearHistory: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear-history", abstract: "Clear a sandbox tester's purchase history.")
        @Argument(help: "The tester's email.") var email: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.post(AdminRoutes.clearPurchaseHistory.path(email))
                try connection.print(answer) { _ in ["Cleared the purchase history of \(email)."] }
            }
        }
    }

    static func describe(_ tester: TesterResource) -> [String] {
        [
            "Email:               \(tester.email)",
            "Name:                \(tester.firstName) \(tester.lastName)",
            "Storefront:          \(tester.storefront)",
            "Ask to Buy:          \(tester.askToBuy ? "on" : "off")",
            "Interrupt purchases: \(tester.interruptPurchases ? "on" : "off")",
            "Renewal rate:        a month lasts \(tester.renewalRate.rawValue)",
            "Payment outcome:     \(tester.paymentOutcome.rawValue)",
        ]
    }
}
