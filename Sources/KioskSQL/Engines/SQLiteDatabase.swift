import Foundation
import GRDB
import KioskCore
import Logging
import SQLKit
import Synchronization

/// The embedded engine: one SQLite file in WAL mode, with foreign keys enforced, and every transaction answered only
/// once its commit is synced to the log (``SQLiteLogSync``, beside the writer), so it survives a power cut.
///
/// All transactions share one connection and queue on an `AsyncSerialLock`, each starting with
/// `BEGIN IMMEDIATE`: callers in this process wait their turn instead of failing with `SQLITE_BUSY`, and the busy
/// timeout covers another process holding the write lock. Statements run on the caller's thread
/// (``SQLiteStatements``): a statement takes microseconds, and a commit's `fsync` about a millisecond, far less than
/// handing each statement to another thread and back. The cost: a transaction waiting for *another process's* write
/// lock holds one thread of the caller's pool while it waits.
public final class SQLiteDatabase: SQLDatabaseEngine {
    public let engine = "sqlite"

    private let queue: DatabaseQueue
    private let sql: SQLiteStatements
    /// Read-only connections to the same file; nil for an in-memory database, whose reads run on the writer.
    private let readers: SQLiteReaders?
    /// Copies the log back into the file beside the writer; nil for an in-memory database, which has no log.
    private let checkpointer: SQLiteCheckpointer?
    /// Syncs the log beside the writer; nil for an in-memory database.
    private let logSync: SQLiteLogSync?
    private let lock = AsyncSerialLock()
    private let commits = GroupCommit()
    private let sessions = SessionCounter()
    /// The statements the writer ran (the readers count theirs).
    private let statements = StatementCounter()
    /// Microseconds the writer spent in batches, from `BEGIN` to the end of `COMMIT`.
    private let writerBusy = Atomic<Int>(0)
    private let logger: Logger
    /// Names a violated unique constraint the way the schema's owner does (SQLite reports its columns).
    private let constraintName: @Sendable (String) -> String

    /// How long a statement waits for another connection's write lock before failing; generous, because a writer
    /// on a loaded machine can hold the lock for seconds and failing a purchase costs more than waiting.
    package static let busyTimeoutMilliseconds = 30_000

    private init(
        queue: DatabaseQueue, readers: SQLiteReaders?, checkpointer: SQLiteCheckpointer?, logSync: SQLiteLogSync?,
        logger: Logger, constraintName: @escaping @Sendable (String) -> String
    ) {
        self.queue = queue
        self.readers = readers
        self.checkpointer = checkpointer
        self.logSync = logSync
        self.sql = SQLiteStatements(queue: queue, logger: logger)
        self.logger = logger
        self.constraintName = constraintName
    }

    /// Opens (creating if needed) the database file at `path`, or a new in-memory database when `path` is nil; sets
    /// and verifies its pragmas. `syncLog` makes the log durable (tests hold or fail it).
    static func open(
        path: String?, logger: Logger, constraintName: @escaping @Sendable (String) -> String = { $0 },
        syncLog: @escaping SQLiteLogSync.Sync = SQLiteLogSync.fdatasync
    ) async throws -> SQLiteDatabase {
        var configuration = GRDB.Configuration()
        // Transactions span many calls into the connection (one per statement); `withSession` opens and closes them.
        configuration.allowsUnsafeTransactions = true
        let queue: DatabaseQueue
        do {
            if let path {
                let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                queue = try DatabaseQueue(path: path, configuration: configuration)
            } else {
                queue = try DatabaseQueue(configuration: configuration)
            }
        } catch {
            throw Self.translate(error, constraintName: constraintName)
        }
        let writer = SQLiteDatabase(
            queue: queue, readers: nil, checkpointer: nil, logSync: nil, logger: logger, constraintName: constraintName)
        do {
            try await writer.configure(inMemory: path == nil)
        } catch {
            try? await writer.close()
            throw error
        }
        // Readers and the checkpointer open once the writer has put the file in WAL mode, which lets them work beside
        // it.
        guard let path else { return writer }
        var readers: SQLiteReaders?
        do {
            readers = try SQLiteReaders(
                path: path, count: SQLiteReaders.count, logger: logger,
                pragmas: [
                    ("busy_timeout", "\(busyTimeoutMilliseconds)"), ("cache_size", "\(cacheSizeKiB)"),
                    ("mmap_size", "\(mmapBytes)"),
                ])
            let checkpointer = try SQLiteCheckpointer(path: path, logger: logger)
            queue.inDatabase { checkpointer.install(on: $0) }
            return SQLiteDatabase(
                queue: queue, readers: readers, checkpointer: checkpointer,
                logSync: SQLiteLogSync(databasePath: path, sync: syncLog), logger: logger,
                constraintName: constraintName)
        } catch {
            try? await readers?.close()
            try? await writer.close()
            throw Self.translate(error, constraintName: constraintName)
        }
    }

    /// Sets the pragmas and reads each back: a layer that silently resets `synchronous` must not go unnoticed.
    private func configure(inMemory: Bool) async throws {
        let timeout = "\(Self.busyTimeoutMilliseconds)"
        try await setPragma("busy_timeout", to: timeout, expect: timeout)
        // An in-memory database has no file to log ahead of; it reports journal mode `memory`.
        try await setPragma("journal_mode", to: "WAL", expect: inMemory ? "memory" : "wal")
        try await setPragma("foreign_keys", to: "ON", expect: "1")
        // `COMMIT` writes the log without an `fsync`; ``SQLiteLogSync`` syncs it beside the writer before anyone is
        // answered. SQLite still syncs the log before each checkpoint copies it into the file.
        try await setPragma("synchronous", to: "NORMAL", expect: "1")
        // SQLite's default page cache (2 MiB) made a renewal run read pages from the file on every statement once the
        // tables outgrew it (a sixth of the time in pread); 64 MiB keeps a large store's hot pages in memory.
        try await setPragma("cache_size", to: "\(Self.cacheSizeKiB)", expect: "\(Self.cacheSizeKiB)")
        // Beyond the cache, pages are read through a memory map instead of one `pread` call each: at 30,000
        // renewals the file outgrew the cache and `pread` took over a quarter of the time. An in-memory database
        // has no file to map.
        if !inMemory { try await setPragma("mmap_size", to: "\(Self.mmapBytes)", expect: "\(Self.mmapBytes)") }
    }

    /// `PRAGMA mmap_size`: how much of the file SQLite reads through a memory map.
    static let mmapBytes = 1 << 30

    /// `PRAGMA cache_size` in its negative form: KiB of page cache.
    static let cacheSizeKiB = -65_536

    private func setPragma(_ name: String, to value: String, expect expected: String) async throws {
        _ = try await runPragma("PRAGMA \(name) = \(value)")
        let actual = try await pragma(name)
        guard actual.lowercased() == expected else {
            throw StorageError.engine(message: "PRAGMA \(name) is '\(actual)' after setting it to \(value)")
        }
    }

    /// The plan SQLite chose (`EXPLAIN QUERY PLAN`, a line per step) for each distinct statement `body` ran on the
    /// writer, by its SQL; for tests that pin how a statement finds its rows.
    package func queryPlans(during body: () async throws -> Void) async throws -> [String: [String]] {
        /// Touched only on the connection's queue: by the trace as statements run, then by the plans below.
        final class Statements { var sql: Set<String> = [] }
        let statements = Statements()
        queue.inDatabase { database in
            database.trace(options: .statement) { event in
                if case .statement(let statement) = event { statements.sql.insert(statement.sql) }
            }
        }
        defer { queue.inDatabase { $0.trace(options: .statement, nil) } }
        try await body()
        return try queue.inDatabase { database in
            var plans: [String: [String]] = [:]
            for sql in statements.sql {
                let explain = try database.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql)
                // Its parameters stay unbound (NULL): SQLite plans a statement before it sees their values.
                explain.setUncheckedArguments([])
                let plan = try Row.fetchAll(explain).map { $0["detail"] as String }
                if !plan.isEmpty { plans[sql] = plan }
            }
            return plans
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
                guard let row = try await sql.raw("\(unsafeRaw: statement)").first(),
                    let column = row.allColumns.first
                else { return nil }
                if let number = try? row.decode(column: column, as: Int64.self) { return String(number) }
                return try row.decode(column: column, as: String.self)
            }
        } catch {
            throw translate(error)
        }
    }

    /// One writer connection runs the sessions of a group commit in turn.
    public var poolUse: DatabasePoolUse { sessions.use(size: 1) }

    /// Runs `body` in a transaction. Transactions that arrive while others run share one commit
    /// (``GroupCommit``): each body in its own savepoint, so one that throws undoes only its own writes, and each
    /// caller answered only once the shared `COMMIT` is durable, which the next batch does not wait for.
    public func withSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T {
        // A task cancelled before its turn gives it back before starting anything.
        try Task.checkCancellation()
        return try await sessions.counting { started in
            try await commits.perform(started: started, body) { batch in await runBatch(batch) }
        }
    }

    /// One database transaction for `batch`: a savepoint per body when there are several, one `COMMIT` for all.
    /// Returns, once it committed, the wait for that commit to be durable, run after the writer is handed on.
    private func runBatch(_ batch: [GroupCommit.Work]) async -> GroupCommit.Settle? {
        // Exclusive with pragmas and `close`, which must not run inside a transaction.
        await lock.acquire()
        let started = ContinuousClock.now
        defer {
            let busy = (ContinuousClock.now - started).components
            writerBusy.add(
                Int(busy.seconds) * 1_000_000 + Int(busy.attoseconds / 1_000_000_000_000), ordering: .relaxed)
            lock.release()
        }
        let session = SQLSession(sql: sql, translate: translate, counter: statements)
        let pagesBefore = logSync.map { _ in pagesWritten() }
        func fail(_ error: any Error) async {
            await rollback(session)
            for work in batch { work.commitError = error }
        }
        do {
            try await session.run("BEGIN IMMEDIATE")
        } catch {
            for work in batch { work.commitError = error }
            return nil
        }
        if let work = batch.first, batch.count == 1 {
            guard await work.run(session) else {
                await rollback(session)
                return nil
            }
        } else {
            for work in batch {
                do {
                    try await session.run("SAVEPOINT grouped")
                    if !(await work.run(session)) { try await session.run("ROLLBACK TO grouped") }
                    try await session.run("RELEASE grouped")
                } catch {
                    // A body's writes could not be kept apart from the others': none of the batch commits.
                    await fail(error)
                    return nil
                }
            }
        }
        // Statements run inline on this thread and nothing on their way checks for cancellation, so `COMMIT` and
        // `ROLLBACK` reach the database without a task of their own to shield them (`SQLSession.runShielded`): that
        // task's two thread hand-offs were 7% of a purchase's CPU.
        do {
            try await session.run("COMMIT")
        } catch {
            await fail(error)
            return nil
        }
        guard let logSync else { return nil }
        // A transaction that wrote nothing has nothing to sync, but may have read what an unsynced commit wrote: it
        // waits for that one, as a read does. (A replayed merchant delivery synced the log for nothing: 12% slower.)
        let commit = pagesWritten() == pagesBefore ? logSync.lastWritten : logSync.written()
        return { writerIdle in
            do {
                try await logSync.durable(through: commit, here: writerIdle)
            } catch {
                for work in batch { work.commitError = error }
            }
        }
    }

    /// SQLite's count of the pages the writer has written (to the log), for telling whether a transaction wrote any.
    private func pagesWritten() -> Int32 {
        queue.inDatabase { SQLiteCheckpointer.pagesWritten(by: $0.sqliteConnection) }
    }

    /// Rolls back after a failure, so the transaction is closed before the connection is handed on.
    private func rollback(_ session: SQLSession) async {
        do {
            try await session.run("ROLLBACK")
        } catch {
            // A failed COMMIT may already have rolled back; then there is nothing left to undo.
            logger.debug("rollback after failure reported an error", metadata: ["error": "\(error)"])
        }
    }

    /// A read waits, before it returns, for every commit it could have seen to be durable: a reader sees a commit as
    /// soon as it is in the log, before ``SQLiteLogSync`` has synced it.
    public func withReadSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T {
        guard let readers else { return try await withSession(body) }
        try Task.checkCancellation()
        let value = try await readers.read(translate: translate, body)
        if let logSync { try await logSync.durable(through: logSync.lastWritten) }
        return value
    }

    /// Reads `user_version` without waiting for the running transaction: a read between its statements on the same
    /// connection is harmless, and `/health` must not queue behind a batch of renewals.
    public func ping() async throws {
        do {
            _ = try await sql.raw("PRAGMA user_version").first()
        } catch {
            throw translate(error)
        }
    }

    /// How many checkpoints copied the log back into the file, beside the writer and inside its commits.
    package var checkpoints: SQLiteCheckpointer.Counts { checkpointer?.counts ?? .init() }

    public var logPagesWritten: Int? { checkpointer?.counts.pagesLogged }

    public var writerBusyMicroseconds: Int? { writerBusy.load(ordering: .relaxed) }

    public var logSyncs: Int? { logSync?.syncs }

    /// Transactions and reads waiting for the log's sync on its thread; for tests.
    package var waitingForLogSync: Int { logSync?.waiting ?? 0 }

    public var statementsRun: Int { statements.value + (readers?.statements.value ?? 0) }

    /// Returns once the checkpoints asked for so far have ended; for tests.
    package func checkpointsFinished() async { await checkpointer?.finished() }

    /// Closes the connections after any running transaction; the writer's last, so that its `close` copies the log
    /// into the file and removes it.
    public func close() async throws {
        try await readers?.close()
        try await lock.withLock {
            do {
                if let checkpointer {
                    queue.inDatabase { checkpointer.uninstall(from: $0) }
                    try await checkpointer.close()
                }
                try queue.close()
            } catch {
                throw translate(error)
            }
        }
    }

    /// SQLite's errors as `StorageError`; unique violations named by ``constraintName``.
    @Sendable func translate(_ error: any Error) -> any Error {
        Self.translate(error, constraintName: constraintName)
    }

    private static func translate(_ error: any Error, constraintName: (String) -> String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        let prefix = "UNIQUE constraint failed: "
        if let message = error.message, message.hasPrefix(prefix) {
            return StorageError.uniqueViolation(constraint: constraintName(String(message.dropFirst(prefix.count))))
        }
        return StorageError.engine(message: error.description)
    }
}
