import SQLKit

/// How SQLKit writes SQLite's SQL. Kiosk writes its statements as text (`SQLQueryString`), so only what those use
/// matters: placeholders, quoted identifiers and string literals, and boolean literals.
struct SQLiteDialect: SQLDialect {
    var name: String { "sqlite" }
    var identifierQuote: any SQLExpression { SQLRaw(#"""#) }
    var literalStringQuote: any SQLExpression { SQLRaw("'") }
    var supportsAutoIncrement: Bool { false }
    var autoIncrementClause: any SQLExpression { SQLRaw("AUTOINCREMENT") }

    /// `?`, unnumbered: SQLKit numbers binds in the order it writes them, which is the order SQLite numbers `?`s.
    /// Numbered ones (`?1`, as SQLiteKit wrote) cost a lookup in a list of every placeholder, each time a statement
    /// is parsed and each time GRDB reads its parameters' names: time that grew with the square of a batch insert's
    /// binds (1.7% of a renewal run's samples).
    func bindPlaceholder(at position: Int) -> any SQLExpression { SQLRaw("?") }

    func literalBoolean(_ value: Bool) -> any SQLExpression { SQLRaw(value ? "TRUE" : "FALSE") }
}
