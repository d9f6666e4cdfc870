import Foundation
import GRDB
import GRDBSQLite
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// SQLKit's view of the embedded engine's one connection: each statement runs at once on the calling thread
/// (prepared once and kept in GRDB's statement cache), with no hop to another thread and back.
///
/// Profiles of renewals and purchases showed a third of the CPU in waking threads when every statement went through a
/// driver's thread pool and back to an event loop; running inline removes those hops. Callers never run two
/// statements at once: ``SQLiteDatabase`` hands the connection to one transaction at a time.
struct SQLiteStatements: SQLDatabase {
    let queue: DatabaseQueue
    let logger: Logger
    let eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    let dialect: any SQLDialect = SQLiteDialect()
    var queryLogLevel: Logger.Level? { .trace }

    func execute(sql query: any SQLKit.SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try executeNow(query, onRow)
    }

    func execute(sql query: any SQLKit.SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        do {
            try executeNow(query, onRow)
            return eventLoop.makeSucceededVoidFuture()
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    /// Binds, steps and hands each result row to `onRow`, on this thread.
    private func executeNow(_ query: any SQLKit.SQLExpression, _ onRow: (any SQLRow) -> Void) throws {
        let (sql, binds) = serialize(query)
        logger.trace("SQL statement", metadata: ["sql": "\(sql)"])
        let rows = try queue.inDatabase { database -> [SQLiteResultRow] in
            let statement = try database.cachedStatement(sql: sql)
            try Self.bind(binds, to: statement)
            guard statement.columnCount > 0 else {
                try statement.execute()
                return []
            }
            let columns = statement.columnNames
            var rows: [SQLiteResultRow] = []
            try ValuesCursor(statement).forEach { rows.append(SQLiteResultRow(columns: columns, values: $0)) }
            return rows
        }
        for row in rows { onRow(row) }
    }

    /// Steps a statement whose arguments are bound, copying each row's values out as it goes. GRDB's `Row` cursor
    /// first maps every column's lowercased name to its index, which Kiosk never asks for: with reading the values
    /// through a key path, a fifth of the time `verifyReceipt` spent in its SQL statements.
    private final class ValuesCursor: DatabaseCursor {
        typealias Element = [DatabaseValue]
        let _statement: Statement
        var _isDone = false
        private let columnCount: CInt

        init(_ statement: Statement) {
            _statement = statement
            columnCount = CInt(statement.columnCount)
        }

        func _element(sqliteStatement: SQLiteStatement) -> [DatabaseValue] {
            (0..<columnCount).map { DatabaseValue(sqliteStatement: sqliteStatement, index: $0) }
        }
    }

    /// Binds `binds` to the statement's `?`s in order, as SQLite stores them: integers, text, and booleans as the
    /// integers 0 and 1 (the values SQLiteKit, this engine's former driver, stored); a nil of any optional type is
    /// NULL. Kiosk's statements bind nothing else, so any other type is a mistake in Kiosk, reported rather than
    /// stored in an encoding of its own, and so is a count of values other than the statement's count of `?`s.
    ///
    /// Each value goes straight to `sqlite3_bind_*`. Through GRDB's `StatementArguments` they were mapped by a key
    /// path the runtime made anew for every statement, then by an unspecialized generic `map`: 4% of a purchase's CPU
    /// (`perf`, one client), more than SQLite took to run the statements.
    private static func bind(_ binds: [any Encodable & Sendable], to statement: Statement) throws {
        // Resets the statement and sets every parameter to NULL, which is what a nil binds.
        statement.setUncheckedArguments(StatementArguments())
        let sqliteStatement = statement.sqliteStatement
        guard binds.count == Int(sqlite3_bind_parameter_count(sqliteStatement)) else {
            throw StorageError.engine(
                message: "Kiosk bound a statement's parameters to \(binds.count) value(s) where it has "
                    + "\(sqlite3_bind_parameter_count(sqliteStatement)): \(statement.sql)")
        }
        for (offset, bind) in binds.enumerated() {
            let code = try Self.bind(bind, to: sqliteStatement, at: CInt(offset + 1))
            guard code == SQLITE_OK else {
                throw StorageError.engine(
                    message: "SQLite refused value \(offset + 1) of a statement (code \(code)): \(statement.sql)")
            }
        }
    }

    /// Binds one value; returns SQLite's result code. The value is cast to its own exact type, found by its
    /// `ObjectIdentifier`, which the runtime does by copying: casting each value to `Int64?`, `String?`… in turn (a
    /// failing cast looks up conformances, one to an optional type checks for a nil of any type), with GRDB's
    /// unspecialized binding of an optional, took most of the binding's time. A nil stays the NULL the statement was
    /// reset to.
    private static func bind(_ bind: any Encodable & Sendable, to statement: SQLiteStatement, at index: CInt) throws
        -> CInt
    {
        let integer: Int64?
        switch ObjectIdentifier(type(of: bind)) {
        case ObjectIdentifier(String.self): return (bind as? String)?.bind(to: statement, at: index) ?? SQLITE_OK
        case ObjectIdentifier(String?.self):
            return ((bind as? String?) ?? nil)?.bind(to: statement, at: index) ?? SQLITE_OK
        case ObjectIdentifier(Int64.self): integer = bind as? Int64
        case ObjectIdentifier(Int64?.self): integer = (bind as? Int64?) ?? nil
        case ObjectIdentifier(Int.self): integer = (bind as? Int).map { Int64($0) }
        case ObjectIdentifier(Int?.self): integer = (bind as? Int?)?.map { Int64($0) }
        case ObjectIdentifier(Bool.self): integer = (bind as? Bool).map { $0 ? 1 : 0 }
        case ObjectIdentifier(Bool?.self): integer = (bind as? Bool?)?.map { $0 ? 1 : 0 }
        default:
            // A nil of any other optional type casts to `Int64?` as nil, and is NULL.
            guard case .some(.none) = bind as? Int64? else {
                throw StorageError.engine(message: "Kiosk cannot bind a value of type \(type(of: bind)) on SQLite")
            }
            return SQLITE_OK
        }
        return integer?.bind(to: statement, at: index) ?? SQLITE_OK
    }
}

/// One result row, copied out of the statement.
struct SQLiteResultRow: SQLRow {
    let columns: [String]
    let values: [DatabaseValue]

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    /// True for NULL, and for a column the row does not have (an optional property the query did not select).
    func decodeNil(column: String) throws -> Bool {
        guard let index = columns.firstIndex(of: column) else { return true }
        return values[index].isNull
    }

    /// The column as `D`: integers as `Int64`, `Int` (when it fits) or `Bool` (non-zero is true), text as `String`,
    /// NULL as an optional's nil, and each of these as its optional. Kiosk reads nothing else.
    ///
    /// The four plain types Kiosk reads are found by their `ObjectIdentifier` and then cast with `as!`, which cannot
    /// fail once the types are equal; the rest go to ``decodeOther(_:column:as:)``. Its `as? D` casts, in this
    /// unspecialized generic code, made the runtime look up `Optional<D>`'s metadata on every call, even for a column
    /// no such cast was reached for: with the failed casts before the right one, 1.5% of Get Transaction Info's time at
    /// 64 connections.
    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        let value = try value(column)
        let wanted = ObjectIdentifier(D.self)
        switch value.storage {
        case .int64(let number) where wanted == ObjectIdentifier(Int64.self): return number as! D
        case .int64(let number) where wanted == ObjectIdentifier(Int.self) && Int(exactly: number) != nil:
            return Int(number) as! D
        case .int64(let number) where wanted == ObjectIdentifier(Bool.self): return (number != 0) as! D
        case .string(let text) where wanted == ObjectIdentifier(String.self): return text as! D
        default: return try Self.decodeOther(value, column: column, as: D.self)
        }
    }

    /// `decode` for optionals and for a value of the wrong type, which it reports.
    @inline(never)
    private static func decodeOther<D: Decodable>(_ value: DatabaseValue, column: String, as type: D.Type) throws -> D {
        switch value.storage {
        case .int64(let number):
            if let result = number as? D { return result }
            if let result = Int(exactly: number).flatMap({ $0 as? D }) { return result }
            if let result = (number != 0) as? D { return result }
        case .string(let text):
            if let result = text as? D { return result }
        case .null:
            if let optional = D.self as? any ExpressibleByNilLiteral.Type,
                let result = optional.init(nilLiteral: ()) as? D
            {
                return result
            }
        case .double, .blob: break
        }
        throw DecodingError.typeMismatch(
            D.self, .init(codingPath: [], debugDescription: "The column \(column) holds \(value), not \(D.self)."))
    }

    private func value(_ column: String) throws -> DatabaseValue {
        guard let index = columns.firstIndex(of: column) else {
            throw StorageError.engine(message: "the result has no column \(column)")
        }
        return values[index]
    }
}
