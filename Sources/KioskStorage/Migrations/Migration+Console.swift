import KioskSQL

extension Migration {
    /// Migration 13: what the console needs: its audit log, one row per action, read newest first, and finding a
    /// customer by the app account token their app sent.
    static let console = Migration(
        version: 13,
        name: "console",
        statements: [
            """
            CREATE TABLE audit_log (
                id TEXT NOT NULL,
                at BIGINT NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                target TEXT NOT NULL,
                CONSTRAINT audit_log_pkey PRIMARY KEY (id)
            )
            """,
            "CREATE INDEX audit_log_at ON audit_log (at)",
            "CREATE INDEX transactions_app_account_token_idx ON transactions (app_account_token)",
        ]
    )
}
