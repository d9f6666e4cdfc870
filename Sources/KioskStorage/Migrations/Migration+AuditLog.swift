import KioskSQL

extension Migration {
    /// Migration 13: the console's audit log, one row per action, read newest first.
    static let auditLog = Migration(
        version: 13,
        name: "audit_log",
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
        ]
    )
}
