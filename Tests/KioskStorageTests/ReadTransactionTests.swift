import Foundation
import KioskCore
import KioskSQL
import Testing

@testable import KioskStorage

/// `KioskDatabase.read`: read-only transactions that run beside the writer instead of after it.
@Suite("Read transactions")
struct ReadTransactionTests {
    @Test(arguments: TestEngine.all)
    func aReadRunsWhileAWriteIsOpenAndSeesOnlyWhatCommitted(engine: TestEngine) async throws {
        // Proves a read neither waits for an open write transaction nor sees its uncommitted change, and sees it once
        // it commits. Without reader connections the read would queue behind the write, which waits for the read; a
        // minute's guard then fails the test instead of leaving it hanging.
        try await engine.withDatabase { database, _ in
            try await database.transaction { tx in try await tx.setSetting("probe", to: "committed") }
            let (written, writtenSignal) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
            async let writer: Void = database.transaction { tx in
                try await tx.setSetting("probe", to: "uncommitted")
                writtenSignal.yield()
                for await _ in release { break }
            }
            for await _ in written { break }
            let during = try await withThrowingTaskGroup(of: ReadDuringWrite.self) { group in
                group.addTask { .read(try await database.read { try await $0.setting("probe") }) }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    return .stillWaiting
                }
                let first = try await group.next()
                // Let the writer commit either way, so a read stuck behind it ends and the group can finish.
                releaseSignal.yield()
                group.cancelAll()
                return first
            }
            #expect(during == .read("committed"), "a read waited a minute for a write transaction held open")
            try await writer
            let after = try await database.read { try await $0.setting("probe") }
            #expect(after == "uncommitted")
        }
    }

    /// What a read made while a write is held open came to first: its value, or a minute of waiting.
    private enum ReadDuringWrite: Equatable, Sendable {
        case read(String?)
        case stillWaiting
    }

    @Test(arguments: TestEngine.all)
    func aWriteInAReadFailsAndChangesNothing(engine: TestEngine) async throws {
        // Proves a read refuses writes on both engines (a read-only connection on SQLite; on PostgreSQL, where a read
        // runs outside a transaction, a session that runs only SELECT), so code that reads through `read` cannot
        // change state by mistake.
        try await engine.withDatabase { database, _ in
            await #expect(throws: StorageError.self) {
                try await database.read { tx in try await tx.setSetting("probe", to: "written in a read") }
            }
            let value = try await database.read { try await $0.setting("probe") }
            #expect(value == nil)
        }
    }

    @Test(arguments: TestEngine.all)
    func aCachedReadRunsOneStatementOnPostgreSQLAndThreeOnSQLite(engine: TestEngine) async throws {
        // Proves what a read through the cache costs in statements: the version it checks the cached rows against,
        // inside BEGIN and COMMIT on SQLite (one snapshot on a reader connection) and alone on PostgreSQL, where each
        // statement is a round trip and a transaction would add two without changing what a read sees.
        try await engine.withDatabase { database, _ in
            try await database.transaction { tx in try await tx.setSetting("probe", to: "cached") }
            #expect(try await database.read { try await $0.setting("probe") } == "cached")
            let before = database.statementsRun
            #expect(try await database.read { try await $0.setting("probe") } == "cached")
            #expect(database.statementsRun - before == (engine == .postgresql ? 1 : 3))
        }
    }
}
