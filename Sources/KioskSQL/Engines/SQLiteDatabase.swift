import Foundation
import KioskCore
import Logging
import NIOPosix
import SQLKit
import SQLiteKit

/// The embedded engine: one SQLite file in WAL mode, with foreign keys enforced and `synchronous=FULL` so a
/// committed transaction survives a power cut.
///
/// All transactions share one connection and queue on an `AsyncSerialLock`, each starting with
/// `BEGIN IMMEDIATE`: callers in this process wait their turn instead of failing with `SQLITE_BUSY`, and the busy
/// timeout covers another process holding the write lock. Each database has its own blocking-I/O thread, so while
/// it waits on SQLite's busy handler it can never hold up another database's commit in the same process.
public final class SQLiteDatabase: SQLDatabaseEngine {
    public let engine = "sqlite"

    private let connection: SQLiteConnection
    private let threadPool: NIOThreadPool
    private let sql: any SQLDatabase
    private let lock = AsyncSerialLock()
    private let logger: Logger
    /// Names a violated unique constraint the way the schema's owner does (SQLite reports its columns).
    private let constraintName: @Sendable (String) -> String

    /// How long a statement waits for another connection's write lock before failing; generous, because a writer
    /// on a loaded machine can hold the lock for seconds and failing a purchase costs more than waiting.
    package static let busyTimeoutMilliseconds = 30_000

    private init(
        connection: SQLiteConnection, threadPool: NIOThreadPool, logger: Logger,
        constraintName: @escaping @Sendable (String) -> String
    ) {
        self.connection = connection
        self.threadPool = threadPool
        self.sql = connection.sql(queryLogLevel: .trace)
        self.logger = logger
        self.constraintName = constraintName
    }

    /// Opens (creating if needed) the database at `storage`, sets and verifies its pragmas.
    static func open(
        storage: SQLiteConnection.Storage, logger: Logger,
        constraintName: @escaping @Sendable (String) -> String = { $0 }
    ) async throws -> SQLiteDatabase {
        if case .file(let path) = storage {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let threadPool = NIOThreadPool(numberOfThreads: 1)
        threadPool.start()
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(
                storage: storage, threadPool: threadPool, logger: logger,
                on: MultiThreadedEventLoopGroup.singleton.any())
        } catch {
            try? await threadPool.shutdownGracefully()
            throw Self.translate(error, constraintName: constraintName)
        }
        let database = SQLiteDatabase(
            connection: connection, threadPool: threadPool, logger: logger, constraintName: constraintName)
        var inMemory = false
        if case .memory = storage { inMemory = true }
        do {
            try await database.configure(inMemory: inMemory)
        } catch {
            try? await database.close()
            throw error
        }
        return database
    }

    /// Sets the pragmas and reads each back: a layer that silently resets `synchronous` must not go unnoticed.
    private func configure(inMemory: Bool) async throws {
        let timeout = "\(Self.busyTimeoutMilliseconds)"
        try await setPragma("busy_timeout", to: timeout, expect: timeout)
        // An in-memory database has no file to log ahead of; it reports journal mode `memory`.
        try await setPragma("journal_mode", to: "WAL", expect: inMemory ? "memory" : "wal")
        try await setPragma("foreign_keys", to: "ON", expect: "1")
        try await setPragma("synchronous", to: "FULL", expect: "2")
    }

    private func setPragma(_ name: String, to value: String, expect expected: String) async throws {
        _ = try await runPragma("PRAGMA \(name) = \(value)")
        let actual = try await pragma(name)
        guard actual.lowercased() == expected else {
            throw StorageError.engine(message: "PRAGMA \(name) is '\(actual)' after setting it to \(value)")
        }
    }

    /// The current value of `PRAGMA name`, as text; for the startup checks and tests.
    package func pragma(_ name: String) async throws -> String {
        try await runPragma("PRAGMA \(name)") ?? ""
    }

    /// Runs a pragma statement and returns the first column of its first row, as text.
    private func runPragma(_ statement: String) async throws -> String? {
        do {
            return try await lock.withLock {
                let rows = try await connection.query(statement)
                guard let data = rows.first?.columns.first?.data else { return nil }
                switch data {
                case .integer(let value): return String(value)
                case .text(let value): return value
                default: return data.description
                }
            }
        } catch {
            throw translate(error)
        }
    }

    public func withSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T {
        try await lock.withLock {
            // A task cancelled while it queued gives its turn back before starting anything.
            try Task.checkCancellation()
            let session = SQLSession(sql: sql, translate: translate)
            try await session.run("BEGIN IMMEDIATE")
            let value: T
            do {
                value = try await body(session)
                try await session.runShielded("COMMIT")
            } catch {
                await rollback(session, after: error)
                throw error
            }
            return value
        }
    }

    /// Rolls back after a failure, shielded from cancellation (the thread pool skips work of a cancelled task),
    /// so the transaction is closed before the lock is handed on.
    private func rollback(_ session: SQLSession, after error: any Error) async {
        do {
            try await session.runShielded("ROLLBACK")
        } catch {
            // A failed COMMIT may already have rolled back; then there is nothing left to undo.
            logger.debug("rollback after failure reported an error", metadata: ["error": "\(error)"])
        }
    }

    public func ping() async throws {
        _ = try await pragma("user_version")
    }

    /// Closes the connection after any running transaction. Shielded from cancellation: the thread pool skips
    /// work of a cancelled task, and an unclosed connection must not be left behind.
    public func close() async throws {
        let connection = connection
        let threadPool = threadPool
        try await lock.withLock {
            try await Task {
                try await connection.close()
                try await threadPool.shutdownGracefully()
            }.value
        }
    }

    /// SQLite's errors as `StorageError`; unique violations named by ``constraintName``.
    @Sendable func translate(_ error: any Error) -> any Error {
        Self.translate(error, constraintName: constraintName)
    }

    private static func translate(_ error: any Error, constraintName: (String) -> String) -> any Error {
        guard let error = error as? SQLiteError else { return error }
        let prefix = "UNIQUE constraint failed: "
        if error.message.hasPrefix(prefix) {
            return StorageError.uniqueViolation(
                constraint: constraintName(String(error.message.dropFirst(prefix.count))))
        }
        return StorageError.engine(message: error.description)
    }
}
