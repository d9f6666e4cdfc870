import Synchronization

/// A first-come-first-served lock for async code: one holder at a time, waiters resume in arrival order.
///
/// SQLite allows one writer; funnelling every transaction through this lock means callers queue here instead of
/// failing with `SQLITE_BUSY`. Waiting is not cancellable on purpose: a waiter that is cancelled still gets the
/// lock, notices the cancellation and releases it, so the lock can never be lost.
package final class AsyncSerialLock: Sendable {
    private struct State {
        var isLocked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Waits until the lock is free, then holds it. Pair every call with `release()`.
    package func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.isLocked {
                    state.waiters.append(continuation)
                    return false
                }
                state.isLocked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the lock to the longest waiter, or frees it.
    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.nextWaiter < state.waiters.count else {
                state.isLocked = false
                state.waiters.removeAll(keepingCapacity: true)
                state.nextWaiter = 0
                return nil
            }
            defer { state.nextWaiter += 1 }
            return state.waiters[state.nextWaiter]
        }
        next?.resume()
    }

    /// Runs `body` while holding the lock.
    func withLock<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }
}
