import Foundation
import GRDB
import KioskCore
import Synchronization
import Testing

@testable import KioskSQL
@testable import KioskStorage

/// Behaviours only the SQLite engine has: its pragmas and the URL forms that reach it.
@Suite("SQLite engine")
struct SQLiteEngineTests {
    @Test
    func pragmasAreDurable() async throws {
        // Proves a file database runs in WAL mode with foreign keys on, synchronous=NORMAL (1: the log is synced beside
        // the writer, see the two tests below), a 64 MiB page cache and a 1 GiB memory map, read back.
        try await TestEngine.sqlite.withDatabase { database, _ in
            let sqlite = try #require((database as? StoreDatabase)?.sql as? SQLiteDatabase)
            #expect(try await sqlite.pragma("journal_mode") == "wal")
            #expect(try await sqlite.pragma("foreign_keys") == "1")
            #expect(try await sqlite.pragma("synchronous") == "1")
            #expect(try await sqlite.pragma("busy_timeout") == "\(SQLiteDatabase.busyTimeoutMilliseconds)")
            #expect(try await sqlite.pragma("cache_size") == "\(SQLiteDatabase.cacheSizeKiB)")
            #expect(try await sqlite.pragma("mmap_size") == "\(SQLiteDatabase.mmapBytes)")
        }
    }

    @Test
    func theLogIsCopiedBackBesideTheWriterAndStaysBounded() async throws {
        // Proves the write-ahead log is copied back into the file on the checkpointer's own connection rather than
        // inside the writer's commits (SQLite's automatic checkpoint would have run in 20 of them), and that the log
        // file never grows past the checkpointer's limit and the transaction that crossed it: 40 transactions of 500
        // one-page rows.
        try await TestEngine.sqlite.withDatabase { database, url in
            let sqlite = try #require((database as? StoreDatabase)?.sql as? SQLiteDatabase)
            guard case .sqliteFile(let path) = try DatabaseLocation(url: url) else {
                Issue.record("TestEngine.sqlite gave \(url), not a file")
                return
            }
            try await sqlite.withSession { try await $0.run("CREATE TABLE pages (bytes BLOB NOT NULL)") }
            for _ in 0..<40 {
                try await sqlite.withSession { session in
                    try await session.run(
                        """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                        INSERT INTO pages SELECT randomblob(4000) FROM n
                        """)
                }
            }
            await sqlite.checkpointsFinished()
            let checkpoints = sqlite.checkpoints
            // Each row fills a page of its own.
            #expect(checkpoints.pagesLogged >= 20_000)
            #expect(sqlite.logPagesWritten == checkpoints.pagesLogged)
            #expect(checkpoints.beside >= 1)
            #expect(checkpoints.byWriter <= 20_000 / Int(SQLiteCheckpointer.limit) + 1)
            let logBytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
            // A log frame is a page and its 24-byte header; the log has a 32-byte header.
            let framesAtMost = Int(SQLiteCheckpointer.limit) + 2 * 520
            #expect(logBytes <= 32 + framesAtMost * (4_096 + 24))
            let rows = try await sqlite.withReadSession { session in
                try await session.first("SELECT COUNT(*) AS n FROM pages")?.decode(column: "n", as: Int.self)
            }
            #expect(rows == 20_000)
        }
    }

    @Test
    func aTransactionAndAReadOfItAreAnsweredOnlyOnceTheLogIsSynced() async throws {
        // Proves the writer's callers, and a reader that saw their commit, wait for the log's sync beside the writer:
        // with the sync held, the row is committed (another connection reads it), the read has read it and waits (or,
        // were it not to wait, has returned), and neither call has returned before the sync is released.
        let sync = HeldSync()
        try await withSQLiteFile(syncLog: sync.sync) { database, path in
            try await database.withSession { try await $0.run("CREATE TABLE sales (id INTEGER PRIMARY KEY)") }
            let syncsBefore = try #require(database.logSyncs)
            sync.hold()
            let write = Task {
                try await database.withSession { try await $0.run("INSERT INTO sales (id) VALUES (1)") }
                return sync.isReleased
            }
            // The commit is in the log, and its sync held.
            let other = try DatabaseQueue(path: path)
            while try await other.read({ try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM sales") }) != 1 {
                try await Task.sleep(for: .milliseconds(1))
            }
            try other.close()
            let waitingBefore = database.waitingForLogSync
            let readReturned = Mutex(false)
            let read = Task {
                let count = try await database.withReadSession { session in
                    try await session.first("SELECT COUNT(*) AS n FROM sales")?.decode(column: "n", as: Int.self)
                }
                let afterSync = sync.isReleased
                readReturned.withLock { $0 = true }
                return (count, afterSync)
            }
            while database.waitingForLogSync == waitingBefore && !readReturned.withLock({ $0 }) {
                try await Task.sleep(for: .milliseconds(1))
            }
            sync.release()
            #expect(try await write.value, "the write was answered before its commit was synced")
            let (count, readAfterSync) = try await read.value
            #expect(count == 1)
            #expect(readAfterSync, "a read of an unsynced commit was answered before the sync")
            #expect(try #require(database.logSyncs) > syncsBefore)
        }
    }

    @Test
    func onlyATransactionThatWroteSyncsTheLog() async throws {
        // Proves a write transaction that changed nothing (a replayed delivery's) answers without a sync of the log,
        // and one that wrote syncs it once.
        try await withSQLiteFile(syncLog: SQLiteLogSync.fdatasync) { database, _ in
            try await database.withSession { try await $0.run("CREATE TABLE sales (id INTEGER PRIMARY KEY)") }
            let before = try #require(database.logSyncs)
            let count = try await database.withSession { session in
                try await session.first("SELECT COUNT(*) AS n FROM sales")?.decode(column: "n", as: Int.self)
            }
            #expect(count == 0)
            #expect(database.logSyncs == before)
            try await database.withSession { try await $0.run("INSERT INTO sales (id) VALUES (1)") }
            #expect(database.logSyncs == before + 1)
        }
    }

    @Test
    func aCommitWhoseLogCannotBeSyncedIsReportedToItsCaller() async throws {
        // Proves a failed sync reaches the transaction's caller as the sync's own error (the commit itself stays: SQLite
        // wrote it), and the next transaction, synced, succeeds.
        let sync = HeldSync()
        try await withSQLiteFile(syncLog: sync.sync) { database, _ in
            try await database.withSession { try await $0.run("CREATE TABLE sales (id INTEGER PRIMARY KEY)") }
            sync.failNext()
            await #expect {
                try await database.withSession { try await $0.run("INSERT INTO sales (id) VALUES (1)") }
            } throws: { error in
                error as? StorageError == HeldSync.failure
            }
            try await database.withSession { try await $0.run("INSERT INTO sales (id) VALUES (2)") }
            let count = try await database.withReadSession { session in
                try await session.first("SELECT COUNT(*) AS n FROM sales")?.decode(column: "n", as: Int.self)
            }
            #expect(count == 2)
        }
    }

    /// Opens an SQLite database in a new file whose log `syncLog` syncs, runs `body`, closes it and removes the file.
    private func withSQLiteFile(
        syncLog: @escaping SQLiteLogSync.Sync, _ body: (SQLiteDatabase, String) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-sync-\(UUID().uuidString)")
        let path = folder.appendingPathComponent("kiosk.sqlite").path
        let database = try await SQLiteDatabase.open(path: path, logger: TestEngine.logger, syncLog: syncLog)
        do {
            try await body(database, path)
        } catch {
            try? await database.close()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        try await database.close()
        try? FileManager.default.removeItem(at: folder)
    }

    @Test(arguments: ["sqlite:///", "", "/"])
    func everyFileURLFormOpens(prefix: String) async throws {
        // Proves `sqlite:///absolute`, a plain absolute path, and `sqlite://` + a path all open the same file.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nested/kiosk.sqlite").path
        let url = prefix == "/" ? "sqlite://" + path : String(prefix.dropLast()) + path
        let database = try await DatabaseOpener.open(url: url, logger: TestEngine.logger)
        try await database.transaction { try await $0.setSetting("form", to: url) }
        try await database.close()
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test
    func memoryDatabaseOpens() async throws {
        // Proves `sqlite::memory:` opens a migrated, working database.
        let database = try await DatabaseOpener.open(url: "sqlite::memory:", logger: TestEngine.logger)
        try await database.transaction { try await $0.insertApp(Fixtures.app()) }
        #expect(try await database.transaction { try await $0.apps() } == [Fixtures.app()])
        try await database.close()
    }

    @Test
    func twoConnectionsToOneFileDoNotFail() async throws {
        // Proves two opened databases on one file (as two processes would) both commit: BEGIN IMMEDIATE plus the
        // busy timeout make the second wait instead of failing.
        try await TestEngine.sqlite.withDatabase { first, url in
            let second = try await DatabaseOpener.open(url: url, logger: TestEngine.logger)
            // The second database is closed however the test ends, so its connections do not outlive the file.
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, database) in [first, second, first, second].enumerated() {
                        group.addTask {
                            for round in 0..<20 {
                                try await database.transaction { transaction in
                                    let id = try await transaction.nextIdentifier(.appAppleId)
                                    try await transaction.insertApp(
                                        Fixtures.app(id: id, bundleId: "a\(index).\(round)"))
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await second.transaction { try await $0.apps() }.count == 80)
            } catch {
                try? await second.close()
                throw error
            }
            try await second.close()
        }
    }

    @Test
    func boundValuesReadBackAsTheyWereBoundAndOtherTypesAreRefused() async throws {
        // Proves the engine's own value conversion (it replaced SQLiteKit's): integers, booleans and text are stored as
        // SQLite integers and text (what SQLiteKit stored, so existing files read the same), read back as Int64, Int,
        // Bool and String, and NULL as an optional's nil; reading NULL as a non-optional fails, and so does binding
        // a type Kiosk never binds (a Double), by name, instead of storing it in some encoding.
        try await TestEngine.sqlite.withDatabase { database, _ in
            let sqlite = try #require((database as? StoreDatabase)?.sql as? SQLiteDatabase)
            try await sqlite.withSession { session in
                try await session.run(
                    "CREATE TABLE kinds (big INTEGER, small INTEGER, flag INTEGER, name TEXT, gap INTEGER)")
                try await session.run(
                    """
                    INSERT INTO kinds
                    VALUES (\(bind: Int64.max), \(bind: -7), \(bind: true), \(bind: "Ünïcode ✓"), \(bind: Int64?.none))
                    """)
            }
            let stored = try await sqlite.withReadSession { session in
                let types = try #require(
                    try await session.first(
                        """
                        SELECT typeof(big) || typeof(small) || typeof(flag) || typeof(name) || typeof(gap) AS kinds
                        FROM kinds
                        """))
                let row = try #require(try await session.first("SELECT * FROM kinds"))
                return (
                    kinds: try types.decode(column: "kinds", as: String.self),
                    big: try row.decode(column: "big", as: Int64.self),
                    small: try row.decode(column: "small", as: Int.self),
                    flag: try row.decode(column: "flag", as: Bool.self),
                    name: try row.decode(column: "name", as: String.self),
                    optionalName: try row.decode(column: "name", as: String?.self),
                    gap: try row.decode(column: "gap", as: Int64?.self),
                    gapAsNumber: Result { try row.decode(column: "gap", as: Int64.self) },
                    nameAsNumber: Result { try row.decode(column: "name", as: Int64.self) }
                )
            }
            #expect(stored.kinds == "integerintegerintegertextnull")
            #expect(stored.big == Int64.max)
            #expect(stored.small == -7)
            #expect(stored.flag)
            #expect(stored.name == "Ünïcode ✓")
            #expect(stored.optionalName == "Ünïcode ✓")
            #expect(stored.gap == nil)
            #expect(throws: DecodingError.self) { try stored.gapAsNumber.get() }
            #expect(throws: DecodingError.self) { try stored.nameAsNumber.get() }
            var refusal = ""
            do {
                try await sqlite.withSession { try await $0.run("INSERT INTO kinds (big) VALUES (\(bind: 1.5))") }
            } catch {
                refusal = "\(error)"
            }
            #expect(refusal.contains("cannot bind a value of type Double"))
        }
    }

    @Test
    func aCachedStatementBindsOnlyItsOwnValuesAndEveryParameterMustHaveOne() async throws {
        // Proves the engine's binding, which writes each value straight to SQLite: the same statement run again from
        // the statement cache with a nil stores NULL, not the value the previous run left bound; optionals holding a
        // value bind it, and a nil of any optional type binds NULL; and a statement whose `?`s outnumber its values is
        // refused, naming both counts, instead of running with NULLs in their place.
        try await TestEngine.sqlite.withDatabase { database, _ in
            let sqlite = try #require((database as? StoreDatabase)?.sql as? SQLiteDatabase)
            try await sqlite.withSession { session in
                try await session.run("CREATE TABLE names (position INTEGER, name TEXT)")
                for (position, name) in [(1, "first"), (2, nil), (3, "third")] {
                    try await session.run("INSERT INTO names VALUES (\(bind: position), \(bind: name))")
                }
            }
            let names = try await sqlite.withReadSession { session in
                try await session.all("SELECT name FROM names ORDER BY position").map {
                    try $0.decode(column: "name", as: String?.self)
                }
            }
            #expect(names == ["first", nil, "third"])
            // Optionals of each type bound, and a nil of a type Kiosk never binds otherwise, which is NULL.
            try await sqlite.withSession { session in
                try await session.run("CREATE TABLE optionals (small INTEGER, flag INTEGER, big INTEGER, gap REAL)")
                try await session.run(
                    """
                    INSERT INTO optionals
                    VALUES (\(bind: Int?.some(-5)), \(bind: Bool?.some(false)), \(bind: Int64?.some(9)),
                        \(bind: Double?.none))
                    """)
            }
            let optionals = try await sqlite.withReadSession { session in
                try await session.first(
                    "SELECT small || ' ' || flag || ' ' || big || ' ' || typeof(gap) AS text FROM optionals")?
                    .decode(column: "text", as: String.self)
            }
            #expect(optionals == "-5 0 9 null")
            var refusal = ""
            do {
                try await sqlite.withSession { session in
                    try await session.run("INSERT INTO names VALUES (\(bind: 4), \(unsafeRaw: "?"))")
                }
            } catch {
                refusal = "\(error)"
            }
            #expect(refusal.contains("Kiosk bound a statement's parameters to 1 value(s) where it has 2"), "\(refusal)")
        }
    }

    @Test
    func aRenewalBatchsReadsFindTheirRowsByKey() async throws {
        // Proves the reads a renewal batch and a notification round make search an index by more than the environment:
        // every row of a store is in one of two environments, so a search by `environment` alone reads half the table
        // (the batch's account read did that, through the email index, 7 ms for 128 of 14,000 accounts), and a scan
        // reads all of it.
        try await TestEngine.sqlite.withDatabase { database, _ in
            let sqlite = try #require((database as? StoreDatabase)?.sql as? SQLiteDatabase)
            let customers = (0..<3).map { Fixtures.customer(email: "c\($0)@example.com") }
            try await database.transaction { tx in
                for customer in customers { try await tx.insertAccount(customer) }
            }
            let plans = try await sqlite.queryPlans {
                try await database.transaction { tx in
                    _ = try await tx.claimDueSubscriptions(
                        environment: .production, dueBy: Fixtures.created, limit: 128)
                    _ = try await tx.accounts(ids: customers.map(\.id), environment: .production)
                    _ = try await tx.transactions(originalTransactionIds: [1, 2, 3], environment: .production)
                    _ = try await tx.claimDueNotifications(
                        environment: .production, dueBy: Fixtures.created, now: Fixtures.created,
                        leaseUntil: Fixtures.created, limit: 64)
                }
            }
            #expect(plans.count >= 4, "the statements traced: \(plans.keys.sorted())")
            for (sql, plan) in plans {
                for step in plan {
                    let scans = step.hasPrefix("SCAN ") && !step.hasPrefix("SCAN CONSTANT")
                    #expect(!scans && !step.hasSuffix("(environment=?)"), "\(step) for \(sql)")
                }
            }
        }
    }
}

/// A log sync a test can hold (the sync thread waits in it until released) or make fail once; it syncs for real.
private final class HeldSync: Sendable {
    private struct State {
        var held = false
        var failNext = false
    }
    private let state = Mutex(State())
    private let gate = DispatchSemaphore(value: 0)

    /// What a sync made to fail throws.
    static let failure = StorageError.engine(message: "the disk refused the sync (a test's failure)")

    var isReleased: Bool { state.withLock { !$0.held } }

    func hold() { state.withLock { $0.held = true } }

    func release() {
        state.withLock { $0.held = false }
        gate.signal()
    }

    func failNext() { state.withLock { $0.failNext = true } }

    var sync: SQLiteLogSync.Sync {
        { path in
            let (held, fails) = self.state.withLock { state -> (Bool, Bool) in
                defer { state.failNext = false }
                return (state.held, state.failNext)
            }
            if held { self.gate.wait() }
            if fails { throw Self.failure }
            try SQLiteLogSync.fdatasync(path)
        }
    }
}
