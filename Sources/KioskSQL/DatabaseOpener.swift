import Foundation
import KioskCore
import Logging
import PostgresKit

/// Opens a database from a URL and brings its schema up to date with the caller's migrations.
///
/// ```swift
/// let ledger = try await DatabaseOpener.open(
///     url: "sqlite:///var/lib/merchant/merchant.sqlite", migrations: MerchantMigrations.all, logger: logger)
/// defer { try? await ledger.close() }
/// try await ledger.withSession { session in try await session.run("INSERT INTO …") }
/// ```
public enum DatabaseOpener {
    /// Connections a PostgreSQL pool opens at most when the operator names no number: enough to keep a few cores
    /// and the background workers busy (a connection is held only for one transaction), and nine servers fit in
    /// PostgreSQL's default `max_connections` of 100 beside its reserved slots. SQLite always uses one connection.
    public static let defaultPoolSize = 10

    /// The pool sizes an operator may choose.
    public static let poolSizes = 1...500

    /// Opens the database `url` names and applies every pending migration of `migrations` before returning.
    ///
    /// - Parameters:
    ///   - url: `sqlite:///absolute/path/kiosk.sqlite`, `sqlite://relative/path.sqlite`, a plain file path,
    ///     `sqlite::memory:`, or `postgres://user:password@host:port/database` (also `postgresql://`; query
    ///     parameters `sslmode=disable|prefer|require`, default `disable`, and `schema=name` to keep the tables in
    ///     their own schema, created if missing).
    ///   - migrations: The schema, as versioned steps; those not yet recorded in `schema_migrations` run in order.
    ///   - poolSize: The most connections a PostgreSQL pool opens (``poolSizes``); SQLite ignores it.
    ///   - logger: Where the engine and the migrator log.
    ///   - clock: Stamps `schema_migrations.applied_at`.
    ///   - constraintName: Names a violated unique constraint from the engine's spelling of it (SQLite names the
    ///     columns, PostgreSQL the constraint), for `StorageError.uniqueViolation`; by default the engine's.
    /// - Returns: The open database; call `close()` at shutdown.
    /// - Throws: `StorageError.invalidURL` for a URL in none of the accepted forms (the message lists them),
    ///   `StorageError.invalidSetting` for a pool size outside ``poolSizes``;
    ///   `StorageError.engine` when the database cannot be opened or migrated.
    public static func open(
        url: String, migrations: [Migration], poolSize: Int = defaultPoolSize, logger: Logger,
        clock: any KioskClock = SystemClock(), constraintName: @escaping @Sendable (String) -> String = { $0 }
    ) async throws -> any SQLDatabaseEngine {
        guard poolSizes.contains(poolSize) else {
            throw StorageError.invalidSetting(
                "A database pool of \(poolSize) connections is not possible; use \(poolSizes.lowerBound) to "
                    + "\(poolSizes.upperBound)")
        }
        let migrator = Migrator(migrations: migrations, clock: clock, logger: logger)
        switch try DatabaseLocation(url: url) {
        case .sqliteMemory:
            let database = try await SQLiteDatabase.open(path: nil, logger: logger, constraintName: constraintName)
            return try await migrated(database, migrator, lock: nil)
        case .sqliteFile(let path):
            let database = try await SQLiteDatabase.open(path: path, logger: logger, constraintName: constraintName)
            return try await migrated(database, migrator, lock: nil)
        case .postgres(let location):
            let database = try await PostgresDatabase.open(
                location: location, poolSize: poolSize, logger: logger, constraintName: constraintName)
            return try await migrated(database, migrator, lock: PostgresDatabase.migrationLock)
        }
    }

    /// Runs the migrations on a freshly opened database, closing it if they fail.
    private static func migrated(
        _ database: some SQLDatabaseEngine, _ migrator: Migrator, lock: SQLQueryString?
    ) async throws -> any SQLDatabaseEngine {
        do {
            try await migrator.migrate(database, lock: lock)
            return database
        } catch {
            try? await database.close()
            throw error
        }
    }
}
