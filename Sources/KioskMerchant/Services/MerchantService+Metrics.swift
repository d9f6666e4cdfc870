import Foundation
import KioskSQL
import Prometheus
import SQLKit

/// What an operator of the merchant watches, read from its ledger at each scrape so every replica reports the same:
/// purchases delivered, purchases paid but not yet tied to a user, orders by state, notifications taken by type and
/// outcome.
extension MerchantService {
    /// Sets the merchant's gauges in `registry`, and the database pool's.
    func recordLifeSigns(into registry: PrometheusCollectorRegistry) async throws {
        let counts = try await database.withSession { session in
            (
                grants: try await Self.counts(
                    "SELECT environment AS a, '' AS b, COUNT(*) AS n FROM grants GROUP BY environment", session),
                unclaimed: try await Self.counts(
                    "SELECT environment AS a, '' AS b, COUNT(*) AS n FROM unclaimed_transactions GROUP BY environment",
                    session),
                orders: try await Self.counts(
                    "SELECT state AS a, '' AS b, COUNT(*) AS n FROM orders GROUP BY state", session),
                notifications: try await Self.counts(
                    """
                    SELECT notification_type AS a, outcome AS b, COUNT(*) AS n FROM received_notifications
                    GROUP BY notification_type, outcome
                    """, session)
            )
        }
        func gauge(_ name: String, _ help: String, _ rows: [(String, String, Int)], labels: (String, String?)) {
            let descriptor = MetricNameDescriptor(
                namespace: "kiosk", subsystem: "merchant", metricName: name, unitName: "", helpText: help)
            for (a, b, count) in rows {
                var pairs = [(labels.0, a)]
                if let second = labels.1 { pairs.append((second, b)) }
                registry.makeGauge(descriptor: descriptor, labels: pairs).set(Double(count))
            }
        }
        gauge(
            "grants", "Purchases delivered (granted to a user), by environment.", counts.grants,
            labels: ("environment", nil))
        gauge(
            "unclaimed_transactions", "Purchases learnt of but not yet tied to a user, by environment.",
            counts.unclaimed, labels: ("environment", nil))
        gauge("orders", "Orders by state.", counts.orders, labels: ("state", nil))
        gauge(
            "notifications_received", "App Store Server Notifications taken, by type and outcome.",
            counts.notifications, labels: ("type", "outcome"))
        let pool = database.poolUse
        registry.recordDatabasePool(size: pool.size, inUse: pool.inUse, waiting: pool.waiting)
    }

    private static func counts(_ query: SQLQueryString, _ session: SQLSession) async throws -> [(String, String, Int)] {
        try await session.all(query).map { row in
            (
                try row.decode(column: "a", as: String.self), try row.decode(column: "b", as: String.self),
                try row.decode(column: "n", as: Int.self)
            )
        }
    }
}
