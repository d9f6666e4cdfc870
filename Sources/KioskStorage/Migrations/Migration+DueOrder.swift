import KioskSQL

extension Migration {
    /// Migration 9: the due-subscriptions index also holds the claim's tie-breaker, so claiming the next batch reads
    /// its rows in index order instead of sorting every due row (subscriptions bought together fall due together:
    /// with the old index, claiming a batch among 100,000 due rows sorted all 100,000, each batch).
    static let dueOrder = Migration(
        version: 9,
        name: "subscriptions_due_order",
        statements: [
            "DROP INDEX subscriptions_due_idx",
            """
            CREATE INDEX subscriptions_due_idx
                ON subscriptions (environment, next_event_at, original_transaction_id)
            """,
        ]
    )
}
