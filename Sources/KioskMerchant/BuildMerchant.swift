import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskSQL
import Logging
import Prometheus
import ServiceLifecycle

/// A merchant server ready to run: the Hummingbird application and its parts.
public struct BuiltMerchant: Sendable {
    public var application: Application<RouterResponder<MerchantRequestContext>>
    public var service: MerchantService
    /// The ledger's database, for checks below the HTTP surface.
    public var database: any SQLDatabaseEngine
    /// Which engine holds the ledger: `sqlite` or `postgresql`.
    public var databaseEngine: String
    /// Issues and checks user tokens with the configured secret.
    public var tokens: UserTokens
    /// Every route the router serves, as `METHOD /path/{parameter}` (the contract test compares them with
    /// `merchant-openapi.yaml`).
    public var routes: [String]
}

/// Builds the merchant server: `kiosk merchant serve` runs what this returns, and tests (or a developer's own
/// Swift server, mounting the same parts) call it too.
///
/// - Parameters:
///   - configuration: the checked configuration (``MerchantConfiguration/load(from:)``).
///   - databaseURL: the merchant's own database: `sqlite:///path/merchant.sqlite` or a PostgreSQL URL.
///   - databasePoolSize: the most PostgreSQL connections; nil for the configuration's `databasePoolSize` or the
///     default.
///   - host, port: where to listen (port 0: any free port, told to `onServerRunning`).
///   - timeouts: how long the server waits on a client before closing the connection.
///   - tls: the certificate and key to answer HTTPS with; nil serves plain HTTP.
public func buildMerchant(
    configuration: LoadedMerchantConfiguration,
    databaseURL: String,
    databasePoolSize: Int? = nil,
    host: String = "127.0.0.1",
    port: Int = 8090,
    timeouts: HTTPTimeouts = HTTPTimeouts(),
    tls: ServerTLS? = nil,
    clock: any KioskClock = SystemClock(),
    logger: Logger = Logger(label: "kiosk-merchant"),
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> BuiltMerchant {
    let server = try timeouts.server(tls: tls)
    let database = try await DatabaseOpener.open(
        url: databaseURL, migrations: MerchantMigrations.all,
        poolSize: databasePoolSize ?? configuration.raw.databasePoolSize ?? DatabaseOpener.defaultPoolSize,
        logger: logger, clock: clock)
    let service: MerchantService
    do {
        service = try MerchantService(configuration: configuration, database: database, clock: clock, logger: logger)
    } catch {
        try? await database.close()
        throw error
    }
    let tokens = UserTokens(secret: configuration.raw.userTokenSecret)
    let router = Router(context: MerchantRequestContext.self)
    let registry = PrometheusCollectorRegistry()
    router.add(middleware: RequestMetricsMiddleware(registry: registry))
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: ErrorMiddleware(serverName: "merchant"))
    router.add(middleware: QueryTextMiddleware())
    router.get("health") { _, _ in
        do {
            try await database.ping()
        } catch {
            throw KioskError(
                .degraded, "The merchant's ledger database does not answer: \(error)",
                fix: "Check the database the merchant was started with (--database).")
        }
        return ["status": "ok"]
    }
    router.get("metrics") { _, _ in
        try await service.recordLifeSigns(into: registry)
        return registry.response()
    }
    router.get("openapi.yaml") { _, _ in try MerchantOpenAPIDocument.response() }
    MerchantController(service: service, tokens: tokens).addRoutes(to: router)
    let routes = router.routes.map { "\($0.method.rawValue) \($0.path)" }
    var application = Application(
        router: router, server: server,
        configuration: .init(address: .hostname(host, port: port), serverName: "Kiosk-Merchant"),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
        logger: logger)
    application.addServices(MerchantDatabaseService(database: database))
    return BuiltMerchant(
        application: application, service: service, database: database, databaseEngine: database.engine, tokens: tokens,
        routes: routes)
}

/// Closes the ledger's database after the HTTP server stopped (services stop in reverse order).
struct MerchantDatabaseService: Service {
    let database: any SQLDatabaseEngine

    func run() async throws {
        try? await gracefulShutdown()
        try await database.close()
    }
}
