import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk keys …`: In-App Purchase keys for the App Store Server API.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Create and revoke In-App Purchase keys (App Store Server API).",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key; its private key (PKCS#8 PEM) is shown only this once.")
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "A name for the key.") var name: String?
        @Option(help: "Also write the private key to this file (mode 0600), like a downloaded .p8.") var output: String?
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.post(
                    AdminRoutes.keys.path(app), raw: try JSONBody(KeyCreateBody(name: name)))
                let key = try answer.decode(KeyResource.self)
                if let output, let privateKey = key.privateKey {
                    try PrivateFile.write(Data(privateKey.utf8), to: output)
                }
                try connection.print(answer) { _ in
                    [
                        "Key id:     \(key.keyId)",
                        "Issuer id:  \(key.issuerId ?? "")",
                        "Bundle id:  \(key.bundleId)",
                        output.map { "Private key written to \($0) (shown only once):" }
                            ?? "Private key (shown only once):",
                        key.privateKey ?? "",
                    ]
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's keys.")
        @Option(help: "The app's bundle id.") var app: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.keys.path(app))
                try connection.print(answer) { answer in
                    let list = try answer.decode(KeyList.self)
                    var table = TextTable("KEY ID", "STATUS", "NAME")
                    for key in list.keys { table.add(key.keyId, key.status, key.name) }
                    return ["Issuer id: \(list.issuerId)"] + table.lines
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key; tokens it signed stop working.")
        @Option(help: "The app's bundle id.") var app: String
        @Argument(help: "The key id.") var keyId: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.delete(AdminRoutes.key.path(app, keyId))
                try connection.print(answer) { _ in ["Revoked key \(keyId)."] }
            }
        }
    }
}

/// Files only their owner may read (private keys).
enum PrivateFile {
    static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw CLIError(message: "Cannot create \(path).", fix: "Check the directory exists and is writable.")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        try data.write(to: url)
    }
}
