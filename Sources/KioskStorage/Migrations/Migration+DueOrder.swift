import KioskSQL

extension Migration {
    /// Migration 9: the indexes the renewal scheduler and the notification outbox claim from also hold each claim's
    /// order, so claiming the next batch reads its rows in index order instead of sorting every due row. Rows fall
    /// due together (subscriptions bought together; a renewal batch's notifications share its sandbox time): with
    /// the old indexes, claiming 128 renewals among 100,000 due sorted all 100,000, each batch, and each delivery
    /// round sorted every pending notification.
    static let dueOrder = Migration(
        version: 9,
        name: "due_order",
        statements: [
            "DROP INDEX subscriptions_due_idx",
            """
            CREATE INDEX subscriptions_due_idx
                ON subscriptions (environment, next_event_at, original_transaction_id)
            """,
            "DROP INDEX notifications_due_idx",
            "CREATE INDEX notifications_due_idx ON notifications (environment, state, next_attempt_at, uuid)",
        ]
    )
}
