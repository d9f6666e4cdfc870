import KioskSQL

extension Migration {
    /// Migration 14: people who sign in to the console with a password; `roles` is a comma-separated list of App
    /// Store Connect role names, as in `team_keys`.
    static let consoleUsers = Migration(
        version: 14,
        name: "console_users",
        statements: [
            """
            CREATE TABLE console_users (
                email TEXT NOT NULL,
                name TEXT NOT NULL,
                roles TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                password_is_temporary BOOLEAN NOT NULL,
                disabled_at BIGINT,
                created_at BIGINT NOT NULL,
                CONSTRAINT console_users_pkey PRIMARY KEY (email)
            )
            """
        ]
    )
}
