import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskSigning
import KioskStorage
import Prometheus

/// `/health` (the store and its database), open to all, and `/metrics` (Prometheus text format), which shows sales
/// and refund volumes and so needs the metrics token or the admin token.
struct HealthController {
    let database: any KioskDatabase
    let registry: PrometheusCollectorRegistry
    let metrics: StoreMetrics
    let clocks: StoreClocks
    /// The SHA-256 of each token that reads `/metrics`: the admin token's, and the metrics token's when one is set.
    let metricsTokenSHA256s: [String]
    let throttle: TokenGuessThrottle

    struct Health: ResponseCodable {
        struct Database: Codable, Sendable {
            var engine: String
            var status: String
            var error: String?
        }

        var status: String
        var version: String
        var database: Database
    }

    func addRoutes(to router: Router<KioskRequestContext>) {
        router.get("health") { _, _ in
            var health = Health(
                status: "ok", version: KioskVersion.current,
                database: .init(engine: database.engine, status: "ok"))
            do {
                try await database.ping()
            } catch {
                health.status = "degraded"
                health.database.status = "unavailable"
                health.database.error = "\(error)"
                return EditedResponse(status: .serviceUnavailable, response: health)
            }
            return EditedResponse(status: .ok, response: health)
        }
        router.get("metrics") { request, context in
            try await authorizeMetrics(request, context)
            try await metrics.refresh(database: database, clocks: clocks)
            return registry.response()
        }
    }

    /// Throws 401 unless the request carries the metrics token or the admin token as its bearer token.
    private func authorizeMetrics(_ request: Request, _ context: KioskRequestContext) async throws {
        let fix =
            "Start the store with --metrics-token-file (or KIOSK_METRICS_TOKEN) and give Prometheus that token "
            + "(`authorization: {credentials_file: …}` in its scrape config); the admin token works too."
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw KioskError(
                .missingAdminToken, "/metrics needs the metrics token or the admin token.", field: "Authorization",
                fix: fix)
        }
        let sent = SecretGenerator.sha256Hex(String(header.dropFirst("Bearer ".count)))
        let right = try await throttle.check(
            from: TokenGuessThrottle.address(of: context.channel), now: clocks.base.now()
        ) {
            metricsTokenSHA256s.contains { AdminAuthMiddleware.constantTimeEquals(sent, $0) }
        }
        guard right else {
            throw KioskError(
                .invalidAdminToken, "That is neither the metrics token nor the admin token.", field: "Authorization",
                fix: fix)
        }
    }
}

/// The Kiosk release this build is.
public enum KioskVersion {
    public static let current = "0.1.0"
}
