import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk console-users …`: the people who sign in to the web console with an email and a password, and their roles.
struct ConsoleUsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console-users",
        abstract: "Add people to the web console, change their roles, disable them, reset their passwords.",
        discussion: "Roles: \(roleNames). Admins manage the team and keys; Finance the agreement and reports; "
            + "App Managers the catalog and sandbox; Developers the sandbox.",
        subcommands: [Add.self, List.self, Update.self, ResetPassword.self])

    static let roleNames = TeamRole.allCases.map(\.rawValue).joined(separator: ", ")

    static func parse(roles: [String]) throws -> [TeamRole] {
        try roles.map { text in
            guard let role = TeamRole(rawValue: text.uppercased().replacingOccurrences(of: "-", with: "_")) else {
                throw ValidationError("--role '\(text)' is not a role; use \(roleNames).")
            }
            return role
        }
    }

    static func lines(_ user: ConsoleUserResource) -> [String] {
        [
            "Email:   \(user.email)", "Name:    \(user.name)",
            "Roles:   \(user.roles.map(\.rawValue).joined(separator: ", "))", "Status:  \(user.status)",
        ]
            + (user.temporaryPassword.map {
                ["Temporary password (shown only once; they choose their own at first sign-in): \($0)"]
            } ?? [])
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a person; without --password-stdin a temporary password is made and shown once.")
        @Option(help: "Their email address, which they sign in with.") var email: String
        @Option(help: "Their name, as the console shows it.") var name: String
        @Option(name: .customLong("role"), help: "A role; repeat for more.") var roles: [String] = []
        @Flag(help: "Read their password from standard input instead of making a temporary one.")
        var passwordStdin = false
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let parsed = try ConsoleUsersCommand.parse(roles: roles)
            guard !parsed.isEmpty else { throw ValidationError("Give at least one --role, such as DEVELOPER.") }
            let password = passwordStdin ? readLine(strippingNewline: true) : nil
            if passwordStdin, password == nil { throw ValidationError("--password-stdin read nothing.") }
            try await reportingErrors {
                let answer = try await connection.client.post(
                    AdminRoutes.consoleUsers.path(),
                    raw: try JSONBody(
                        ConsoleUserCreateBody(email: email, name: name, roles: parsed, password: password)))
                try connection.print(answer) { answer in
                    ConsoleUsersCommand.lines(try answer.decode(ConsoleUserResource.self))
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the console's users and their roles.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.consoleUsers.path())
                try connection.print(answer) { answer in
                    var table = TextTable("EMAIL", "STATUS", "ROLES", "NAME")
                    for user in try answer.decode(ConsoleUserList.self).users {
                        table.add(user.email, user.status, user.roles.map(\.rawValue).joined(separator: ","), user.name)
                    }
                    return table.lines
                }
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a person's name or roles (the roles given replace theirs), or disable or enable them.")
        @Argument(help: "Their email address.") var email: String
        @Option(help: "A new name.") var name: String?
        @Option(name: .customLong("role"), help: "A role; repeat for more. Replaces every role they hold.")
        var roles: [String] = []
        @Flag(help: "--enable lets them sign in again; --disable stops them (their sessions end).")
        var access: Access?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let parsed = try ConsoleUsersCommand.parse(roles: roles)
            let body = ConsoleUserUpdateBody(
                name: name, roles: parsed.isEmpty ? nil : parsed, disabled: access.map { $0 == .disable })
            try await reportingErrors {
                let answer = try await connection.client.patch(
                    AdminRoutes.consoleUser.path(email), raw: try JSONBody(body))
                try connection.print(answer) { answer in
                    ConsoleUsersCommand.lines(try answer.decode(ConsoleUserResource.self))
                }
            }
        }
    }

    enum Access: String, EnumerableFlag {
        case enable, disable
    }

    struct ResetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-password",
            abstract: "Give a person a new temporary password (shown once); their sessions end.")
        @Argument(help: "Their email address.") var email: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.post(AdminRoutes.resetConsolePassword.path(email))
                try connection.print(answer) { answer in
                    ConsoleUsersCommand.lines(try answer.decode(ConsoleUserResource.self))
                }
            }
        }
    }
}
