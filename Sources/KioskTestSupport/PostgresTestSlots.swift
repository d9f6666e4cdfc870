import Foundation
import Synchronization

/// Lets a bounded number of tests use PostgreSQL at once, so a whole `swift test` run, which starts its tests
/// together, never opens more connections than the server allows.
///
/// Every test store, merchant and storage test on PostgreSQL runs inside ``withPostgresSlot(_:)``. A slot is held
/// by a test's whole task tree: servers a test starts inside its slot (a store and its merchant, a store restarted)
/// share it, and none waits for a second one. The connections a run can open at once are then at most
/// `limit × what one test opens`; `.ci/postgres.sh` sizes `max_connections` from that (the sum is written there).
public enum PostgresTestSlots {
    /// Tests that may use PostgreSQL at once (`KIOSK_TEST_POSTGRES_SLOTS`; default 12).
    public static let limit: Int = {
        let configured = ProcessInfo.processInfo.environment["KIOSK_TEST_POSTGRES_SLOTS"].flatMap { Int($0) }
        return max(1, configured ?? 12)
    }()

    /// The most connections one test store's pool opens.
    public static let storePoolSize = 3
    /// The most connections one test merchant's (or storage test's) pool opens.
    public static let ledgerPoolSize = 2

    @TaskLocal static var isHeld = false

    private static let state = Mutex(State(free: limit))

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    fileprivate static func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    fileprivate static func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// Runs `body` holding one of ``PostgresTestSlots``, waiting for one if all are taken; inside a slot already held
/// by this task (or a task it was started from), runs `body` at once.
public func withPostgresSlot<T>(_ body: () async throws -> T) async rethrows -> T {
    if PostgresTestSlots.isHeld { return try await body() }
    await PostgresTestSlots.acquire()
    defer { PostgresTestSlots.release() }
    return try await PostgresTestSlots.$isHeld.withValue(true) { try await body() }
}

/// Runs `body` holding a slot when `databaseURL` names a PostgreSQL database, else at once.
public func withPostgresSlot<T>(ifUsing databaseURL: String?, _ body: () async throws -> T) async rethrows -> T {
    let isPostgres = databaseURL.map { $0.hasPrefix("postgres://") || $0.hasPrefix("postgresql://") } ?? false
    return isPostgres ? try await withPostgresSlot(body) : try await body()
}
