import Foundation
import KioskCore
import Logging
import PostgresKit
import SQLiteKit

/// Opens the store's database from a URL and brings its schema up to date.
///
/// ```swift
/// let database = try await DatabaseOpener.open(url: "sqlite:///var/lib/kiosk/kiosk.sqlite", logger: logger)
/// defer { try? await database.close() }
/// let app = try await database.transaction { try await $0.app(bundleId: "com.example.game") }
/// ```
public enum DatabaseOpener {
    /// Connections a PostgreSQL pool opens at most when the operator names no number: enough to keep a few cores
    /// and the background workers busy (a connection is held only for one transaction), and nine servers fit in
    /// PostgreSQL's default `max_connections` of 100 beside its reserved slots. SQLite always uses one connection.
    public static let defaultPoolSize = 10

    /// The pool sizes an operator may choose.
    public static let poolSizes = 1...500

    /// Opens the database `url` names and applies every pending migration before returning.
    ///
    /// - Parameters:
    ///   - url: `sqlite:///absolute/path/kiosk.sqlite`, `sqlite://relative/path.sqlite`, a plain file path,
    ///     `sqlite::memory:`, or `postgres://user:password@host:port/database` (also `postgresql://`; query
    ///     parameters `sslmode=disable|prefer|require`, default `disable`, and `schema=name` to keep Kiosk's
    ///     tables in their own schema, created if missing).
    ///   - poolSize: The most connections a PostgreSQL pool opens (``poolSizes``); SQLite ignores it.
    ///   - logger: Where the engine and the migrator log.
    ///   - clock: Stamps `schema_migrations.applied_at`.
    /// - Returns: The open database; call `close()` at shutdown.
    /// - Throws: `StorageError.invalidURL` for a URL in none of the accepted forms (the message lists them),
    ///   `StorageError.invalidSetting` for a pool size outside ``poolSizes``;
    ///   `StorageError.engine` when the database cannot be opened or migrated.
    public static func open(
        url: String, poolSize: Int = defaultPoolSize, logger: Logger, clock: any KioskClock = SystemClock()
    ) async throws -> any KioskDatabase {
        try await openEngine(url: url, migrations: Migration.all, poolSize: poolSize, logger: logger, clock: clock)
    }

    /// Opens the database `url` names (the forms `open(url:poolSize:logger:clock:)` accepts) with a schema of the
    /// caller's own, brought up to date by `migrations`: for a party that keeps its own tables on the same engines,
    /// such as the merchant server. Statements run through ``SQLTransactionRunner/withSession(_:)``.
    public static func open(
        url: String, migrations: [Migration], poolSize: Int = defaultPoolSize, logger: Logger,
        clock: any KioskClock = SystemClock()
    ) async throws -> any SQLDatabaseEngine {
        try await openEngine(url: url, migrations: migrations, poolSize: poolSize, logger: logger, clock: clock)
    }

    private static func openEngine(
        url: String, migrations: [Migration], poolSize: Int, logger: Logger, clock: any KioskClock
    ) async throws -> any KioskDatabase & SQLDatabaseEngine {
        guard poolSizes.contains(poolSize) else {
            throw StorageError.invalidSetting(
                "A database pool of \(poolSize) connections is not possible; use \(poolSizes.lowerBound) to "
                    + "\(poolSizes.upperBound)")
        }
        let migrator = Migrator(migrations: migrations, clock: clock, logger: logger)
        switch try DatabaseLocation(url: url) {
        case .sqliteMemory:
            return try await migrated(SQLiteKioskDatabase.open(storage: .memory, logger: logger), migrator, lock: nil)
        case .sqliteFile(let path):
            let database = try await SQLiteKioskDatabase.open(storage: .file(path: path), logger: logger)
            return try await migrated(database, migrator, lock: nil)
        case .postgres(let location):
            let database = try await PostgresKioskDatabase.open(
                location: location, poolSize: poolSize, logger: logger)
            return try await migrated(database, migrator, lock: PostgresKioskDatabase.migrationLock)
        }
    }

    /// Runs the migrations on a freshly opened database, closing it if they fail.
    private static func migrated<Database: KioskDatabase & SQLDatabaseEngine>(
        _ database: Database, _ migrator: Migrator, lock: SQLQueryString?
    ) async throws -> Database {
        do {
            try await migrator.migrate(database, lock: lock)
            return database
        } catch {
            try? await database.close()
            throw error
        }
    }
}
