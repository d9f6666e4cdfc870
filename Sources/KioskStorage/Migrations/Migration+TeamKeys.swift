import KioskSQL

extension Migration {
    /// Migration 11: team keys for the App Store Connect API, apart from In-App Purchase keys (which belong to an
    /// app); `roles` is a comma-separated list of App Store Connect role names.
    static let teamKeys = Migration(
        version: 11,
        name: "team_keys",
        statements: [
            """
            CREATE TABLE team_keys (
                id TEXT NOT NULL,
                name TEXT NOT NULL,
                roles TEXT NOT NULL,
                public_key_pem TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT,
                CONSTRAINT team_keys_pkey PRIMARY KEY (id)
            )
            """
        ]
    )
}
