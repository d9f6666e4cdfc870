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
    /// Opens the database `url` names and applies every pending migration before returning.
    ///
    /// - Parameters:
    ///   - url: `sqlite:///absolute/path/kiosk.sqlite`, `sqlite://relative/path.sqlite`, a plain file path,
    ///     `sqlite::memory:`, or `postgres://user:password@host:port/database` (also `postgresql://`; query
    ///     parameters `sslmode=disable|prefer|require`, default `disable`, and `schema=name` to keep Kiosk's
    ///     tables in their own schema, created if missing).
    ///   - logger: Where the engine and the migrator log.
    ///   - clock: Stamps `schema_migrations.applied_at`.
    /// - Returns: The open database; call `close()` at shutdown.
    /// - Throws: `StorageError.invalidURL` for a URL in none of the accepted forms (the message lists them);
    ///   `StorageError.engine` when the database cannot be opened or migrated.
    public static func open(
        url: String, logger: Logger, clock: any KioskClock = SystemClock()
    ) async throws -> any KioskDatabase {
        try await openEngine(url: url, migrations: Migration.all, logger: logger, clock: clock)
    }

    /// Opens the database `url` names (the forms `open(url:logger:clock:)` accepts) with a schema of the caller's
    /// own, brought up to date by `migrations`: for a party that keeps its own tables on the same engines, such as
    /// the merchant server. Statements run through ``SQLTransactionRunner/withSession(_:)``.
    public static func open(
        url: String, migrations: [Migration], logger: Logger, clock: any KioskClock = SystemClock()
    ) async throws -> any SQLDatabaseEngine {
        try await openEngine(url: url, migrations: migrations, logger: logger, clock: clock)
    }

    private static func openEngine(
        url: String, migrations: [Migration], logger: Logger, clock: any KioskClock
    ) async throws -> any KioskDatabase & SQLDatabaseEngine {
        let migrator = Migrator(migrations: migrations, clock: clock, logger: logger)
        switch try DatabaseLocation(url: url) {
        case .sqliteMemory:
            return try await migrated(SQLiteKioskDatabase.open(storage: .memory, logger: logger), migrator, lock: nil)
        case .sqliteFile(let path):
            let database = try await SQLiteKioskDatabase.open(storage: .file(path: path), logger: logger)
            return try await migrated(database, migrator, lock: nil)
        case .postgres(let location):
            let database = try await PostgresKioskDatabase.open(
                configuration: configuration(location), schema: location.schema, logger: logger
            )
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

    private static func configuration(_ location: DatabaseLocation.PostgresLocation) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch location.sslMode {
            case "require": .require(.makeClientConfiguration())
            case "prefer": .prefer(.makeClientConfiguration())
            default: .disable
            }
        return PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: tls
        )
    }
}
