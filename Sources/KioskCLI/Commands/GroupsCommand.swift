import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk groups …`: subscription groups.
struct GroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups", abstract: "Create and inspect subscription groups.",
        subcommands: [Create.self, List.self, Delete.self])

    struct Create: AsyncParsableCommand, FieldFlags {
        static let configuration = CommandConfiguration(abstract: "Create a subscription group.")
        static let fieldFlags = ["referenceName": "--name", "localizations": "--localization"]
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "Reference name, unique in the app.") var name: String
        @Option(help: "A customer-facing name LOCALE=NAME, e.g. en_US=Pro (repeatable).") var localization: [String] =
            []
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let localizations = try localization.map { entry -> SubscriptionGroupLocalization in
                    let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2 else {
                        throw CLIError(
                            message: "'\(entry)' is not LOCALE=NAME.", field: "--localization",
                            fix: "Use e.g. en_US=Pro.")
                    }
                    return SubscriptionGroupLocalization(locale: parts[0], name: parts[1])
                }
                let answer = try await connection.client.post(
                    AdminRoutes.subscriptionGroups.path(app),
                    raw: try JSONBody(GroupBody(referenceName: name, localizations: localizations)))
                try connection.print(answer) { answer in
                    let group = try answer.decode(GroupResource.self)
                    return ["Created subscription group '\(group.referenceName)' with id \(group.groupId)."]
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's subscription groups.")
        @Option(help: "The app's bundle id.") var app: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.subscriptionGroups.path(app))
                try connection.print(answer) { answer in
                    var table = TextTable("GROUP ID", "REFERENCE NAME", "LOCALIZATIONS")
                    for group in try answer.decode(GroupList.self).subscriptionGroups {
                        table.add(
                            String(group.groupId), group.referenceName,
                            group.localizations.map { "\($0.locale): \($0.name)" }.joined(separator: ", "))
                    }
                    return table.lines
                }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an empty subscription group.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The group id.") var groupId: Int64
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.delete(
                    AdminRoutes.subscriptionGroup.path(app, String(groupId)))
                try connection.print(answer) { _ in ["Deleted subscription group \(groupId)."] }
            }
        }
    }
}
