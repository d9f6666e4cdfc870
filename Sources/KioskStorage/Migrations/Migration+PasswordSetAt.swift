import KioskSQL

extension Migration {
    /// Migration 23: when each console user's password was last set, so a temporary one expires
    /// (`ConsoleUser.temporaryPasswordLifetime` after it was made). Users from before have none: their temporary
    /// password counts from their creation.
    static let consolePasswordSetAt = Migration(
        version: 23,
        name: "console_password_set_at",
        statements: ["ALTER TABLE console_users ADD COLUMN password_set_at BIGINT"]
    )
}
