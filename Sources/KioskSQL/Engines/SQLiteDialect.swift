import SQLKit

/// How SQLKit writes SQLite's SQL. Kiosk writes its statements as text (`SQLQueryString`), so only what those use
/// matters: numbered placeholders (`?1`), quoted identifiers and string literals, and boolean literals.
struct SQLiteDialect: SQLDialect {
    var name: String { "sqlite" }
    var identifierQuote: any SQLExpression { SQLRaw(#"""#) }
    var literalStringQuote: any SQLExpression { SQLRaw("'") }
    var supportsAutoIncrement: Bool { false }
    var autoIncrementClause: any SQLExpression { SQLRaw("AUTOINCREMENT") }

    func bindPlaceholder(at position: Int) -> any SQLExpression { SQLRaw("?\(position)") }

    func literalBoolean(_ value: Bool) -> any SQLExpression { SQLRaw(value ? "TRUE" : "FALSE") }
}
