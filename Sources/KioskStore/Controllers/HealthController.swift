import Foundation
import Hummingbird
import KioskCore
import KioskHTTP
import KioskStorage
import Prometheus

/// `/health` (the store and its database) and `/metrics` (Prometheus text format). Neither needs a token.
struct HealthController {
    let database: any KioskDatabase
    let registry: PrometheusCollectorRegistry
    let metrics: StoreMetrics
    let clocks: StoreClocks

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
        router.get("metrics") { _, _ in
            try await metrics.refresh(database: database, clocks: clocks)
            return registry.response()
        }
    }
}

/// The Kiosk release this build is.
public enum KioskVersion {
    public static let current = "0.1.0"
}
