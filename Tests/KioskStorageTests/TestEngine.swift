import Foundation
import KioskCore
import KioskTestSupport
import Logging
import Testing

@testable import KioskSQL
@testable import KioskStorage

/// An engine the contract suite runs on: SQLite always, PostgreSQL when `KIOSK_TEST_POSTGRES_URL` is set (and in CI,
/// where a missing one fails the PostgreSQL cases).
enum TestEngine: String, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgresql

    /// The PostgreSQL server to test against, if any.
    static let postgresURL = TestEnvironment.value(.postgreSQL)

    /// Why the PostgreSQL runs are missing, when they are.
    static let postgresSkipReason: Comment = "set KIOSK_TEST_POSTGRES_URL (.ci/run does)"

    /// Every engine available in this run.
    static let all: [TestEngine] = TestEnvironment.runs(.postgreSQL) ? [.sqlite, .postgresql] : [.sqlite]

    var testDescription: String { rawValue }

    static let logger: Logger = {
        var logger = Logger(label: "kiosk.storage.tests")
        logger.logLevel = ProcessInfo.processInfo.environment["KIOSK_TEST_TRACE"] == nil ? .warning : .trace
        return logger
    }()

    /// A new SQLite file's URL, in a directory of its own that the caller removes: for tests that write a store the way
    /// an older version did (only SQLite can be opened here without the migrations).
    static func newSQLiteFile() throws -> (url: String, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return ("sqlite://" + directory.appendingPathComponent("kiosk.sqlite").path, directory)
    }

    /// A fresh, empty place for one test: an SQLite file in a new temporary directory, or a new PostgreSQL schema.
    func makeURL() throws -> String {
        let name = "kiosk_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        switch self {
        case .sqlite:
            return "sqlite://"
                + FileManager.default.temporaryDirectory.appendingPathComponent(name)
                .appendingPathComponent("kiosk.sqlite").path
        case .postgresql:
            let base = try TestEnvironment.require(.postgreSQL)
            return base + (base.contains("?") ? "&" : "?") + "schema=\(name)"
        }
    }

    /// Opens `url` with a pool no larger than a test needs.
    static func open(_ url: String) async throws -> any KioskDatabase {
        try await DatabaseOpener.open(url: url, poolSize: PostgresTestSlots.ledgerPoolSize, logger: logger)
    }

    /// Opens a fresh database, runs `body` with it and its URL, then closes it and removes what it created.
    /// PostgreSQL work holds a ``PostgresTestSlots`` slot throughout.
    @discardableResult
    func withDatabase<T>(_ body: (any KioskDatabase, String) async throws -> T) async throws -> T {
        let url = try makeURL()
        return try await withPostgresSlot(ifUsing: url) {
            let database = try await Self.open(url)
            do {
                let result = try await body(database, url)
                try await cleanUp(database, url: url)
                return result
            } catch {
                try? await cleanUp(database, url: url)
                throw error
            }
        }
    }

    /// Closes the test's database and removes what it created.
    private func cleanUp(_ database: any KioskDatabase, url: String) async throws {
        try await discard(url: url, using: database)
        try await database.close()
    }

    /// Removes the place `url` names: deletes the SQLite file's directory, or drops the PostgreSQL schema through
    /// `database` (any open database on the same server).
    func discard(url: String, using database: any KioskDatabase) async throws {
        switch try DatabaseLocation(url: url) {
        case .sqliteFile(let path):
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
        case .postgres(let location):
            guard let schema = location.schema else { return }
            let runner = try #require((database as? StoreDatabase)?.sql, "a store database over an engine")
            try await runner.withSession { try await $0.run("DROP SCHEMA \(ident: schema) CASCADE") }
        case .sqliteMemory:
            break
        }
    }
}

extension KioskDatabase {
    /// The integer in column `n` of the first row `query` returns; for assertions the storage interface does not
    /// offer (counting applied migrations, say).
    func scalar(_ query: String) async throws -> Int64? {
        let runner = try #require((self as? StoreDatabase)?.sql, "a store database over an engine")
        return try await runner.withSession { session in
            try await session.first("\(unsafeRaw: query)")?.decode(column: "n", as: Int64.self)
        }
    }
}

extension KioskDatabase {
    /// Runs `statement` behind the storage interface's back: no read-cache version moves.
    func execute(_ statement: String) async throws {
        let runner = try #require((self as? StoreDatabase)?.sql, "a store database over an engine")
        try await runner.withSession { try await $0.run("\(unsafeRaw: statement)") }
    }
}

/// Expects `body` to fail with the error an update of a row that does not exist gives, naming `what` was updated.
func expectNoSuchRow(
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    let error = await #expect(throws: StorageError.self, sourceLocation: sourceLocation) { try await body() }
    #expect(
        error == .engine(message: "cannot update \(what): no such row"), "\(String(describing: error))",
        sourceLocation: sourceLocation)
}
