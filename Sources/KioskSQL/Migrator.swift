import Foundation
import KioskCore
import Logging
import SQLKit

/// Brings a database's schema up to date: applies, in version order, every migration not yet recorded in
/// `schema_migrations`, each in its own transaction.
///
/// Safe when several processes start at once: each transaction first takes the engine's migration lock
/// (PostgreSQL: a transaction-scoped advisory lock; SQLite: `BEGIN IMMEDIATE` already excludes other writers),
/// then re-reads what is applied, so a migration another process just applied is skipped.
struct Migrator: Sendable {
    let migrations: [Migration]
    let clock: any KioskClock
    let logger: Logger

    /// Applies every pending migration through `runner`: each is logged at debug, and the run as one info line
    /// (a first start applies every migration, and a line each would bury what the store prints next).
    func migrate(_ runner: some SQLTransactionRunner, lock: SQLQueryString?) async throws {
        var applied: [Migration] = []
        while let next = try await runner.withSession({ session in
            try await applyNext(session, lock: lock)
        }) {
            logger.debug("applied migration", metadata: ["version": "\(next.version)", "name": "\(next.name)"])
            applied.append(next)
        }
        guard let first = applied.first, let last = applied.last else { return }
        logger.info(
            "applied \(applied.count) migration\(applied.count == 1 ? "" : "s")",
            metadata: [
                "versions": "\(first.version == last.version ? "\(last.version)" : "\(first.version)–\(last.version)")"
            ])
    }

    /// Applies the oldest pending migration, if any, inside `session`'s transaction; returns it.
    private func applyNext(_ session: SQLSession, lock: SQLQueryString?) async throws -> Migration? {
        if let lock { try await session.run(lock) }
        try await session.run(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT NOT NULL,
                name TEXT NOT NULL,
                applied_at BIGINT NOT NULL,
                CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
            )
            """
        )
        let rows = try await session.all("SELECT version FROM schema_migrations")
        let applied = Set(try rows.map { try $0.decode(column: "version", as: Int64.self) })
        guard
            let next = migrations.sorted(by: { $0.version < $1.version })
                .first(where: { !applied.contains(Int64($0.version)) })
        else { return nil }
        for statement in next.statements {
            try await session.run("\(unsafeRaw: statement)")
        }
        try await session.run(
            """
            INSERT INTO schema_migrations (version, name, applied_at)
            VALUES (\(bind: Int64(next.version)), \(bind: next.name), \(bind: clock.now().millisecondsSince1970))
            """
        )
        return next
    }
}
