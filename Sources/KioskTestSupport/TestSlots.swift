import Foundation
import Synchronization

/// A bounded number of tests doing something at once. A slot is held by a test's whole task tree: what a test
/// starts inside its slot (a store and its merchant, a store restarted) shares it and never waits for a second one.
public final class TestSlots: Sendable {
    /// How many tests may hold a slot at once.
    public let limit: Int
    private let held = TaskLocal(wrappedValue: false)
    private let state: Mutex<State>

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// Slots as many as `variable` names in the environment, else `defaultLimit` (at least one).
    init(variable: String, defaultLimit: Int) {
        let configured = ProcessInfo.processInfo.environment[variable].flatMap { Int($0) }
        limit = max(1, configured ?? defaultLimit)
        state = Mutex(State(free: limit))
    }

    /// Runs `body` holding a slot, waiting for one if all are taken; inside a slot already held by this task (or a
    /// task it was started from), runs `body` at once.
    public func holding<T>(_ body: () async throws -> T) async rethrows -> T {
        if held.get() { return try await body() }
        await acquire()
        defer { release() }
        return try await held.withValue(true) { try await body() }
    }

    private func acquire() async {
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

    private func release() {
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

/// Lets a bounded number of tests run servers at once. A whole `swift test` run starts all its tests together;
/// hundreds of stores and processes starting at once on two cores stretch a two-second test to minutes, and a
/// client's read timeout then decides, not the behaviour under test.
///
/// Every test store and merchant (``withTestStore``, ``withTestMerchant``) and every test that runs `kiosk` servers
/// as processes runs inside ``withTestLoadSlot(_:)``; ``withPostgresSlot(_:)`` takes one first, so the two are always
/// taken in the same order and never wait on each other.
public enum TestLoadSlots {
    /// Tests that may run servers at once (`KIOSK_TEST_LOAD_SLOTS`; default twice the cores, at least 4).
    public static let slots = TestSlots(
        variable: "KIOSK_TEST_LOAD_SLOTS", defaultLimit: max(4, ProcessInfo.processInfo.activeProcessorCount * 2))
}

/// Runs `body` holding one of ``TestLoadSlots``, waiting for one if all are taken (at once inside one held).
public func withTestLoadSlot<T>(_ body: () async throws -> T) async rethrows -> T {
    try await TestLoadSlots.slots.holding(body)
}

/// Lets a bounded number of tests use PostgreSQL at once, so a whole `swift test` run, which starts its tests
/// together, never opens more connections than the server allows.
///
/// Every test store, merchant and storage test on PostgreSQL runs inside ``withPostgresSlot(_:)``. The connections
/// a run can open at once are then at most `limit × what one test opens`; `.ci/postgres.sh` sizes
/// `max_connections` from that (the sum is written there).
public enum PostgresTestSlots {
    /// Tests that may use PostgreSQL at once (`KIOSK_TEST_POSTGRES_SLOTS`; default 12).
    public static let slots = TestSlots(variable: "KIOSK_TEST_POSTGRES_SLOTS", defaultLimit: 12)
    public static var limit: Int { slots.limit }

    /// The most connections one test store's pool opens.
    public static let storePoolSize = 3
    /// The most connections one test merchant's (or storage test's) pool opens.
    public static let ledgerPoolSize = 2
}

/// Runs `body` holding one of ``PostgresTestSlots`` (and first one of ``TestLoadSlots``), waiting for them if all
/// are taken; inside slots already held by this task (or a task it was started from), runs `body` at once.
public func withPostgresSlot<T>(_ body: () async throws -> T) async rethrows -> T {
    try await withTestLoadSlot { try await PostgresTestSlots.slots.holding(body) }
}

/// Runs `body` holding a slot when `databaseURL` names a PostgreSQL database, else at once.
public func withPostgresSlot<T>(ifUsing databaseURL: String?, _ body: () async throws -> T) async rethrows -> T {
    let isPostgres = databaseURL.map { $0.hasPrefix("postgres://") || $0.hasPrefix("postgresql://") } ?? false
    return isPostgres ? try await withPostgresSlot(body) : try await body()
}
