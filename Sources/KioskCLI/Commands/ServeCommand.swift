import ArgumentParser
import Foundation
import KioskCore
import KioskStorage
import KioskStore
import Logging

/// `kiosk serve`: runs the store until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the store (production and sandbox) on one port.",
        discussion: """
            On first start it creates the data directory, the SQLite database, a signing chain per environment \
            and an admin token, and prints where everything is. Every option also reads a KIOSK_* variable.
            """)

    @Option(help: "Address to listen on (KIOSK_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on, 0 for any free port (KIOSK_PORT; default 8080).")
    var port: Int?

    @Option(help: "Directory for the database, keys and state (KIOSK_DATA_DIR; default ./kiosk-data).")
    var dataDir: String?

    @Option(help: "Database URL: sqlite:///path or postgres://user:pass@host:port/db (KIOSK_DATABASE_URL).")
    var database: String?

    @Option(
        help: """
            The most connections the PostgreSQL pool opens (KIOSK_DATABASE_POOL_SIZE; default \
            \(DatabaseOpener.defaultPoolSize)); SQLite uses one.
            """)
    var databasePoolSize: String?

    @Option(help: "Use this admin token instead of a generated one (KIOSK_ADMIN_TOKEN).")
    var adminToken: String?

    @Option(
        help: """
            The URL verifiers reach this store at; certificates name <url>/ocsp/<environment> as their OCSP \
            responder (KIOSK_PUBLIC_URL; default http://<host>:<port>, 127.0.0.1 for a wildcard host).
            """)
    var publicURL: String?

    @OptionGroup var log: LogOptions

    @OptionGroup var timeouts: TimeoutOptions

    @Option(
        name: .customLong("server-api-rate-limit"),
        help:
            "App Store Server API requests a second per In-App Purchase key before 429 (KIOSK_SERVER_API_RATE_LIMIT; default 100)."
    )
    var serverAPIRateLimit: String?

    @Option(
        name: .customLong("scheduler-interval"),
        help: "Seconds between the renewal scheduler's passes (KIOSK_SCHEDULER_INTERVAL; default 1).")
    var schedulerInterval: String?

    func run() async throws {
        try await reportingErrors {
            let configuration = try makeConfiguration(environment: ProcessInfo.processInfo.environment)
            KioskLogging.bootstrap(format: configuration.logFormat, level: configuration.logLevel)
            let host = configuration.host
            let store: BuiltStore
            do {
                store = try await buildStore(
                    configuration: configuration, logger: Logger(label: "kiosk"),
                    onServerRunning: { port in
                        let base = "http://\(host):\(port)"
                        writeLines([
                            "Kiosk \(KioskVersion.current) listening on \(base)",
                            "  console: \(base)/admin/v1 (Bearer admin token)   health: \(base)/health   "
                                + "contract: \(base)/openapi.yaml",
                        ])
                    })
            } catch let error as KioskError {
                throw CLIError(error)
            } catch let error as StorageError {
                throw CLIError(
                    message: "The store could not open its database: \(error)", field: "--database",
                    fix: "Check --database / KIOSK_DATABASE_URL, or leave it out to use SQLite in the data directory.")
            }
            writeLines(store.report.lines() + ["Timeouts:         \(configuration.timeouts)"])
            try await store.application.runService()
        }
    }

    func makeConfiguration(environment: [String: String]) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        if let host = host ?? environment["KIOSK_HOST"] { configuration.host = host }
        if let portText = port.map(String.init) ?? environment["KIOSK_PORT"] {
            configuration.port = try parsePort(portText)
        }
        if let dataDir = dataDir ?? environment["KIOSK_DATA_DIR"] {
            configuration.dataDirectory = URL(fileURLWithPath: dataDir)
        }
        configuration.databaseURL = database ?? environment["KIOSK_DATABASE_URL"]
        if let sizeText = databasePoolSize ?? environment["KIOSK_DATABASE_POOL_SIZE"] {
            configuration.databasePoolSize = try parsePoolSize(sizeText)
        }
        configuration.adminToken = adminToken ?? environment["KIOSK_ADMIN_TOKEN"]
        if let url = publicURL ?? environment["KIOSK_PUBLIC_URL"] {
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? ""),
                components.host?.isEmpty == false, components.query == nil
            else {
                throw CLIError(
                    message: "'\(url)' is not an http(s) URL.", field: "--public-url",
                    fix: "Use the URL clients reach the store at, "
                        + "e.g. https://kiosk.example.com or http://10.0.0.5:8080.")
            }
            configuration.publicURL = url
        }
        configuration.timeouts = try timeouts.timeouts(environment: environment)
        if let level = try log.level(environment: environment) { configuration.logLevel = level }
        if let format = try log.format(environment: environment) { configuration.logFormat = format }
        if let rateText = serverAPIRateLimit ?? environment["KIOSK_SERVER_API_RATE_LIMIT"] {
            guard let rate = Double(rateText), rate > 0, rate.isFinite else {
                throw CLIError(
                    message: "'\(rateText)' is not a request rate.", field: "--server-api-rate-limit",
                    fix: "Use a positive number of requests a second, such as 100 or 0.5.")
            }
            configuration.serverAPIRequestsPerSecond = rate
        }
        if let intervalText = schedulerInterval ?? environment["KIOSK_SCHEDULER_INTERVAL"] {
            guard let seconds = Double(intervalText), seconds > 0, seconds <= 3600 else {
                throw CLIError(
                    message: "'\(intervalText)' is not a scheduler interval.", field: "--scheduler-interval",
                    fix: "Use a number of seconds from 0.01 to 3600, such as 1 or 0.2.")
            }
            configuration.schedulerInterval = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        return configuration
    }
}
