import Synchronization

/// Answers worked out once and given again, by a key that identifies the input exactly (a verified receipt by its
/// digest, a validated chain by its certificates, a checked token by its text). Bounded: past its capacity it starts
/// over, so what clients send cannot grow it without end.
public final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let entries = Mutex<[Key: Value]>([:])
    private let capacity: Int

    public init(capacity: Int) {
        self.capacity = capacity
    }

    public subscript(key: Key) -> Value? {
        entries.withLock { $0[key] }
    }

    public func insert(_ value: Value, for key: Key) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll() }
            entries[key] = value
        }
    }

    /// Forgets every answer, for when what they were worked out from changed.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }
}
