import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk accounts …`: production customer accounts (sandbox test users are `kiosk testers`).
struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts", abstract: "Manage production customer accounts.",
        subcommands: [Create.self, List.self, Show.self, Update.self, Delete.self, Refund.self, ReverseRefund.self])

    /// Fields shared by `create` and `update`.
    struct Fields: ParsableArguments {
        @Option(help: "First name.") var firstName: String?
        @Option(help: "Last name.") var lastName: String?
        @Option(help: "Storefront, alpha-3 (e.g. USA, CHN).") var storefront: String?
        @Option(help: "What the simulated card does: approve, decline or insufficient_funds.") var paymentOutcome:
            String?

        var body: [String: Any] {
            var body: [String: Any] = [:]
            if let firstName { body["firstName"] = firstName }
            if let lastName { body["lastName"] = lastName }
            if let storefront { body["storefront"] = storefront }
            if let paymentOutcome { body["paymentOutcome"] = paymentOutcome }
            return body
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a customer account.")
        @Option(help: "Email (unique).") var email: String
        @Option(help: "Password (at least 8 characters).") var password: String
        @OptionGroup var fields: Fields
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                var body = fields.body
                body["email"] = email
                body["password"] = password
                let answer = try await connection.client.post(AdminRoutes.accounts.path(), raw: try JSONBody(body))
                try connection.print(answer) { try AccountsCommand.describe($0.decode(AccountResource.self)) }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List customer accounts.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.accounts.path())
                try connection.print(answer) { answer in
                    var table = TextTable("EMAIL", "NAME", "STOREFRONT", "PAYMENT OUTCOME")
                    for account in try answer.decode(AccountList.self).accounts {
                        table.add(
                            account.email, "\(account.firstName) \(account.lastName)", account.storefront,
                            account.paymentOutcome.rawValue)
                    }
                    return table.lines
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a customer account.")
        @Argument(help: "The account's email.") var email: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.account.path(email))
                try connection.print(answer) { try AccountsCommand.describe($0.decode(AccountResource.self)) }
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a customer account.")
        @Argument(help: "The account's email.") var email: String
        @Option(help: "A new password.") var password: String?
        @OptionGroup var fields: Fields
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                var body = fields.body
                if let password { body["password"] = password }
                guard !body.isEmpty else {
                    throw CLIError(message: "Nothing to change.", fix: "See `kiosk accounts update --help`.")
                }
                let answer = try await connection.client.patch(
                    AdminRoutes.account.path(email), raw: try JSONBody(body))
                try connection.print(answer) { try AccountsCommand.describe($0.decode(AccountResource.self)) }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a customer account.")
        @Argument(help: "The account's email.") var email: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.delete(AdminRoutes.account.path(email))
                try connection.print(answer) { _ in ["Deleted account \(email)."] }
            }
        }
    }

    static func describe(_ account: AccountResource) -> [String] {
        [
            "Email:           \(account.email)",
            "Name:            \(account.firstName) \(account.lastName)",
            "Storefront:      \(account.storefront)",
            "Payment outcome: \(account.paymentOutcome.rawValue)",
        ]
    }

    struct Refund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refund a customer's production purchase (REFUND), in full or a share of its price.",
            discussion: "Example: kiosk accounts refund 2000000000000042 --app com.example.coins --percentage 50")
        @Argument(help: "The production transaction id.") var transactionId: String
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "0 (other) or 1 (an issue in the app).") var reason = 0
        @Option(help: "Refund this share of the price, 1–100 (prorated); full when left out.") var percentage: Int?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(json: connection.json) {
                try await refundControl(
                    "refund", AdminRoutes.refund, app: app, transactionId: transactionId,
                    body: RefundRequest(reason: reason, percentage: percentage), connection: connection)
            }
        }
    }

    struct ReverseRefund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reverse-refund",
            abstract: "Take back the refund of a production purchase (REFUND_REVERSED): it counts again.")
        @Argument(help: "The production transaction id.") var transactionId: String
        @Option(help: "The app's bundle id.") var app: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(json: connection.json) {
                try await refundControl(
                    "reverse-refund", AdminRoutes.reverseRefund, app: app, transactionId: transactionId, body: nil,
                    connection: connection)
            }
        }
    }
}

/// Posts a production refund or its reversal and prints what it changed.
private func refundControl(
    _ action: String, _ route: KioskRoute, app: String, transactionId: String, body: (any Encodable)?,
    connection: ConnectionOptions
) async throws {
    let answer = try await connection.client.post(
        route.path(app, transactionId),
        raw: try body.map { try JSONEncoder().encode($0) } ?? Data("{}".utf8))
    try connection.print(answer) { answer in
        [echo(of: action, try answer.decode(TestRevocationResponse.self), app: app, environment: "production")]
    }
}
