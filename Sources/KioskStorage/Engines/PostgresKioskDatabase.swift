import Foundation
import KioskCore
import Logging
import PostgresKit

/// The shared engine: a PostgreSQL database that several store servers can use at once.
///
/// Connections come from a `PostgresClient` pool. The pool only works while its `run()` is running, so this type
/// starts that in a task when it opens and cancels it in `close()`. Each transaction pins one pooled connection
/// for its whole life (`BEGIN` … `COMMIT`).
final class PostgresKioskDatabase: KioskDatabase, SQLDatabaseEngine {
    public let engine = "postgresql"

    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let logger: Logger

    /// The advisory lock key migrations take, so two servers starting together apply each migration once.
    static let migrationLockKey: Int64 = 0x4B_696F_736B  // "Kiosk"

    /// The statement that serializes migrations across processes, released when the transaction ends.
    static let migrationLock: SQLQueryString = "SELECT pg_advisory_xact_lock(\(literal: migrationLockKey))"

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        self.runTask = Task { await client.run() }
    }

    /// Starts a pool for `configuration`, creates `schema` if one is named (the startup parameters then put it
    /// first on every connection's `search_path`), and checks the server answers.
    static func open(
        configuration: PostgresClient.Configuration, schema: String?, logger: Logger
    ) async throws -> PostgresKioskDatabase {
        var configuration = configuration
        if let schema {
            configuration.options.additionalStartupParameters.append(("search_path", schema))
        }
        let database = PostgresKioskDatabase(
            client: PostgresClient(configuration: configuration, backgroundLogger: logger), logger: logger
        )
        do {
            try await database.ping()
            if let schema {
                try await database.withSession { session in
                    try await session.run(migrationLock)
                    try await session.run("CREATE SCHEMA IF NOT EXISTS \(ident: schema)")
                }
            }
        } catch {
            try? await database.close()
            throw error
        }
        return database
    }

    public func withSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection { connection in
                let session = SQLSession(sql: connection.sql(queryLogLevel: .trace), translate: Self.translate)
                try await session.run("BEGIN")
                let value: T
                do {
                    value = try await body(session)
                    try await session.runShielded("COMMIT")
                } catch {
                    await rollback(session, on: connection)
                    throw error
                }
                return value
            }
        } catch {
            throw Self.translate(error)
        }
    }

    /// Rolls back in a task of its own, so the caller's cancellation cannot stop it; if even that fails, the
    /// connection is closed, which makes the server abort the transaction and the pool drop the connection.
    private func rollback(_ session: SQLSession, on connection: PostgresConnection) async {
        do {
            try await session.runShielded("ROLLBACK")
        } catch {
            logger.warning("rollback failed; closing the connection", metadata: ["error": "\(error)"])
            try? await connection.close()
        }
    }

    func transaction<T: Sendable>(_ body: @Sendable (any StorageTransaction) async throws -> T) async throws -> T {
        try await withSession { session in
            try await body(SQLStorageTransaction(session: session))
        }
    }

    public func ping() async throws {
        do {
            try await client.withConnection { connection in
                _ = try await connection.sql().raw("SELECT 1").all()
            }
        } catch {
            throw Self.translate(error)
        }
    }

    public func close() async throws {
        runTask.cancel()
        await runTask.value
    }

    /// PostgreSQL's errors as `StorageError`; unique violations (SQLSTATE 23505) named as `UniqueConstraint` names
    /// them.
    @Sendable static func translate(_ error: any Error) -> any Error {
        guard let error = error as? PSQLError else { return error }
        guard let info = error.serverInfo else {
            let cause = error.underlying.map { ": \($0)" } ?? ""
            return StorageError.engine(message: "PostgreSQL \(error.code)\(cause)")
        }
        if info[.sqlState] == "23505" {
            return StorageError.uniqueViolation(
                constraint: UniqueConstraint.name(engineSpelling: info[.constraintName] ?? "unknown")
            )
        }
        return StorageError.engine(message: "PostgreSQL \(info[.sqlState] ?? "?????"): \(info[.message] ?? "")")
    }
}
