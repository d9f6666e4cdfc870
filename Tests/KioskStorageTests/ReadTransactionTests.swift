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
        // it commits. Without reader connections the read would queue behind the write, which waits for the read:
        // the test would never end.
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
            let during = try await database.read { try await $0.setting("probe") }
            #expect(during == "committed")
            releaseSignal.yield()
            try await writer
            let after = try await database.read { try await $0.setting("probe") }
            #expect(after == "uncommitted")
        }
    }

    @Test(arguments: TestEngine.all)
    func aWriteInAReadFailsAndChangesNothing(engine: TestEngine) async throws {
        // Proves a read transaction refuses writes on both engines (a read-only connection on SQLite, `READ ONLY` on
        // PostgreSQL), so code that reads through `read` cannot change state by mistake.
        try await engine.withDatabase { database, _ in
            await #expect(throws: StorageError.self) {
                try await database.read { tx in try await tx.setSetting("probe", to: "written in a read") }
            }
            let value = try await database.read { try await $0.setting("probe") }
            #expect(value == nil)
        }
    }
}
