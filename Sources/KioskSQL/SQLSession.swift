import Foundation
import SQLKit
import Synchronization

/// One connection, as the repositories (the store's and the merchant's) and the migrator see it: inside one open
/// transaction, except a PostgreSQL read (``SQLTransactionRunner/withReadSession(_:)``), whose statements run alone.
///
/// Every statement goes through here so engine errors come out as `StorageError` (unique violations named the
/// same way on both engines) at the statement that caused them, where a caller can still catch them.
public struct SQLSession: Sendable {
    /// The connection, already inside `BEGIN` unless this is a PostgreSQL read.
    public let sql: any SQLDatabase
    /// Turns an engine's error into a `StorageError`; leaves other errors alone.
    public let translate: @Sendable (any Error) -> any Error
    /// Counts every statement run here, for the engine's ``SQLDatabaseEngine/statementsRun``.
    let counter: StatementCounter?
    /// Refuses every statement that does not begin with `SELECT`: for reads that run outside a transaction
    /// (PostgreSQL's), where no `READ ONLY` transaction would refuse a write the code put there by mistake. It reads
    /// the statement's verb only: a `SELECT` of a function that writes (`nextval`, say) would pass, and no read of
    /// Kiosk's runs one.
    let selectsOnly: Bool

    init(
        sql: any SQLDatabase, translate: @escaping @Sendable (any Error) -> any Error,
        counter: StatementCounter? = nil, selectsOnly: Bool = false
    ) {
        self.sql = sql
        self.translate = translate
        self.counter = counter
        self.selectsOnly = selectsOnly
    }

    /// Runs a statement and ignores any rows.
    public func run(_ query: SQLQueryString) async throws {
        try checkSelect(query)
        counter?.add()
        do {
            try await sql.raw(query).run()
        } catch {
            throw translate(error)
        }
    }

    /// Runs a statement in a task of its own, so the caller's cancellation cannot stop it: for `COMMIT` and
    /// `ROLLBACK`, which must reach the database once a transaction is open, or it would stay open. PostgreSQL's
    /// driver stops a cancelled task's query; SQLite's statements run inline and ignore cancellation, so its engine
    /// runs them directly.
    public func runShielded(_ query: SQLQueryString) async throws {
        try await Task { try await run(query) }.value
    }

    /// Runs a query and returns all its rows.
    public func all(_ query: SQLQueryString) async throws -> [any SQLRow] {
        try checkSelect(query)
        counter?.add()
        do {
            return try await sql.raw(query).all()
        } catch {
            throw translate(error)
        }
    }

    /// Runs a query and returns its first row, if any.
    public func first(_ query: SQLQueryString) async throws -> (any SQLRow)? {
        try checkSelect(query)
        counter?.add()
        do {
            return try await sql.raw(query).first()
        } catch {
            throw translate(error)
        }
    }
}

extension SQLSession {
    /// Throws, running nothing, when this session runs only `SELECT` and `query` is something else.
    fileprivate func checkSelect(_ query: SQLQueryString) throws {
        guard selectsOnly else { return }
        var serializer = SQLSerializer(database: sql)
        query.serialize(to: &serializer)
        let verb = serializer.sql.drop(while: \.isWhitespace).prefix(while: \.isLetter)
        guard verb.uppercased() == "SELECT" else {
            throw StorageError.engine(
                message: "a read may run only SELECT; it was asked to run \(verb.isEmpty ? "an empty statement" : verb)"
            )
        }
    }
}

/// How many statements an engine's sessions ran: a count, so unlike a rate it does not move with the machine, and on
/// PostgreSQL each statement is a round trip to the server.
final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    func add() { count.add(1, ordering: .relaxed) }

    /// The statements counted so far.
    var value: Int { count.load(ordering: .relaxed) }
}

/// An engine that can open a transaction and hand out its `SQLSession`; the common ground of both engines.
public protocol SQLTransactionRunner: Sendable {
    /// Runs `body` between `BEGIN` and `COMMIT`, rolling back if it throws or the commit fails.
    func withSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T

    /// Runs `body` as a read, which neither waits for nor holds up writers: on SQLite in a transaction on one of the
    /// reader connections beside the one writer (one snapshot for all its statements), on PostgreSQL on a pooled
    /// connection with no transaction around its statements (each sees what was committed when it started, as at
    /// `READ COMMITTED` inside one). A statement that writes fails (`StorageError.engine`) on both: SQLite's readers
    /// are read-only connections, and PostgreSQL's read sessions refuse any statement but a `SELECT`.
    func withReadSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T
}

extension SQLRow {
    /// The column's value, or nil when it is NULL.
    public func optional<T: Decodable>(_ column: String, as type: T.Type) throws -> T? {
        try decodeNil(column: column) ? nil : decode(column: column, as: T.self)
    }

    /// A timestamp column (integer milliseconds since 1970).
    public func date(_ column: String) throws -> Date {
        Date(millisecondsSince1970: try decode(column: column, as: Int64.self))
    }

    /// A nullable timestamp column.
    public func optionalDate(_ column: String) throws -> Date? {
        try optional(column, as: Int64.self).map(Date.init(millisecondsSince1970:))
    }

    /// A UUID column (text); anything else is a storage error, not a crash.
    public func uuid(_ column: String) throws -> UUID {
        let text = try decode(column: column, as: String.self)
        guard let id = UUID(uuidString: text) else {
            throw StorageError.engine(message: "column \(column) holds '\(text)', which is not a UUID")
        }
        return id
    }

    /// A nullable UUID column.
    public func optionalUUID(_ column: String) throws -> UUID? {
        try decodeNil(column: column) ? nil : uuid(column)
    }

    /// A text column holding the raw value of `T`; an unknown value is a storage error, not a crash.
    public func enumeration<T: RawRepresentable>(_ column: String, as type: T.Type) throws -> T
    where T.RawValue == String {
        let raw = try decode(column: column, as: String.self)
        guard let value = T(rawValue: raw) else {
            throw StorageError.engine(message: "column \(column) holds '\(raw)', which is not a known \(T.self)")
        }
        return value
    }
}
