import Synchronization

/// How busy a database's connections are, for `/metrics`: how many sessions a pool of `size` may run at once, how
/// many run now, and how many wait for a connection.
public struct DatabasePoolUse: Sendable, Equatable {
    /// The most sessions that run at once: the PostgreSQL pool's connections; 1 for SQLite, whose one writer runs
    /// the sessions of a group commit in turn.
    public var size: Int
    public var inUse: Int
    public var waiting: Int

    public init(size: Int, inUse: Int, waiting: Int) {
        self.size = size
        self.inUse = inUse
        self.waiting = waiting
    }
}

/// Counts an engine's sessions as they wait for a connection, run, and end.
final class SessionCounter: Sendable {
    private let counts = Mutex((inUse: 0, waiting: 0))

    /// The counts now, for a pool of `size`.
    func use(size: Int) -> DatabasePoolUse {
        counts.withLock { DatabasePoolUse(size: size, inUse: $0.inUse, waiting: $0.waiting) }
    }

    /// Runs `body` counted as waiting until it calls `started` (once it holds a connection), then as in use until
    /// it returns or throws.
    func counting<T>(_ body: (_ started: @escaping @Sendable () -> Void) async throws -> T) async throws -> T {
        let session = Session(counts: self)
        counts.withLock { $0.waiting += 1 }
        defer { session.end() }
        return try await body { session.start() }
    }

    /// One session's place in the counts: waiting, then running, then gone.
    private final class Session: Sendable {
        let counter: SessionCounter
        private let running = Mutex(false)

        init(counts: SessionCounter) { counter = counts }

        func start() {
            guard
                running.withLock({ running in
                    defer { running = true }; return !running
                })
            else { return }
            counter.counts.withLock {
                $0.waiting -= 1; $0.inUse += 1
            }
        }

        func end() {
            let wasRunning = running.withLock { $0 }
            counter.counts.withLock { counts in
                if wasRunning { counts.inUse -= 1 } else { counts.waiting -= 1 }
            }
        }
    }
}
