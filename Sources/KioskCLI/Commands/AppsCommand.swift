import ArgumentParser
import Foundation
import KioskProtocol

/// `kiosk apps …`: apps as App Store Connect's "My Apps".
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "Create and inspect apps.",
        subcommands: [Create.self, List.self, Show.self, Update.self, SharedSecret.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app; Kiosk assigns its numeric app id.")
        @Option(help: "The app's bundle id, reverse-DNS (com.example.app).") var bundleId: String
        @Option(help: "The app's name.") var name: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors(flags: CLIError.flags(named: ["bundleId", "name"])) {
                let answer = try await connection.client.post(
                    AdminRoutes.apps.path(), raw: try JSONBody(AppCreateBody(bundleId: bundleId, name: name)))
                try connection.print(answer) { try AppsCommand.describe($0.decode(AppResource.self)) }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List apps.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.apps.path())
                try connection.print(answer) { answer in
                    let apps = try answer.decode(AppList.self).apps
                    guard !apps.isEmpty else { return ["No apps yet. Create one with `kiosk apps create`."] }
                    var table = TextTable("BUNDLE ID", "APP ID", "NAME")
                    for app in apps { table.add(app.bundleId, String(app.appAppleId), app.name) }
                    return table.lines
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one app.")
        @Argument(help: "The app's bundle id.") var bundleId: String
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                let answer = try await connection.client.get(AdminRoutes.app.path(bundleId))
                try connection.print(answer) { try AppsCommand.describe($0.decode(AppResource.self)) }
            }
        }
    }

    struct Update: AsyncParsableCommand, FieldFlags {
        static let configuration = CommandConfiguration(abstract: "Change an app's name or notification URLs.")
        static let fieldFlags = [
            "sandboxNotificationURLs": "--sandbox-notification-url",
            "productionNotificationURLs": "--production-notification-url",
        ]
        @Argument(help: "The app's bundle id.") var bundleId: String
        @Option(help: "A new name.") var name: String?
        @Option(help: "Where production notifications go (repeat for several; \"\" clears).")
        var productionNotificationUrl: [String] = []
        @Option(help: "Where sandbox notifications go (repeat for several; \"\" clears).")
        var sandboxNotificationUrl: [String] = []
        @Option(
            help:
                "on: failed sandbox notifications are retried like production ones; off: one attempt, as Apple's sandbox."
        )
        var sandboxNotificationRetries: Switch?
        @OptionGroup var connection: ConnectionOptions

        /// `on` or `off`.
        enum Switch: String, ExpressibleByArgument { case on, off }

        func run() async throws {
            try await reportingErrors {
                var body: [String: Any] = [:]
                if let name { body["name"] = name }
                if !productionNotificationUrl.isEmpty {
                    body["productionNotificationURLs"] = productionNotificationUrl.filter { !$0.isEmpty }
                }
                if !sandboxNotificationUrl.isEmpty {
                    body["sandboxNotificationURLs"] = sandboxNotificationUrl.filter { !$0.isEmpty }
                }
                if let sandboxNotificationRetries {
                    body["sandboxNotificationRetries"] = sandboxNotificationRetries == .on
                }
                guard !body.isEmpty else {
                    throw CLIError(
                        message: "Nothing to change.",
                        fix: "Pass --name, a notification URL option or --sandbox-notification-retries.")
                }
                let answer = try await connection.client.patch(AdminRoutes.app.path(bundleId), raw: try JSONBody(body))
                try connection.print(answer) { try AppsCommand.describe($0.decode(AppResource.self)) }
            }
        }
    }

    /// `kiosk apps shared-secret`: prints the secret alone, so `secret=$(kiosk apps shared-secret ID)` works; it
    /// never replaces a secret a merchant may be using unless asked to.
    struct SharedSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "shared-secret",
            abstract: "Print the app-specific shared secret (creating it if the app has none).",
            discussion: "Only the secret goes to standard output; what was created goes to standard error.")
        @Argument(help: "The app's bundle id.") var bundleId: String
        @Flag(help: "Replace the secret with a new one: verifyReceipt then refuses the old one (status 21004).")
        var regenerate = false
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            try await reportingErrors {
                var answer = try await connection.client.get(AdminRoutes.app.path(bundleId))
                let existing = try answer.decode(AppResource.self).sharedSecret
                if existing == nil || regenerate {
                    answer = try await connection.client.post(AdminRoutes.sharedSecret.path(bundleId))
                    if !connection.json {
                        let what = existing == nil ? "Created a shared secret" : "Replaced the shared secret"
                        FileHandle.standardError.write(Data("\(what) for \(bundleId).\n".utf8))
                    }
                }
                try connection.print(answer) { [try $0.decode(AppResource.self).sharedSecret ?? ""] }
            }
        }
    }

    static func describe(_ app: AppResource) -> [String] {
        [
            "Bundle id:       \(app.bundleId)",
            "App id:          \(app.appAppleId)",
            "Name:            \(app.name)",
            "Shared secret:   \(app.sharedSecret ?? "none (create with `kiosk apps shared-secret \(app.bundleId)`)")",
            "Notifications:   production \(app.productionNotificationURLs.isEmpty ? "none" : app.productionNotificationURLs.joined(separator: ", "))",
            "                 sandbox \(app.sandboxNotificationURLs.isEmpty ? "none" : app.sandboxNotificationURLs.joined(separator: ", "))",
            "                 sandbox retries \(app.sandboxNotificationRetries ? "on" : "off")",
        ]
    }
}

/// A JSON object body built from plain values.
func JSONBody(_ object: [String: Any]) throws -> Data {
    try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
}

/// A JSON body from one of the console's request types (`KioskProtocol/ConsoleRequests.swift`).
func JSONBody(_ body: some Encodable) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(body)
}
