import Foundation
import KioskCore

/// A database on either engine (SQLite or PostgreSQL) whose schema belongs to its user: transactions over raw SQL
/// statements (`withSession`), durable (on SQLite, WAL and the log synced before anyone is answered). The store's
/// schema and the merchant's ledger each sit on one.
public protocol SQLDatabaseEngine: SQLTransactionRunner {
    /// `sqlite` or `postgresql`.
    var engine: String { get }
    /// Checks the database answers; throws if it does not.
    func ping() async throws
    /// How many sessions run and wait now, and how many may run at once.
    var poolUse: DatabasePoolUse { get }
    /// SQLite: pages this process's writer has appended to the write-ahead log since the database opened, a measure
    /// of what commits cost the disk; nil on PostgreSQL and for an in-memory database.
    var logPagesWritten: Int? { get }
    /// SQLite: how long this process's one writer has spent in transactions, their commits included (not the log's
    /// sync, made beside it), in microseconds since the database opened: the part of each write that nothing runs
    /// beside. Nil on PostgreSQL.
    var writerBusyMicroseconds: Int? { get }
    /// SQLite: how many times the write-ahead log was synced since the database opened; each makes every commit
    /// written before it durable. Nil on PostgreSQL and for an in-memory database.
    var logSyncs: Int? { get }
    /// Statements this process's sessions ran since the database opened, `BEGIN` and `COMMIT` included: what a
    /// request costs the database in calls (on PostgreSQL each one a round trip).
    var statementsRun: Int { get }
    /// Closes connections. Call once, at shutdown.
    func close() async throws
}

/// Failures the storage layer reports in terms callers can act on.
public enum StorageError: Error, Sendable, Equatable {
    /// A unique constraint was violated; `constraint` names it (e.g. `apps.bundle_id`).
    case uniqueViolation(constraint: String)
    /// The database URL could not be understood.
    case invalidURL(String)
    /// A setting of the database (its pool size, say) is outside what works; the message says what does.
    case invalidSetting(String)
    /// The database refused or failed; `message` is the engine's text.
    case engine(message: String)
}

extension StorageError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .uniqueViolation(let constraint): "A unique value is already taken (\(constraint))."
        case .invalidURL(let message), .invalidSetting(let message): message
        case .engine(let message): "The database failed: \(message)"
        }
    }
}

extension StorageError: KioskErrorConvertible {
    /// A unique violation is the client's conflict (409 `already_exists`, naming the constraint); the rest are the
    /// server's failures.
    public var kioskError: KioskError? {
        guard case .uniqueViolation(let constraint) = self else { return nil }
        return KioskError(
            .alreadyExists, "Something with the same unique value already exists (\(constraint)).",
            field: constraint, fix: "Choose another value.")
    }
}
