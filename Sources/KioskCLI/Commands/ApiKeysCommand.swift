import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol

/// `kiosk api-keys …`: team keys of the App Store Connect API (`/v1/salesReports`, `/v1/financeReports`), apart
/// from each app's In-App Purchase keys (`kiosk keys`).
struct ApiKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-keys",
        abstract: "Create and revoke team keys of the App Store Connect API (reports), with their roles.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a team key; its private key (PKCS#8 PEM) is shown only this once.",
            discussion: "Roles: \(TeamRole.allCases.map(\.rawValue).joined(separator: ", ")). "
                + "Sales reports need ADMIN, FINANCE or SALES; finance reports ADMIN or FINANCE.")
        @Option(name: .customLong("role"), help: "A role of the key; repeat for more.") var roles: [String] = []
        @Option(help: "A name for the key.") var name: String?
        @Option(help: "Also write the private key to this file (mode 0600), like a downloaded .p8.") var output: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let parsed = try roles.map { text in
                guard let role = TeamRole(rawValue: text.uppercased()) else {
                    throw ValidationError(
                        "--role '\(text)' is not a role; use \(TeamRole.allCases.map(\.rawValue).joined(separator: ", "))."
                    )
                }
                return role
            }
            guard !parsed.isEmpty else { throw ValidationError("Give the key at least one --role, such as FINANCE.") }
            try await reportingErrors {
                let answer = try await connection.client.post(
                    AdminRoutes.teamKeys.path(), raw: try JSONBody(TeamKeyCreateBody(name: name, roles: parsed)))
                let key = try answer.decode(TeamKeyResource.self)
                if let output, let privateKey = key.privateKey {
                    try PrivateFile.write(Data(privateKey.utf8), to: output)
                }
                try connection.print(answer) { _ in
                    [
                        "Key id:     \(key.keyId)",
                        "Issuer id:  \(key.issuerId ?? "")",
                        "Roles:      \(key.roles.map(\.rawValue).joined(separator: ", "))",
                        output.map { "Private key written to \($0) (shown only once):" }
                            ?? "Private key (shown only once):",
                        key.privateKey ?? "",
                    ]
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the team keys, with the issuer id and the vendor number reports are asked for by.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.teamKeys.path())
                try connection.print(answer) { answer in
                    let list = try answer.decode(TeamKeyList.self)
                    var table = TextTable("KEY ID", "STATUS", "ROLES", "NAME")
                    for key in list.keys {
                        table.add(key.keyId, key.status, key.roles.map(\.rawValue).joined(separator: ","), key.name)
                    }
                    return ["Issuer id:     \(list.issuerId)", "Vendor number: \(list.vendorNumber)"] + table.lines
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a team key; its tokens stop working.")
        @Argument(help: "The key id.") var keyId: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.post(AdminRoutes.revokeTeamKey.path(keyId))
                try connection.print(answer) { _ in ["Revoked team key \(keyId)"] }
            }
        }
    }
}
