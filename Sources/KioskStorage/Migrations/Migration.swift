/// One versioned step of the schema. Applied once, in its own transaction, recorded in `schema_migrations`.
///
/// Statements are written once for both engines: `BIGINT`, `TEXT` and `BOOLEAN` columns (SQLite stores booleans
/// as 0/1), timestamps as BIGINT milliseconds since 1970, money as BIGINT minor units.
struct Migration: Sendable {
    /// Increases by one per migration; never reused or renumbered once released.
    let version: Int
    /// A short snake_case description, recorded beside the version.
    let name: String
    /// DDL statements, run in order.
    let statements: [String]

    /// Every migration, oldest first.
    static let all: [Migration] = [.catalog, .purchases, .verification, .subscriptions]
}
