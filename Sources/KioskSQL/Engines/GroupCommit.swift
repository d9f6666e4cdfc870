import Synchronization

/// Group commit for the embedded engine: SQLite has one writer and every `COMMIT` waits for an `fsync`, so
/// transactions that arrive while one runs wait, and the first of them to get its turn takes every waiting one along
/// (up to ``batchLimit``). Their bodies run one after another, in arrival order, in one database transaction, and one
/// `fsync` makes them all durable; no caller hears back before it. A transaction that arrives alone runs alone at
/// once: nobody waits for company, so a batch forms only when the disk is the bottleneck anyway.
final class GroupCommit: Sendable {
    /// The most transactions one commit carries: it bounds how long the last of them waits for the first.
    static let batchLimit = 64

    /// One caller's transaction body, type-erased, and what became of the batch it ran in.
    final class Work: @unchecked Sendable {
        // Safe to share: the body is run, and `commitError` written, by the batch's leader before it resumes the
        // caller, which reads them only after resuming; `turn` is set before the work is queued.
        private var body: ((SQLSession) async -> Bool)?
        /// Why the batch did not commit; nil once it committed.
        var commitError: (any Error)?
        fileprivate var turn: CheckedContinuation<Turn, Never>?

        /// `body` runs the caller's body in the open transaction and returns whether it succeeded.
        init(body: @escaping (SQLSession) async -> Bool) { self.body = body }

        /// Runs the body once; false when it threw.
        func run(_ session: SQLSession) async -> Bool {
            await body?(session) ?? false
        }

        /// Lets go of the body before its caller resumes: the caller's closure must not outlive its call.
        fileprivate func finish() { body = nil }
    }

    /// A body's result, kept until its batch commits.
    final class Outcome<T: Sendable>: @unchecked Sendable {
        // Written by the leader running the body, read by its caller after the batch; see `Work`.
        var result: Result<T, any Error>?

        /// The body's value once its batch committed; the body's own error, or else the commit's.
        func value(committed commitError: (any Error)?) throws -> T {
            if case .failure(let error) = result { throw error }
            if let commitError { throw commitError }
            guard case .success(let value) = result else { throw CancellationError() }
            return value
        }
    }

    fileprivate enum Turn { case lead, done }

    private struct State {
        var running = false
        var waiting: [Work] = []
    }

    private let state = Mutex(State())

    /// What a batch leaves for after the next batch has begun and before its callers are answered: waiting for its
    /// commit to be durable (``SQLiteLogSync``), setting `commitError` if it could not be. Its argument says whether
    /// no other batch waited to run (the writer is idle).
    typealias Settle = (_ writerIdle: Bool) async -> Void

    /// Runs `body` in a batch run by `batch` (see ``run(_:batch:)``) and returns its value: the body's error if it
    /// threw, else the batch's if the batch failed. `started` runs when the body's turn comes.
    func perform<T: Sendable>(
        started: @escaping @Sendable () -> Void = {}, _ body: @Sendable (SQLSession) async throws -> T,
        batch: ([Work]) async -> Settle?
    ) async throws -> T {
        try await withoutActuallyEscaping(body) { body in
            let outcome = Outcome<T>()
            let work = Work { session in
                started()
                do {
                    outcome.result = .success(try await body(session))
                    return true
                } catch {
                    outcome.result = .failure(error)
                    return false
                }
            }
            // The body runs before `run` returns; nothing keeps it afterwards.
            await run(work, batch: batch)
            return try outcome.value(committed: work.commitError)
        }
    }

    /// Runs `work` in a batch: at once, leading a batch of whatever waits, when no batch is running; otherwise
    /// after waiting to be taken along, or to lead the next batch. Returns once `work`'s batch has finished and
    /// settled: the next batch runs while this one's leader settles it, and only then are its callers resumed.
    func run(_ work: Work, batch: ([Work]) async -> Settle?) async {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            work.turn = continuation
            let leads = state.withLock { state -> Bool in
                if state.running {
                    state.waiting.append(work)
                    return false
                }
                state.running = true
                return true
            }
            if leads { continuation.resume(returning: .lead) }
        }
        guard turn == .lead else { return }
        let followers = state.withLock { state -> [Work] in
            let taken = Array(state.waiting.prefix(Self.batchLimit - 1))
            state.waiting.removeFirst(taken.count)
            return taken
        }
        let settle = await batch([work] + followers)
        work.finish()
        for follower in followers { follower.finish() }
        let next = state.withLock { state -> Work? in
            guard !state.waiting.isEmpty else {
                state.running = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        // The next leader first: each follower resumed goes on to answer its request (and sign a receipt), and a
        // leader queued behind them all left the writer idle a fifth of the time at 64 connections.
        next?.turn?.resume(returning: .lead)
        await settle?(next == nil)
        for follower in followers { follower.turn?.resume(returning: .done) }
    }
}
