import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskProtocol
import KioskSigning
import KioskStorage
import Logging
import Prometheus

/// A store ready to run: the Hummingbird application, what starting it did, and its parts.
public struct BuiltStore: Sendable {
    public var application: Application<RouterResponder<KioskRequestContext>>
    public var report: StartupReport
    public var database: any KioskDatabase
    public var catalog: CatalogService
    /// What the store's services share: its database, clocks, signing, notification outbox.
    public var context: StoreContext
    public var signing: StoreSigning
    /// Revocations of the signing chains and the OCSP responder's answers.
    public var certificateStatus: CertificateStatusService
    /// Every route the router serves, as `METHOD /path/{parameter}` (the contract test compares them with
    /// `openapi.yaml`).
    public var routes: [String]
}

/// Builds the whole store: `kiosk serve` runs what this returns, and tests call it too.
///
/// - Parameters:
///   - configuration: where to listen and where state lives.
///   - clock: the source of "now" for everything the store does.
///   - logger: the store's logger.
///   - onServerRunning: called with the bound port once the server listens (useful with port 0).
public func buildStore(
    configuration: ServerConfiguration,
    clock: any KioskClock = SystemClock(),
    logger: Logger = Logger(label: "kiosk"),
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> BuiltStore {
    let bootstrap = try await StoreBootstrap(configuration: configuration, clock: clock, logger: logger).run()
    let serverAPIKeys = ServerAPIKeyCache()
    let catalog = CatalogService(
        database: bootstrap.database, clock: clock, serverAPIKeys: serverAPIKeys,
        outboundPolicy: configuration.outboundURLs)
    let accounts = AccountService(database: bootstrap.database, clock: clock)
    let team = TeamService(database: bootstrap.database, clock: clock)
    let money = MoneyService(database: bootstrap.database, clock: clock)
    let server = try configuration.timeouts.server(tls: configuration.tls)
    let clocks = StoreClocks(base: clock)
    let outbound = try OutboundHTTPClient(trusting: configuration.tlsTrustRoots)
    let registry = PrometheusCollectorRegistry()
    let metrics = StoreMetrics(registry: registry)
    let notifications = NotificationService(
        database: bootstrap.database, clocks: clocks, signing: bootstrap.signing, metrics: metrics, logger: logger,
        http: outbound.client, policy: configuration.outboundURLs)
    let context = StoreContext(
        database: bootstrap.database, clocks: clocks, signing: bootstrap.signing, feed: QueueFeed(),
        notifications: notifications, metrics: metrics, logger: logger)
    let purchases = PurchaseService(context: context)
    let testControls = TestControlsService(context: context, purchases: purchases)
    let refunds = RefundService(context: context)
    let certificateStatus = CertificateStatusService(
        database: bootstrap.database, clock: clock, signing: bootstrap.signing, authorityKeys: bootstrap.authorityKeys)

    let router = Router(context: KioskRequestContext.self)
    router.add(middleware: RequestMetricsMiddleware(registry: registry))
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: ConnectAPIUnservedMiddleware())
    let throttle = TokenGuessThrottle()
    HealthController(
        database: bootstrap.database, registry: registry, metrics: metrics, clocks: clocks,
        metricsTokenSHA256s: [bootstrap.adminTokenSHA256]
            + [configuration.metricsToken].compactMap { $0 }.map {
                SecretGenerator.sha256Hex($0)
            }, throttle: throttle
    ).addRoutes(to: router)
    let adminAuth = AdminAuthMiddleware(tokenSHA256: bootstrap.adminTokenSHA256, throttle: throttle, clock: clock)

    let admin = router.group(KioskRoute.API.admin.routerGroup).add(
        middleware: adminAuth
    )
    .add(middleware: BodyLimitMiddleware(StoreBodyLimits.console)).add(middleware: QueryTextMiddleware())
    AppsController(catalog: catalog).addRoutes(to: admin)
    ProductsController(catalog: catalog, money: money).addRoutes(to: admin)
    GroupsController(catalog: catalog).addRoutes(to: admin)
    AgreementsController(catalog: catalog).addRoutes(to: admin)
    MoneyController(money: money).addRoutes(to: admin)
    TeamKeysController(team: team).addRoutes(to: admin)
    ConsoleUsersController(team: team).addRoutes(to: admin)
    RefundsController(refunds: refunds).addRoutes(to: admin)
    CatalogController(catalog: catalog).addRoutes(to: admin)
    CertificatesController(catalog: catalog, signing: bootstrap.signing, status: certificateStatus, clock: clock)
        .addRoutes(to: admin)
    AccountsController(accounts: accounts).addRoutes(to: admin)
    OfferCodesController(catalog: catalog).addRoutes(to: admin)
    CheckRunsController(team: team).addRoutes(to: admin)
    let testControlRoutes = router.group(KioskRoute.API.testControls.routerGroup)
        .add(middleware: adminAuth)
        .add(middleware: QueryTextMiddleware())
    TestControlsController(testControls: testControls, refunds: refunds).addRoutes(to: testControlRoutes)
    let lifecycle = SubscriptionLifecycle(store: context)
    let sandboxClock = SandboxClockService(lifecycle: lifecycle, wake: SchedulerWake())
    do {
        try await sandboxClock.load()
    } catch {
        try? await outbound.shutdown()
        throw error
    }
    let retention = RetentionService(
        context: context, purchases: purchases, lifecycle: lifecycle, http: outbound.client,
        policy: configuration.outboundURLs, budget: configuration.realtimeRetentionBudget)
    RetentionController(retention: retention).addRoutes(to: admin)
    for environment in StoreEnvironment.allCases {
        StoreKitController(purchases: purchases, retention: retention, feed: context.feed, environment: environment)
            .addRoutes(to: router)
    }
    let subscriptionControls = SubscriptionTestControls(lifecycle: lifecycle, retention: retention)
    SubscriptionTestControlsController(clock: sandboxClock, subscriptions: subscriptionControls)
        .addRoutes(to: testControlRoutes)
    let serverAPI = ServerAPIService(
        context: context,
        rateLimiter: ServerAPIRateLimiter(requestsPerSecond: configuration.serverAPIRequestsPerSecond),
        endpointLimits: ServerAPIEndpointLimits(scope: configuration.serverAPIRateLimits),
        keys: serverAPIKeys)
    for environment in StoreEnvironment.allCases {
        ServerAPIController(service: serverAPI, environment: environment, retention: retention).addRoutes(to: router)
        VerifyReceiptController(service: serverAPI, environment: environment).addRoutes(to: router)
    }
    ConnectAPIController(
        money: money, catalog: catalog, team: team, database: bootstrap.database, clock: clock,
        scheme: configuration.tls == nil ? "http" : "https"
    ).addRoutes(to: router)
    let consoleSecret = try await bootstrap.database.transaction { tx in
        try await tx.settingInsertingIfAbsent(ConsoleSessions.secretSetting, value: SecretGenerator.hex(byteCount: 32))
    }
    ConsoleController(
        catalog: catalog, accounts: accounts, team: team, money: money, testControls: testControls, refunds: refunds,
        sandboxClock: sandboxClock,
        subscriptions: subscriptionControls, notifications: notifications,
        metrics: metrics, database: bootstrap.database,
        sessions: ConsoleSessions(
            secret: consoleSecret, adminTokenSHA256: bootstrap.adminTokenSHA256, identityKey: bootstrap.identityKey,
            secure: configuration.tls != nil),
        renderer: try await ConsoleRenderer.load(), adminTokenSHA256: bootstrap.adminTokenSHA256,
        tokenThrottle: throttle, clock: clock,
        retention: retention
    ).addRoutes(to: router)
    OCSPController(status: certificateStatus).addRoutes(to: router)
    for document in OpenAPIDocument.allCases {
        router.get(RouterPath(document.rawValue)) { _, _ in try document.response() }
    }
    let routes = router.routes.map { "\($0.method.rawValue) \($0.path)" }

    var application = Application(
        router: router, server: server,
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port),
            serverName: "Kiosk/\(KioskVersion.current)"),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger)
    // Services stop in reverse order, after the server: deliveries under way end before the database closes.
    application.addServices(
        DatabaseLifecycleService(database: bootstrap.database), outbound, notifications, retention,
        RenewalScheduler(lifecycle: lifecycle, clock: sandboxClock, interval: configuration.schedulerInterval))
    return BuiltStore(
        application: application, report: bootstrap.report, database: bootstrap.database, catalog: catalog,
        context: context, signing: bootstrap.signing, certificateStatus: certificateStatus, routes: routes)
}
