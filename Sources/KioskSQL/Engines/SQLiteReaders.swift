import Foundation
import GRDB
import Logging
import Synchronization

/// The embedded engine's read-only connections: in WAL mode a reader sees the last commit and neither waits for the
/// writer nor holds it up, so reads (a session lookup, `verifyReceipt`, the Server API's transaction reads) run beside
/// the writer's group commit instead of queueing behind it.
///
/// Reads arriving while a connection is busy wait and then run together, one after another in one read transaction
/// (``GroupCommit`` again, without savepoints: nothing is written): handing each read its own turn on a connection
/// doubled `verifyReceipt`'s p99 at 64 connections. Every read of a batch arrived before the batch began, so its
/// snapshot holds everything committed before the read was asked for.
final class SQLiteReaders: Sendable {
    /// One reader per two cores, at least one. Reads are CPU-bound, and the requests around them need cores too: on
    /// a 2-core machine with 64 connections, two readers left `verifyReceipt`'s p99 half again as long as one.
    static var count: Int { max(1, ProcessInfo.processInfo.activeProcessorCount / 2) }

    private struct Reader: Sendable {
        let queue: DatabaseQueue
        let statements: SQLiteStatements
        let batches = GroupCommit()
    }

    private let readers: [Reader]
    /// The statements every reader ran.
    let statements = StatementCounter()
    /// Which reader the next read goes to: each in turn.
    private let next = Atomic<Int>(0)

    /// Opens `count` read-only connections to the database file at `path`, which the writer has put in WAL mode.
    init(path: String, count: Int, logger: Logger, pragmas: [(name: String, value: String)]) throws {
        var configuration = GRDB.Configuration()
        configuration.readonly = true
        // Read transactions span many calls into the connection, as the writer's do.
        configuration.allowsUnsafeTransactions = true
        let pragmaText = pragmas.map { "PRAGMA \($0.name) = \($0.value);" }.joined(separator: " ")
        configuration.prepareDatabase { database in try database.execute(sql: pragmaText) }
        var queues: [DatabaseQueue] = []
        do {
            for _ in 0..<count { queues.append(try DatabaseQueue(path: path, configuration: configuration)) }
        } catch {
            for queue in queues { try? queue.close() }
            throw error
        }
        readers = queues.map { Reader(queue: $0, statements: SQLiteStatements(queue: $0, logger: logger)) }
    }

    /// Runs `body` in a read transaction on the next reader, with the reads that wait for it.
    func read<T: Sendable>(
        translate: @escaping @Sendable (any Error) -> any Error, _ body: @Sendable (SQLSession) async throws -> T
    ) async throws -> T {
        let turn = next.wrappingAdd(1, ordering: .relaxed).oldValue
        let reader = readers[turn % readers.count]
        return try await reader.batches.perform(body) { batch in
            let session = SQLSession(sql: reader.statements, translate: translate, counter: statements)
            // A deferred `BEGIN`: the snapshot is the last commit when the first statement reads.
            do {
                try await session.run("BEGIN")
            } catch {
                for work in batch { work.commitError = error }
                return nil
            }
            for work in batch { _ = await work.run(session) }
            // Nothing was written, so `COMMIT` only ends the snapshot; when even that fails, the reads still hold.
            do {
                try await session.run("COMMIT")
            } catch {
                try? await session.run("ROLLBACK")
            }
            return nil
        }
    }

    /// Closes every connection once the reads running on it now have ended (its next batch is this empty one).
    func close() async throws {
        for reader in readers {
            let session = SQLSession(sql: reader.statements, translate: { $0 }, counter: statements)
            try await reader.batches.perform({ _ in }) { batch in
                for work in batch { _ = await work.run(session) }
                return nil
            }
            try reader.queue.close()
        }
    }
}
