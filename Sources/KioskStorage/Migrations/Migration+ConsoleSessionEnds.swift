import KioskSQL

extension Migration {
    /// Migration 22: console sessions ended before their cookie expires, so every replica refuses them. `key` is
    /// `session:NONCE` (one session signed out) or `subject:SUBJECT` (every session of a person issued until
    /// `ended_at`: "sign out everywhere"); a row is kept until `expires_at`, when no session it ends can live.
    static let consoleSessionEnds = Migration(
        version: 22,
        name: "console_session_ends",
        statements: [
            """
            CREATE TABLE console_session_ends (
                key TEXT NOT NULL PRIMARY KEY,
                ended_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """
        ]
    )
}
