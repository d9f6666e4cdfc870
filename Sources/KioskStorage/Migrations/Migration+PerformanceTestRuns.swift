import KioskSQL

extension Migration {
    /// Migration 19: a retention messaging performance test that could not run ends `FAIL` with why
    /// (`failure_reason`), and an app runs one test at a time per environment, which a partial unique index holds
    /// against concurrent starts. Of the tests already pending together, all but the newest fail.
    static let performanceTestRuns = Migration(
        version: 19,
        name: "performance_test_runs",
        statements: [
            "ALTER TABLE retention_performance_tests ADD COLUMN failure_reason TEXT",
            """
            UPDATE retention_performance_tests
            SET state = 'FAIL', failure_reason = 'a newer test of the app started while it was pending'
            WHERE state = 'PENDING' AND EXISTS (
                SELECT 1 FROM retention_performance_tests AS newer
                WHERE newer.app_id = retention_performance_tests.app_id
                    AND newer.environment = retention_performance_tests.environment AND newer.state = 'PENDING'
                    AND (newer.created_at > retention_performance_tests.created_at
                        OR (newer.created_at = retention_performance_tests.created_at
                            AND newer.request_id > retention_performance_tests.request_id))
            )
            """,
            """
            CREATE UNIQUE INDEX retention_performance_tests_one_pending
                ON retention_performance_tests (app_id, environment) WHERE state = 'PENDING'
            """,
        ]
    )
}
