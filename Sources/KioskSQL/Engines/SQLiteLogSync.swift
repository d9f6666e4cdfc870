import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Makes the writer's commits durable on a thread of its own, so the writer goes on with the next batch while the
/// disk syncs the last one.
///
/// The writer runs with `synchronous=NORMAL`: its `COMMIT` writes the transaction's pages to the write-ahead log and
/// returns without an `fsync`. With `FULL`, SQLite's `fsync` in every `COMMIT` held the one writer, and no other
/// transaction could run meanwhile (2.1 ms per group commit of about 25 purchases, timed in issue 37). Here each commit
/// is numbered; this thread `fdatasync`s the log, and a sync begun after commit *n* returned makes every commit up to
/// *n* durable (the log is appended in order). Nobody is answered before that: the writer's callers wait for their
/// commit (``durable(through:)``), and a read waits for every commit it could have seen, since a reader connection sees
/// a commit as soon as it is written. What `NORMAL` leaves to a power cut is the commits not yet synced, which nobody
/// heard of; SQLite keeps the file consistent either way, and still syncs the log before each checkpoint copies it.
package final class SQLiteLogSync: Sendable {
    /// Makes the file at a path durable; throws when it cannot.
    package typealias Sync = @Sendable (_ path: String) throws -> Void

    private struct Waiter {
        let commit: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        /// Commits written to the log, numbered from 1.
        var written = 0
        /// The highest commit known durable.
        var durable = 0
        /// The thread is syncing, or about to.
        var syncing = false
        var waiters: [Waiter] = []
        var syncs = 0
    }

    private let logPath: String
    private let sync: Sync
    private let state = Mutex(State())
    private let thread = DispatchQueue(label: "kiosk.sqlite.log-sync")

    /// `databasePath`: the database file, whose log is `<path>-wal`.
    init(databasePath: String, sync: @escaping Sync = SQLiteLogSync.fdatasync) {
        logPath = databasePath + "-wal"
        self.sync = sync
    }

    /// Numbers a commit the writer has just written to the log.
    func written() -> Int {
        state.withLock { state in
            state.written += 1
            return state.written
        }
    }

    /// The last commit written: everything a read that has ended could have seen.
    var lastWritten: Int { state.withLock { $0.written } }

    /// How many times the log was synced.
    var syncs: Int { state.withLock { $0.syncs } }

    /// Callers waiting for a sync on this object's thread.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Returns once commit `commit` is durable; throws the sync's error when the sync that would have covered it
    /// failed (a later sync may still cover it, but nobody may be told it is durable now).
    ///
    /// `here`: when no sync is under way, sync on the calling thread rather than wake this object's: for a writer
    /// nobody waits for, where the two thread hand-offs made a lone commit a fifth slower. Under load the sync thread
    /// keeps the caller's threads free for the requests around the writer.
    func durable(through commit: Int, here: Bool = false) async throws {
        if state.withLock({ $0.durable >= commit }) { return }
        if here,
            let target = state.withLock({ state -> Int? in
                guard !state.syncing else { return nil }
                state.syncing = true
                return state.written
            })
        {
            let (failure, othersWait) = syncOnce(through: target)
            if othersWait { thread.async { self.syncWhileWaited() } }
            if let failure { throw failure }
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let (ready, startThread) = state.withLock { state -> (Bool, Bool) in
                if state.durable >= commit { return (true, false) }
                state.waiters.append(Waiter(commit: commit, continuation: continuation))
                guard !state.syncing else { return (false, false) }
                state.syncing = true
                return (false, true)
            }
            if ready { continuation.resume() }
            if startThread { thread.async { self.syncWhileWaited() } }
        }
    }

    /// Syncs the log until nobody waits: each sync covers every commit written before it began, so the commits
    /// written while one ran share the next.
    private func syncWhileWaited() {
        while syncOnce(through: state.withLock { $0.written }).othersWait {}
    }

    /// One sync, with `syncing` set and every commit through `target` written: answers the waiters it covers, and
    /// leaves `syncing` set only when others wait, for the next sync. Returns the sync's error, and whether others
    /// wait.
    private func syncOnce(through target: Int) -> (failure: (any Error)?, othersWait: Bool) {
        let failure: (any Error)?
        do {
            try sync(logPath)
            failure = nil
        } catch {
            failure = error
        }
        let (answered, othersWait) = state.withLock { state -> ([Waiter], Bool) in
            state.syncs += 1
            if failure == nil { state.durable = max(state.durable, target) }
            let answered = state.waiters.filter { $0.commit <= target }
            state.waiters.removeAll { $0.commit <= target }
            state.syncing = !state.waiters.isEmpty
            return (answered, state.syncing)
        }
        for waiter in answered {
            if let failure { waiter.continuation.resume(throwing: failure) } else { waiter.continuation.resume() }
        }
        return (failure, othersWait)
    }

    /// `fdatasync` of the file at `path`, opened for the call: the log keeps its path while the database is open.
    package static func fdatasync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StorageError.engine(
                message:
                    "the write-ahead log \(path) could not be opened to sync it: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard Glibc.fdatasync(descriptor) == 0 else {
            throw StorageError.engine(
                message: "the write-ahead log \(path) could not be synced, so the last commits may not be durable: "
                    + String(cString: strerror(errno)))
        }
    }
}
