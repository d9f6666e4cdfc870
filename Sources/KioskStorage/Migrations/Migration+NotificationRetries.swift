import KioskSQL

extension Migration {
    /// Notification retry bookkeeping (part of migration 4): how many scheduled attempts a notification had (its
    /// retry schedule counts them; replays do not), and until when (base clock) a store process holds it while
    /// POSTing, so replicas never send the same attempt twice. `next_attempt_at` stays the scheduled time.
    static let notificationRetryStatements: [String] = [
        "ALTER TABLE notifications ADD COLUMN attempt_count BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE notifications ADD COLUMN leased_until BIGINT",
    ]
}
