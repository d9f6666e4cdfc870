import KioskSQL

extension Migration {
    /// Migration 24: indexes that cost every purchase and renewal a page of the write-ahead log and found nothing
    /// another index does not. A purchase wrote 32 pages on SQLite (`kiosk-bench`'s "log pages per purchase").
    /// - `transactions_account_idx` is a prefix of `transactions_account_modified_idx`, which answers its queries.
    /// - Most transactions have no app account token, and only those with one are ever looked up by it.
    /// - Notifications are claimed and counted as the backlog only while pending; the rest (nearly all, once
    ///   delivered) no longer sit in the due index, which now holds what is left to send.
    ///
    /// SQLite and PostgreSQL use a partial index only where the query states its condition, so the queries name
    /// the pending state as a literal, not a bound value.
    static let leanerIndexes = Migration(
        version: 24,
        name: "leaner_indexes",
        statements: [
            "DROP INDEX transactions_account_idx",
            "DROP INDEX transactions_app_account_token_idx",
            """
            CREATE INDEX transactions_app_account_token_idx ON transactions (app_account_token)
                WHERE app_account_token IS NOT NULL
            """,
            "DROP INDEX notifications_due_idx",
            """
            CREATE INDEX notifications_due_idx ON notifications (environment, next_attempt_at, uuid)
                WHERE state = 'pending'
            """,
        ]
    )
}
