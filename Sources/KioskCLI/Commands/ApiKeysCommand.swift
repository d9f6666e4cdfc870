import ArgumentParser
import Foundation
import KioskCore
import KioskProtocol
import KioskSigning

/// `kiosk api-keys …`: team keys of the App Store Connect API (the catalog on `/v1` and `/v2`, the reports), apart
/// from each app's In-App Purchase keys (`kiosk keys`).
struct ApiKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-keys",
        abstract: "Create and revoke team keys of the App Store Connect API (catalog, reports), with their roles.",
        subcommands: [Create.self, List.self, Token.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a team key; its private key (PKCS#8 PEM) is shown only this once.",
            discussion: "Roles: \(TeamRole.allCases.map(\.rawValue).joined(separator: ", ")). "
                + "Changing the catalog needs ADMIN or APP_MANAGER; sales reports ADMIN, FINANCE or SALES; finance "
                + "reports ADMIN or FINANCE.")
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

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a bearer token for the App Store Connect API, signed here with a team key's private key.",
            discussion: "The token is what App Store Connect's clients send: ES256, `kid` the key id, `iss` the "
                + "issuer id, `aud` appstoreconnect-v1. The store is asked only for the key id (by --name) and the "
                + "issuer id; the private key never leaves this machine.")
        @Option(help: "The key's name (as given to `create`); the store looks up its id.") var name: String?
        @Option(help: "The key id, instead of --name.") var keyId: String?
        @Option(help: "The key's private key file (.p8, PKCS#8 PEM).") var privateKey: String
        @Option(help: "Minutes the token is good for, 1–20 (App Store Connect refuses longer).") var minutes = 20
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            guard (1...20).contains(minutes) else { throw ValidationError("--minutes must be 1 to 20.") }
            guard (name == nil) != (keyId == nil) else { throw ValidationError("Give either --name or --key-id.") }
            let pem: String
            do {
                pem = try String(contentsOfFile: privateKey, encoding: .utf8)
            } catch {
                throw ValidationError("--private-key: cannot read '\(privateKey)': \(error.localizedDescription)")
            }
            try await reportingErrors {
                let list = try await connection.client.get(AdminRoutes.teamKeys.path()).decode(TeamKeyList.self)
                let active = list.keys.filter { $0.revokedAt == nil }
                let matches = active.filter { $0.keyId == keyId || ($0.name == name && name != nil) }
                guard matches.count == 1, let key = matches.first else {
                    let named = name.map { "named '\($0)'" } ?? "with id '\(keyId ?? "")'"
                    let known = active.map { "\($0.name) (\($0.keyId))" }.joined(separator: ", ")
                    throw ValidationError(
                        (matches.isEmpty ? "No active team key \(named)" : "\(matches.count) active team keys \(named)")
                            + "; active keys: \(known.isEmpty ? "none" : known). "
                            + (matches.isEmpty ? "" : "Use --key-id."))
                }
                let token: String
                do {
                    token = try ServerAPIToken.sign(
                        keyId: key.keyId, issuerId: list.issuerId, bundleId: nil, privateKeyPEM: pem,
                        expiresAt: Date().addingTimeInterval(Double(minutes) * 60))
                } catch {
                    throw ValidationError("--private-key: '\(privateKey)' is not a P-256 private key in PEM: \(error)")
                }
                if connection.json {
                    print(#"{"keyId":"\#(key.keyId)","token":"\#(token)"}"#)
                } else {
                    print(token)
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
