import Foundation
import KioskCore
import KioskStorage
import Logging

/// Everything `kiosk serve` needs to start a store. Defaults give a working store on a fresh machine:
/// 127.0.0.1:8080, an SQLite file in `./kiosk-data`.
public struct ServerConfiguration: Sendable {
    /// Address to listen on (`KIOSK_HOST`, `--host`).
    public var host: String
    /// Port to listen on; 0 picks a free one (`KIOSK_PORT`, `--port`).
    public var port: Int
    /// Where the database file, signing keys and other state live (`KIOSK_DATA_DIR`, `--data-dir`).
    public var dataDirectory: URL
    /// `sqlite:///path`, a file path, or `postgres://user:pass@host:port/db` (`KIOSK_DATABASE_URL`, `--database`).
    /// nil means `kiosk.sqlite` in the data directory.
    public var databaseURL: String?
    /// The most connections a PostgreSQL pool opens (`KIOSK_DATABASE_POOL_SIZE`, `--database-pool-size`; default
    /// ``DatabaseOpener/defaultPoolSize``). SQLite uses one connection.
    public var databasePoolSize: Int
    /// An admin token to install instead of generating one (`KIOSK_ADMIN_TOKEN`, `--admin-token`).
    public var adminToken: String?
    /// The URL clients and verifiers reach the store at (`KIOSK_PUBLIC_URL`, `--public-url`); the signing
    /// certificates name `<publicURL>/ocsp/<environment>` as their OCSP responder. nil means ``effectivePublicURL``'s
    /// default.
    public var publicURL: String?
    public var logLevel: Logger.Level
    public var logFormat: LogFormat
    /// Requests a second each In-App Purchase key may make to the App Store Server API before it gets `429`
    /// (`KIOSK_SERVER_API_RATE_LIMIT`, `--server-api-rate-limit`; default 100). Fractions are allowed.
    public var serverAPIRequestsPerSecond: Double
    /// Real time between the renewal scheduler's passes (`KIOSK_SCHEDULER_INTERVAL`, `--scheduler-interval`;
    /// default 1 s). Sandbox clock changes wake it at once.
    public var schedulerInterval: Duration
    /// How long the server waits on a client before closing the connection (`KIOSK_IDLE_TIMEOUT`,
    /// `--idle-timeout`; `KIOSK_BODY_TIMEOUT`, `--body-timeout`); ``HTTPTimeouts``' defaults.
    public var timeouts: HTTPTimeouts

    public enum LogFormat: String, Sendable, CaseIterable {
        /// One human-readable line per event, metadata as `key=value`.
        case text
        /// One JSON object per line, for log shippers.
        case json
    }

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        dataDirectory: URL = URL(fileURLWithPath: "kiosk-data"),
        databaseURL: String? = nil,
        databasePoolSize: Int = DatabaseOpener.defaultPoolSize,
        adminToken: String? = nil,
        publicURL: String? = nil,
        logLevel: Logger.Level = .info,
        logFormat: LogFormat = .text,
        serverAPIRequestsPerSecond: Double = 100,
        schedulerInterval: Duration = .seconds(1),
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.databaseURL = databaseURL
        self.databasePoolSize = databasePoolSize
        self.adminToken = adminToken
        self.publicURL = publicURL
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.serverAPIRequestsPerSecond = serverAPIRequestsPerSecond
        self.schedulerInterval = schedulerInterval
        self.timeouts = timeouts
    }

    /// The database URL in effect: the configured one, or the SQLite file in the data directory.
    public var effectiveDatabaseURL: String {
        databaseURL ?? "sqlite://" + dataDirectory.appendingPathComponent("kiosk.sqlite").standardizedFileURL.path
    }

    /// The public URL in effect: the configured one, or `http://<host>:<port>` with a wildcard host
    /// (`0.0.0.0`, `::`) replaced by `127.0.0.1`, since a wildcard is not an address to connect to.
    public var effectivePublicURL: String {
        if let publicURL { return publicURL }
        let address = ["0.0.0.0", "::", "[::]", ""].contains(host) ? "127.0.0.1" : host
        let bracketed = address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address
        return "http://\(bracketed):\(port)"
    }
}
