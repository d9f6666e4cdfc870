import Foundation
import KioskSQL
import Synchronization
import Testing

/// The pool's gauges count real transactions: with every connection held, the rest wait, and every one that
/// ends, by commit or by error, leaves the counts.
@Suite struct DatabasePoolUseTests {
    /// Lets waiting bodies go all at once.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    @Test(arguments: TestEngine.all)
    func runningAndWaitingTransactionsAreCounted(engine: TestEngine) async throws {
        try await engine.withDatabase { _, url in
            let database = try await DatabaseOpener.open(
                url: url, migrations: [], poolSize: 2, logger: TestEngine.logger)
            let size = engine == .sqlite ? 1 : 2
            #expect(database.poolUse == DatabasePoolUse(size: size, inUse: 0, waiting: 0))
            let gate = Gate()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await database.withSession { _ in await gate.wait() } }
                }
                // Waits for the state, not for time: every connection held, the other transactions queued.
                let expected = DatabasePoolUse(size: size, inUse: size, waiting: 4 - size)
                while database.poolUse != expected { try await Task.sleep(for: .milliseconds(2)) }
                gate.open()
                try await group.waitForAll()
            }
            #expect(database.poolUse == DatabasePoolUse(size: size, inUse: 0, waiting: 0))
            struct Refused: Error {}
            await #expect(throws: Refused.self) { try await database.withSession { _ in throw Refused() } }
            #expect(database.poolUse == DatabasePoolUse(size: size, inUse: 0, waiting: 0))
            try await database.close()
        }
    }
}
