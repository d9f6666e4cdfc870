import Foundation
import KioskCore
import Logging
import PostgresKit
import _ConnectionPoolModule

/// The shared engine: a PostgreSQL database that several store servers can use at once.
///
/// Connections come from a `PostgresClient` pool. The pool only works while its `run()` is running, so this type
/// starts that in a task when it opens and cancels it in `close()`. Each transaction pins one pooled connection
/// for its whole life (`BEGIN` … `COMMIT`); a read pins one for its statements, with no transaction around them.
public final class PostgresDatabase: SQLDatabaseEngine {
    public let engine = "postgresql"

    private let client: PostgresClient
    private let poolSize: Int
    private let sessions = SessionCounter()
    private let statements = StatementCounter()
    private let runTask: Task<Void, Never>
    private let logger: Logger
    /// `host:port/database`, for messages about connections.
    private let address: String
    /// Names a violated unique constraint the way the schema's owner does.
    private let constraintName: @Sendable (String) -> String

    /// The advisory lock key migrations take, so two servers starting together apply each migration once.
    static let migrationLockKey: Int64 = 0x4B_696F_736B  // "Kiosk"

    /// The statement that serializes migrations across processes, released when the transaction ends.
    static let migrationLock: SQLQueryString = "SELECT pg_advisory_xact_lock(\(literal: migrationLockKey))"

    /// Starts the pool's `run()` and returns once its task is under way, so the first lease finds the pool running
    /// (PostgresNIO warns of a lease before `run()`).
    private init(
        client: PostgresClient, poolSize: Int, address: String, logger: Logger,
        constraintName: @escaping @Sendable (String) -> String
    ) async {
        self.client = client
        self.poolSize = poolSize
        self.address = address
        self.logger = logger
        self.constraintName = constraintName
        let (started, continuation) = AsyncStream.makeStream(of: Void.self)
        self.runTask = Task {
            continuation.finish()
            await client.run()
        }
        for await _ in started {}
    }

    /// Connects once to the server `location` names, so a wrong address, user or password fails at once with the
    /// server's reason; then starts a pool of at most `poolSize` connections, creates the location's schema if it
    /// names one (the startup parameters then put it first on every connection's `search_path`), and checks the
    /// pool answers.
    static func open(
        location: DatabaseLocation.PostgresLocation, poolSize: Int, logger: Logger,
        constraintName: @escaping @Sendable (String) -> String = { $0 }
    ) async throws -> PostgresDatabase {
        let address = "\(location.host):\(location.port)/\(location.database)"
        try await probe(location, address: address, logger: logger)
        let tls: PostgresClient.Configuration.TLS =
            switch location.sslMode {
            case "require": .require(.makeClientConfiguration())
            case "prefer": .prefer(.makeClientConfiguration())
            default: .disable
            }
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: tls)
        if let schema = location.schema {
            configuration.options.additionalStartupParameters.append(("search_path", schema))
        }
        configuration.options.maximumConnections = poolSize
        let database = await PostgresDatabase(
            client: PostgresClient(configuration: configuration, backgroundLogger: logger), poolSize: poolSize,
            address: address,
            logger: logger, constraintName: constraintName)
        do {
            try await database.ping()
            if let schema = location.schema {
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

    /// Opens and closes one connection: the pool retries a refused connection for a minute before it gives up
    /// with an error of its own, where one attempt says at once what the server answered.
    private static func probe(
        _ location: DatabaseLocation.PostgresLocation, address: String, logger: Logger
    ) async throws {
        do {
            let tls: PostgresConnection.Configuration.TLS =
                switch location.sslMode {
                case "require": .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case "prefer": .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                default: .disable
                }
            let connection = try await PostgresConnection.connect(
                configuration: PostgresConnection.Configuration(
                    host: location.host, port: location.port, username: location.username,
                    password: location.password, database: location.database, tls: tls),
                id: 0, logger: logger)
            try await connection.close()
        } catch {
            let reason =
                (error as? PSQLError).map { psql in
                    psql.serverInfo?[.message] ?? psql.underlying.map { "\($0)" } ?? "\(psql.code)"
                } ?? "\(error)"
            throw StorageError.engine(
                message: "Cannot connect to PostgreSQL at \(address): \(reason). Check that the server runs there and "
                    + "accepts this user and password")
        }
    }

    public var poolUse: DatabasePoolUse { sessions.use(size: poolSize) }

    /// PostgreSQL's own statistics (`pg_stat_wal`) count its WAL, for every client of the server.
    public var logPagesWritten: Int? { nil }

    public var logSyncs: Int? { nil }

    public var writerBusyMicroseconds: Int? { nil }

    public var statementsRun: Int { statements.value }

    public func withSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T {
        try await counted { connection in try await self.transaction(on: connection, body) }
    }

    /// A read runs its statements on one pooled connection without `BEGIN` and `COMMIT`, two round trips fewer. At
    /// `READ COMMITTED`, PostgreSQL's default and the isolation Kiosk uses, each statement sees what was committed when
    /// it started whether or not a transaction surrounds it, so a read sees the same rows either way. The session
    /// refuses any statement but a `SELECT` (``SQLSession/selectsOnly``), where a `READ ONLY` transaction refused
    /// writes.
    public func withReadSession<T: Sendable>(_ body: @Sendable (SQLSession) async throws -> T) async throws -> T {
        try await counted { connection in
            try await body(
                SQLSession(
                    sql: connection.sql(queryLogLevel: .trace), translate: self.translate, counter: self.statements,
                    selectsOnly: true))
        }
    }

    /// `work` on a connection from the pool, counted in ``poolUse`` while it waits and runs.
    private func counted<T: Sendable>(
        _ work: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            return try await sessions.counting { started in
                try await client.withConnection { connection in
                    started()
                    return try await work(connection)
                }
            }
        } catch {
            throw translate(error)
        }
    }

    /// One transaction between `BEGIN` and `COMMIT`, rolled back if `body` or the commit fails.
    private func transaction<T: Sendable>(
        on connection: PostgresConnection, _ body: @Sendable (SQLSession) async throws -> T
    ) async throws -> T {
        let session = SQLSession(
            sql: connection.sql(queryLogLevel: .trace), translate: translate, counter: statements)
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

    public func ping() async throws {
        do {
            try await client.withConnection { connection in
                _ = try await connection.sql().raw("SELECT 1").all()
            }
        } catch {
            throw translate(error)
        }
    }

    public func close() async throws {
        runTask.cancel()
        await runTask.value
    }

    /// PostgreSQL's errors as `StorageError`; unique violations (SQLSTATE 23505) named by ``constraintName``. A connection the pool could not make names the server, and what to check, instead of the pool's own
    /// error (a tripped circuit breaker says nothing of which database refused).
    @Sendable func translate(_ error: any Error) -> any Error {
        if let error = error as? _ConnectionPoolModule.ConnectionPoolError, error != .requestCancelled {
            return StorageError.engine(
                message: "PostgreSQL at \(address) gave no connection (\(error)). Check that the server runs, accepts "
                    + "this user and password, and has free connection slots (max_connections), or lower "
                    + "--database-pool-size")
        }
        guard let error = error as? PSQLError else { return error }
        guard let info = error.serverInfo else {
            let cause = error.underlying.map { ": \($0)" } ?? ""
            return StorageError.engine(message: "PostgreSQL at \(address): \(error.code)\(cause)")
        }
        if info[.sqlState] == "23505" {
            return StorageError.uniqueViolation(constraint: constraintName(info[.constraintName] ?? "unknown"))
        }
        return StorageError.engine(message: "PostgreSQL \(info[.sqlState] ?? "?????"): \(info[.message] ?? "")")
    }
}
