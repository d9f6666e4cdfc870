import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskStorage

/// Apple's App Store Server API, mounted once per environment: `/inApps/…` for production and
/// `/sandbox/inApps/…` for the sandbox, so Apple's clients work once their base URL is `http://HOST:PORT` or
/// `http://HOST:PORT/sandbox`. Every route is JWT-authenticated and answers errors in Apple's shape.
struct ServerAPIController {
    let service: ServerAPIService
    let environment: StoreEnvironment
    /// Apple's Retention Messaging API (`/inApps/v1/messaging`), served when given.
    var retention: RetentionService?

    func addRoutes(to router: Router<KioskRequestContext>) {
        let base = router.group(environment == .sandbox ? "sandbox/inApps" : "inApps")
            .add(middleware: ServerAPIErrorMiddleware())
            .add(
                middleware: ServerAPIAuthMiddleware(
                    database: service.database, clock: service.clocks.base, environment: environment,
                    keys: service.keys)
            )
            .add(
                middleware: ServerAPIRateLimitMiddleware(
                    limiter: service.rateLimiter, endpoints: service.endpointLimits,
                    clock: service.clocks.clock(for: environment))
            )
            .add(middleware: QueryTextMiddleware())
        addTransactionRoutes(to: base)
        addSubscriptionRoutes(to: base)
        addNotificationRoutes(to: base)
        addMessagingRoutes(to: base)
    }
}

/// What the Server API's handlers share: the store's context and the per-key rate limit.
public struct ServerAPIService: Sendable {
    let context: StoreContext
    /// Shared by both environments: a key's requests count against one bucket.
    let rateLimiter: ServerAPIRateLimiter
    /// Apple's per-app, per-endpoint limits, each environment counted on its own clock.
    let endpointLimits: ServerAPIEndpointLimits
    /// The keys authentication reads, shared with the catalog, which forgets a key it revokes.
    let keys: ServerAPIKeyCache

    var database: any KioskDatabase { context.database }
    /// Auth reads the base clock; everything an environment's data says reads that environment's clock.
    var clocks: StoreClocks { context.clocks }
    var signing: StoreSigning { context.signing }
    var notifications: NotificationService { context.notifications }
    var ledger: StoreLedger { context.ledger }
}
