import Foundation
import KioskCore
import KioskHTTP
import KioskStorage
import Prometheus
import Synchronization

/// The store's life signs at `/metrics`, beside the HTTP series: what happened, counted in this process once it
/// committed (payments by outcome, server notifications created by type — purchases, renewals, refunds and the rest
/// as the merchant hears of them — and delivery attempts by result), and how the backlog stands, read from the
/// database at each scrape so every replica reports the same (undelivered notifications, the oldest one's age, and
/// how late the renewal scheduler is), the database pool's use in this process, and on SQLite the pages its commits
/// wrote.
public struct StoreMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// The log pages already added to their counter, so that each scrape adds what is new.
    private let logPagesCounted = CountedSoFar()
    /// The statements already added to their counter.
    private let statementsCounted = CountedSoFar()
    /// The writer's busy microseconds already added to their counter.
    private let writerBusyCounted = CountedSoFar()
    /// The log's syncs already added to their counter.
    private let logSyncsCounted = CountedSoFar()

    /// Counts payments made, by environment and outcome (`purchased`, `failed`, `deferred`…).
    func paid(_ payments: [Payment]) {
        for payment in payments {
            registry.makeCounter(
                descriptor: Self.descriptor(
                    "payments", "total",
                    "Payments made, by environment and outcome (a repeated request is not counted)."),
                labels: [("environment", payment.environment.rawValue), ("outcome", payment.state.rawValue)]
            ).increment()
        }
    }

    /// Counts server notifications created, by environment and type: each is a purchase, renewal, refund, expiry…
    func created(_ notifications: [ServerNotification]) {
        for notification in notifications {
            registry.makeCounter(
                descriptor: Self.descriptor(
                    "store_events", "total",
                    "What happened to purchases, by environment and App Store Server Notification type: "
                        + "ONE_TIME_CHARGE and SUBSCRIBED are purchases, DID_RENEW renewals, REFUND refunds."),
                labels: [
                    ("environment", notification.environment.rawValue),
                    ("type", notification.notificationType.rawValue),
                ]
            ).increment()
        }
    }

    /// Counts notification delivery attempts, by environment and result.
    func attempted(_ attempts: [NotificationAttempt], environment: StoreEnvironment) {
        for attempt in attempts {
            registry.makeCounter(
                descriptor: Self.descriptor(
                    "notification_attempts", "total", "POSTs of server notifications, by environment and result."),
                labels: [("environment", environment.rawValue), ("result", attempt.result.rawValue)]
            ).increment()
        }
    }

    /// Reads the backlog from the database, and the pool's use, into their gauges; called before each scrape.
    func refresh(database: any KioskDatabase, clocks: StoreClocks) async throws {
        let pool = database.poolUse
        registry.recordDatabasePool(size: pool.size, inUse: pool.inUse, waiting: pool.waiting)
        if let pages = database.logPagesWritten {
            registry.makeCounter(
                descriptor: Self.descriptor(
                    "database_log_pages", "total",
                    "SQLite: pages this process's commits wrote to the write-ahead log (4 KiB each), what they cost "
                        + "the disk.")
            ).increment(by: Int64(logPagesCounted.add(upTo: pages)))
        }
        if let busy = database.writerBusyMicroseconds {
            registry.makeCounter(
                descriptor: Self.descriptor(
                    "database_writer_busy", "seconds_total",
                    "SQLite: time its one writer spent in transactions, commits included. Its rate is the share of "
                        + "time the writer was busy: near 1, writes queue behind it.")
            ).increment(by: Double(writerBusyCounted.add(upTo: busy)) / 1_000_000)
        }
        if let syncs = database.logSyncs {
            registry.makeCounter(
                descriptor: Self.descriptor(
                    "database_log_syncs", "total",
                    "SQLite: times the write-ahead log was synced beside the writer; each makes every commit written "
                        + "before it durable, so commits per sync is how many a sync shares.")
            ).increment(by: Int64(logSyncsCounted.add(upTo: syncs)))
        }
        registry.makeCounter(
            descriptor: Self.descriptor(
                "database_statements", "total",
                "Statements this process ran on its database, BEGIN and COMMIT included: what requests cost the "
                    + "database in calls (on PostgreSQL each is a round trip to the server).")
        ).increment(by: Int64(statementsCounted.add(upTo: database.statementsRun)))
        for environment in StoreEnvironment.allCases {
            let now = clocks.now(environment)
            let (backlog, earliestDue) = try await database.transaction { tx in
                (
                    try await tx.notificationBacklog(environment: environment),
                    try await tx.earliestDueSubscription(environment: environment)
                )
            }
            let labels = [("environment", environment.rawValue)]
            registry.makeGauge(
                descriptor: Self.descriptor(
                    "notifications_undelivered", nil, "Server notifications committed and not yet delivered."),
                labels: labels
            ).set(Double(backlog.count))
            registry.makeGauge(
                descriptor: Self.descriptor(
                    "oldest_undelivered_notification_age", "seconds",
                    "Age of the oldest server notification not yet delivered; 0 when none waits."),
                labels: labels
            ).set(backlog.oldest.map { max(0, now.timeIntervalSince($0)) } ?? 0)
            registry.makeGauge(
                descriptor: Self.descriptor(
                    "scheduler_lag", "seconds",
                    "How long the earliest due subscription event (renewal, expiry, retry) has been waiting on the "
                        + "environment's clock; 0 when nothing is due."),
                labels: labels
            ).set(earliestDue.map { max(0, now.timeIntervalSince($0)) } ?? 0)
        }
    }

    private static func descriptor(_ name: String, _ unit: String?, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "kiosk", subsystem: nil, metricName: name, unitName: unit ?? "", helpText: help)
    }
}

/// A running total read from elsewhere, and how much of it a counter has been given.
private final class CountedSoFar: Sendable {
    private let counted = Mutex(0)

    /// Notes `total` and returns how much it grew since the last call (never less than 0).
    func add(upTo total: Int) -> Int {
        counted.withLock { counted in
            defer { counted = max(counted, total) }
            return max(0, total - counted)
        }
    }
}
