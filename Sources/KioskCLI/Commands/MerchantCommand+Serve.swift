import ArgumentParser
import Foundation
import KioskCore
import KioskHTTP
import KioskMerchant
import KioskProtocol
import KioskSQL
import Logging
import NIOCore

extension MerchantCommand {
    /// `kiosk merchant serve`: runs the merchant server until SIGINT or SIGTERM.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the merchant server for the apps a configuration names.",
            discussion: """
                Checks the configuration (files, roots, the Server API key, products) before it listens and names \
                the field of any problem. The grant ledger lives in its own database, by default merchant.sqlite \
                beside the configuration. Every option also reads a KIOSK_MERCHANT_* variable.
                """)

        @Option(help: "The merchant configuration, e.g. merchant.json (KIOSK_MERCHANT_CONFIG).")
        var config: String?

        @Option(help: "Address to listen on (KIOSK_MERCHANT_HOST; default 127.0.0.1).")
        var host: String?

        @Option(help: "Port to listen on, 0 for any free port (KIOSK_MERCHANT_PORT; default 8090).")
        var port: Int?

        @Option(
            help: """
                The ledger's database: sqlite:///path or postgres://user:pass@host:port/db \
                (KIOSK_MERCHANT_DATABASE_URL; default merchant.sqlite in the configuration's folder).
                """)
        var database: String?

        @Option(
            help: """
                The most connections the ledger's PostgreSQL pool opens (KIOSK_MERCHANT_DATABASE_POOL_SIZE; \
                default: the configuration's databasePoolSize, else \(DatabaseOpener.defaultPoolSize)).
                """)
        var databasePoolSize: String?

        @OptionGroup var log: LogOptions

        @OptionGroup var timeouts: TimeoutOptions

        @OptionGroup var tls: TLSOptions

        func run() async throws {
            try await reportingErrors {
                let environment = ProcessInfo.processInfo.environment
                let settings = try makeSettings(environment: environment)
                let loaded = try loadMerchantConfiguration(settings.configPath)
                KioskLogging.bootstrap(format: settings.logFormat, level: settings.logLevel)
                let host = settings.host
                let merchant: BuiltMerchant
                do {
                    merchant = try await buildMerchant(
                        configuration: loaded, databaseURL: settings.databaseURL,
                        databasePoolSize: settings.databasePoolSize, host: host, port: settings.port,
                        timeouts: settings.timeouts, tls: settings.tls,
                        logger: Logger(label: "kiosk-merchant"),
                        onServerRunning: { [scheme = settings.tls == nil ? "http" : "https"] port in
                            writeLines(
                                Self.banner(
                                    configuration: loaded, scheme: scheme, host: host, port: port,
                                    database: settings.databaseURL)
                                    + ["  timeouts: \(settings.timeouts)"])
                        })
                } catch let error as KioskError {
                    throw CLIError(error)
                } catch let error as StorageError {
                    throw CLIError(
                        message: "The merchant could not open its database: \(error)", field: "--database",
                        fix:
                            "Check --database / KIOSK_MERCHANT_DATABASE_URL, or leave it out to use SQLite beside the configuration."
                    )
                }
                try await PortInUse.reporting(server: "merchant", host: host, port: settings.port) {
                    try await merchant.application.runService()
                }
            }
        }

        /// What `serve` runs with, from the options and the environment.
        struct Settings {
            var configPath: String?
            var host = "127.0.0.1"
            var port = 8090
            var databaseURL: String
            var databasePoolSize: Int?
            var logLevel = Logger.Level.info
            var logFormat = LogFormat.text
            var timeouts = HTTPTimeouts()
            var tls: ServerTLS?
        }

        func makeSettings(environment: [String: String]) throws -> Settings {
            let configPath = config ?? environment["KIOSK_MERCHANT_CONFIG"]
            let folder = URL(fileURLWithPath: configPath ?? "merchant.json").standardizedFileURL
                .deletingLastPathComponent()
            var settings = Settings(
                configPath: configPath,
                databaseURL: database ?? environment["KIOSK_MERCHANT_DATABASE_URL"]
                    ?? "sqlite://\(folder.appendingPathComponent("merchant.sqlite").path)")
            if let sizeText = databasePoolSize ?? environment["KIOSK_MERCHANT_DATABASE_POOL_SIZE"] {
                settings.databasePoolSize = try parsePoolSize(sizeText)
            }
            if let host = host ?? environment["KIOSK_MERCHANT_HOST"] { settings.host = host }
            if let portText = port.map(String.init) ?? environment["KIOSK_MERCHANT_PORT"] {
                settings.port = try parsePort(portText)
            }
            settings.timeouts = try timeouts.timeouts(environment: environment)
            settings.tls = try tls.serverTLS(environment: environment, prefix: "KIOSK_MERCHANT_")
            if let level = try log.level(environment: environment) { settings.logLevel = level }
            if let format = try log.format(environment: environment) { settings.logFormat = format }
            return settings
        }

        /// The lines printed once the merchant listens: where, the URL the store sends notifications to, the apps.
        static func banner(
            configuration: LoadedMerchantConfiguration, scheme: String = "http", host: String, port: Int,
            database: String
        ) -> [String] {
            let base = "\(scheme)://\(host):\(port)"
            // A wildcard address is not one the store can send to; the loopback address is.
            let reachable = ["0.0.0.0", "::", "[::]"].contains(host) ? "\(scheme)://127.0.0.1:\(port)" : base
            var publicBase = configuration.raw.publicURL ?? reachable
            if publicBase.hasSuffix("/") { publicBase.removeLast() }
            var lines = [
                "Kiosk merchant listening on \(base)",
                "  notifications: \(publicBase)\(MerchantPaths.notifications)  (the app's notification URL at the store)",
                "  health: \(base)/health   ledger: \(Self.redacted(database))",
            ]
            for app in configuration.apps.values.sorted(by: { $0.bundleId < $1.bundleId }) {
                let environments = app.environments.map(\.appleName).sorted().joined(separator: ", ")
                lines.append(
                    "  app \(app.bundleId): \(app.products.count) product(s), \(environments)"
                        + "; products_v1.json at \(publicBase)\(MerchantPaths.productList(bundleId: app.bundleId, version: 1))"
                )
            }
            return lines
        }

        /// A database URL without its password.
        static func redacted(_ url: String) -> String {
            guard var components = URLComponents(string: url), components.password != nil else { return url }
            components.password = "***"
            return components.string ?? url
        }
    }
}
