import Foundation
import KioskSQL
import KioskStorage
import KioskTestSupport
import Logging

/// The database engines a store test can run on: SQLite always, PostgreSQL when `KIOSK_TEST_POSTGRES_URL` names a
/// server (`.ci/run` sets it; in CI a missing one fails the PostgreSQL cases instead of dropping them). Use
/// `available` as a parameterized test's arguments and pass the engine to `withTestStore(engine:)`, or take a
/// fresh database from ``withFreshDatabase(_:)`` to start several stores on it in turn.
public enum TestDatabaseEngine: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    /// `KIOSK_TEST_POSTGRES_URL`, if set.
    public static var postgresURL: String? { TestEnvironment.value(.postgreSQL) }

    /// The engines tests run on here: PostgreSQL too when configured, and always in CI.
    public static var available: [TestDatabaseEngine] {
        TestEnvironment.runs(.postgreSQL) ? [.sqlite, .postgres] : [.sqlite]
    }

    public var description: String { rawValue }

    /// Runs `body` with a fresh, empty database, and removes it afterwards: nil for SQLite (a store then keeps its
    /// file in its data directory), or the URL of a new PostgreSQL schema, dropped once `body` returns. PostgreSQL
    /// work holds a ``PostgresTestSlots`` slot throughout.
    public func withFreshDatabase<T>(_ body: (String?) async throws -> T) async throws -> T {
        guard self == .postgres else { return try await body(nil) }
        let base = try TestEnvironment.require(.postgreSQL)
        let schema = "kiosk_test_" + UUID().uuidString.lowercased().filter { $0 != "-" }
        let url = Self.url(base, schema: schema)
        return try await withPostgresSlot {
            do {
                let result = try await body(url)
                try await Self.dropSchema(schema, at: url)
                return result
            } catch {
                try? await Self.dropSchema(schema, at: url)
                throw error
            }
        }
    }

    /// The PostgreSQL URL `base` with `schema` (created at first use) as its schema.
    public static func url(_ base: String, schema: String) -> String {
        base + (base.contains("?") ? "&" : "?") + "schema=\(schema)"
    }

    /// Drops the schema `url` names, with everything a test left in it.
    public static func dropSchema(_ schema: String, at url: String) async throws {
        var logger = Logger(label: "kiosk-test-database")
        logger.logLevel = .warning
        let database = try await DatabaseOpener.open(url: url, migrations: [], poolSize: 1, logger: logger)
        do {
            try await database.withSession { try await $0.run("DROP SCHEMA IF EXISTS \(ident: schema) CASCADE") }
        } catch {
            try? await database.close()
            throw error
        }
        try await database.close()
    }
}
