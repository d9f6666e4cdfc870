import Foundation
import KioskCore
import Testing

@testable import KioskSQL
@testable import KioskStorage

/// Behaviours only the SQLite engine has: its pragmas and the URL forms that reach it.
@Suite("SQLite engine")
struct SQLiteEngineTests {
    @Test
    func pragmasAreDurable() async throws {
        // Proves a file database runs in WAL mode with foreign keys on, synchronous=FULL (2), a 64 MiB page cache and
        // a 1 GiB memory map, read back.
        try await TestEngine.sqlite.withDatabase { database, _ in
            let sqlite = try #require((database as? StoreDatabase)?.sql as? SQLiteDatabase)
            #expect(try await sqlite.pragma("journal_mode") == "wal")
            #expect(try await sqlite.pragma("foreign_keys") == "1")
            #expect(try await sqlite.pragma("synchronous") == "2")
            #expect(try await sqlite.pragma("busy_timeout") == "\(SQLiteDatabase.busyTimeoutMilliseconds)")
            #expect(try await sqlite.pragma("cache_size") == "\(SQLiteDatabase.cacheSizeKiB)")
            #expect(try await sqlite.pragma("mmap_size") == "\(SQLiteDatabase.mmapBytes)")
        }
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
            // The second database is closed however the test ends: SQLiteNIO asserts on unclosed connections.
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
}
