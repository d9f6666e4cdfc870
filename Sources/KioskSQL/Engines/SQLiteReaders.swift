import Foundation
import GRDB
import Logging
import Synchronization

/// The embedded engine's read-only connections: in WAL mode a reader sees the last commit and neither waits for the
/// writer nor holds it up, so reads (a session lookup, `verifyReceipt`, the Server API's transaction reads) run on
/// all cores beside the writer's group commit instead of queueing behind it.
///
/// A read takes a free connection, or waits for one (connections are held for one read transaction only).
final class SQLiteReaders: Sendable {
    /// One reader per core, at least two: reads are CPU-bound, so more would only queue inside the kernel.
    static var count: Int { max(2, ProcessInfo.processInfo.activeProcessorCount) }

    private let connections: [SQLiteStatements]
    private let queues: [DatabaseQueue]

    private struct State {
        var free: [Int]
        var waiting: [CheckedContinuation<Int, Never>] = []
    }

    private let state: Mutex<State>

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
        self.queues = queues
        self.connections = queues.map { SQLiteStatements(queue: $0, logger: logger) }
        self.state = Mutex(State(free: Array(queues.indices)))
    }

    /// Runs `body` with a connection of its own until it returns; waits for one when all are in use.
    func withConnection<T: Sendable>(_ body: (SQLiteStatements) async throws -> T) async throws -> T {
        let index = await take()
        defer { give(index) }
        return try await body(connections[index])
    }

    private func take() async -> Int {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let free = state.withLock { state -> Int? in
                guard let index = state.free.popLast() else {
                    state.waiting.append(continuation)
                    return nil
                }
                return index
            }
            if let free { continuation.resume(returning: free) }
        }
    }

    private func give(_ index: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Int, Never>? in
            guard !state.waiting.isEmpty else {
                state.free.append(index)
                return nil
            }
            return state.waiting.removeFirst()
        }
        waiter?.resume(returning: index)
    }

    /// Closes every connection once the reads running now have ended.
    func close() async throws {
        for _ in queues { _ = await take() }
        for queue in queues { try queue.close() }
    }
}
