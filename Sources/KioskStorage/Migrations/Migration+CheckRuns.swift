import KioskSQL

extension Migration {
    /// Migration 15: `kiosk check` runs the console shows; `report` is the whole verdict as JSON.
    static let checkRuns = Migration(
        version: 15,
        name: "check_runs",
        statements: [
            """
            CREATE TABLE check_runs (
                id TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                passed BOOLEAN NOT NULL,
                counts TEXT NOT NULL,
                seed TEXT NOT NULL,
                report TEXT NOT NULL,
                CONSTRAINT check_runs_pkey PRIMARY KEY (id)
            )
            """,
            "CREATE INDEX check_runs_created_at ON check_runs (created_at)",
        ]
    )
}
