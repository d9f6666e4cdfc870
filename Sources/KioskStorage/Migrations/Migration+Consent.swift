import KioskSQL

extension Migration {
    /// Migration 17: a parent's withdrawal of consent for an account's use of an app, on its app transaction: the
    /// `RESCIND_CONSENT` notification that reported it (set once; a repeat changes nothing).
    static let consent = Migration(
        version: 17,
        name: "consent",
        statements: [
            "ALTER TABLE app_transactions ADD COLUMN consent_rescinded_by TEXT"
        ]
    )
}
