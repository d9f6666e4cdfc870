import Foundation
import KioskCore

/// Tells the open updates streams of an account and app that its queue changed, so they answer at once instead
/// of at their next poll. In-process only: streams also poll, which covers entries another store replica wrote.
public actor QueueFeed {
    /// Whose queue changed.
    public struct Key: Hashable, Sendable {
        public var environment: StoreEnvironment
        public var accountId: UUID
        public var appId: App.ID

        public init(environment: StoreEnvironment, accountId: UUID, appId: App.ID) {
            self.environment = environment
            self.accountId = accountId
            self.appId = appId
        }
    }

    private var listeners: [Key: [UUID: AsyncStream<Void>.Continuation]] = [:]

    public init() {}

    /// Registers a stream's continuation; it gets one element per change until `stopListening`.
    func listen(_ key: Key, id: UUID, continuation: AsyncStream<Void>.Continuation) {
        listeners[key, default: [:]][id] = continuation
    }

    func stopListening(_ key: Key, id: UUID) {
        listeners[key]?[id] = nil
        if listeners[key]?.isEmpty == true { listeners[key] = nil }
    }

    /// Wakes every listener of `key`.
    func changed(_ key: Key) {
        for continuation in listeners[key, default: [:]].values { continuation.yield() }
    }
}
