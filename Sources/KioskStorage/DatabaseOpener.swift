import Foundation
import KioskCore
import KioskSQL
import Logging

extension DatabaseOpener {
    /// Opens the store's database from a URL (the forms ``DatabaseOpener/open(url:migrations:poolSize:logger:clock:constraintName:)``
    /// accepts) and brings the store's schema up to date.
    ///
    /// ```swift
    /// let database = try await DatabaseOpener.open(url: "sqlite:///var/lib/kiosk/kiosk.sqlite", logger: logger)
    /// defer { try? await database.close() }
    /// let app = try await database.transaction { try await $0.app(bundleId: "com.example.game") }
    /// ```
    public static func open(
        url: String, poolSize: Int = defaultPoolSize, logger: Logger, clock: any KioskClock = SystemClock()
    ) async throws -> any KioskDatabase {
        StoreDatabase(
            sql: try await open(
                url: url, migrations: Migration.all, poolSize: poolSize, logger: logger, clock: clock,
                constraintName: { UniqueConstraint.name(engineSpelling: $0) }))
    }
}

/// The store's schema on an engine: each transaction is an ``SQLStorageTransaction`` over the engine's session,
/// reading apps, products, sessions and settings through one ``ReadCache``.
struct StoreDatabase: KioskDatabase {
    let sql: any SQLDatabaseEngine
    let cache = ReadCache()

    var engine: String { sql.engine }

    func transaction<T: Sendable>(_ body: @Sendable (any StorageTransaction) async throws -> T) async throws -> T {
        let reads = CachedReads(cache: cache)
        do {
            return try await sql.withSession { session in
                try await body(SQLStorageTransaction(session: session, reads: reads))
            }
        } catch {
            if reads.changedCachedRows { cache.reset() }
            throw error
        }
    }

    func read<T: Sendable>(_ body: @Sendable (any StorageTransaction) async throws -> T) async throws -> T {
        try await sql.withReadSession { session in
            try await body(SQLStorageTransaction(session: session, reads: CachedReads(cache: cache)))
        }
    }

    func ping() async throws { try await sql.ping() }

    var poolUse: DatabasePoolUse { sql.poolUse }

    var logPagesWritten: Int? { sql.logPagesWritten }

    var writerBusyMicroseconds: Int? { sql.writerBusyMicroseconds }

    var logSyncs: Int? { sql.logSyncs }

    var statementsRun: Int { sql.statementsRun }

    func close() async throws { try await sql.close() }
}
