import Synchronization

/// Answers a verifier worked out once and may give again, by a key that identifies the input exactly. Bounded: past
/// its capacity it starts over, so what a client sends cannot grow it without end.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let entries = Mutex<[Key: Value]>([:])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    subscript(key: Key) -> Value? {
        entries.withLock { $0[key] }
    }

    func insert(_ value: Value, for key: Key) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll() }
            entries[key] = value
        }
    }
}
