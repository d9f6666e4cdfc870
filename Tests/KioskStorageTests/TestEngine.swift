import Foundation
import KioskCore
import Logging
import Testing

@testable import KioskStorage

/// An engine the contract suite runs on: SQLite always, PostgreSQL when `KIOSK_TEST_POSTGRES_URL` is set.
enum TestEngine: String, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgresql

    /// The PostgreSQL server to test against, if any.
    static let postgresURL = ProcessInfo.processInfo.environment["KIOSK_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// Why the PostgreSQL runs are missing, when they are.
    static let postgresSkipReason: Comment = "set KIOSK_TEST_POSTGRES_URL (.ci/run does)"

    /// Every engine available in this run.
    static let all: [TestEngine] = postgresURL == nil ? [.sqlite] : [.sqlite, .postgresql]

    var testDescription: String { rawValue }

    static let logger: Logger = {
        var logger = Logger(label: "kiosk.storage.tests")
        logger.logLevel = ProcessInfo.processInfo.environment["KIOSK_TEST_TRACE"] == nil ? .warning : .trace
        return logger
    }()

    /// A fresh, empty place for one test: an SQLite file in a new temporary directory, or a new PostgreSQL schema.
    func makeURL() -> String {
        let name = "kiosk_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        switch self {
        case .sqlite:
            return "sqlite://" + FileManager.default.temporaryDirectory.appendingPathComponent(name)
                .appendingPathComponent("kiosk.sqlite").path
        case .postgresql:
            let base = Self.postgresURL ?? ""
            return base + (base.contains("?") ? "&" : "?") + "schema=\(name)"
        }
    }

    /// Opens a fresh database, runs `body` with it and its URL, then closes it and removes what it created.
    @discardableResult
    func withDatabase<T>(_ body: (any KioskDatabase, String) async throws -> T) async throws -> T {
        let url = makeURL()
        let database = try await DatabaseOpener.open(url: url, logger: Self.logger)
        do {
            let result = try await body(database, url)
            try await cleanUp(database, url: url)
            return result
        } catch {
            try? await cleanUp(database, url: url)
            throw error
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
            guard let schema = location.schema, let runner = database as? any SQLTransactionRunner else { return }
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
        guard let runner = self as? any SQLTransactionRunner else { return nil }
        return try await runner.withSession { session in
            try await session.first("\(unsafeRaw: query)")?.decode(column: "n", as: Int64.self)
        }
    }
}
