/// One versioned step of the schema. Applied once, in its own transaction, recorded in `schema_migrations`.
///
/// Statements are written once for both engines: `BIGINT`, `TEXT` and `BOOLEAN` columns (SQLite stores booleans
/// as 0/1), timestamps as BIGINT milliseconds since 1970, money as BIGINT minor units.
public struct Migration: Sendable {
    /// Increases by one per migration; never reused or renumbered once released.
    public let version: Int
    /// A short snake_case description, recorded beside the version.
    public let name: String
    /// DDL statements, run in order.
    public let statements: [String]

    public init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}
