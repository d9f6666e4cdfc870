import Foundation
import KioskCore
import KioskStorage

/// What a committed change hands on: the notifications it created, to deliver, and the accounts whose queue
/// changed, whose updates streams to wake.
struct StoreEffects: Sendable {
    var notifications: [ServerNotification] = []
    var feedKeys: Set<QueueFeed.Key> = []
    /// New payments, counted in `/metrics` once committed.
    var payments: [Payment] = []

    var isEmpty: Bool { notifications.isEmpty && feedKeys.isEmpty && payments.isEmpty }

    /// Delivers `created` once the change commits.
    mutating func deliver(_ created: [ServerNotification]) {
        notifications += created
    }

    /// Wakes `key`'s updates streams once the change commits.
    mutating func wake(_ key: QueueFeed.Key) {
        feedKeys.insert(key)
    }

    /// Counts `payment`, new in this change, once the change commits.
    mutating func count(_ payment: Payment) {
        payments.append(payment)
    }

    mutating func merge(_ other: StoreEffects) {
        notifications += other.notifications
        feedKeys.formUnion(other.feedKeys)
        payments += other.payments
    }
}

/// How every change to the store's transactions, queues and subscriptions is made and commits. Inside a change the
/// ledger charges (a new signed transaction), signs a changed transaction again and writes queue records
/// (`StoreLedger+Transactions.swift`); ``commit(reaching:_:)`` runs the change in one database transaction that
/// records its effects, then, once it committed, publishes them — notifications handed to delivery, updates streams
/// woken. Published before the commit they could announce a change that rolled back; left unpublished they would
/// wait for the next delivery pass and the streams' next poll.
struct StoreLedger: Sendable {
    let context: StoreContext

    /// Runs `change` in one database transaction and publishes what it recorded once that committed. A change that
    /// recorded anything reaches `crashPoint` between the commit and the publishing (the crash tests' step).
    func commit<T: Sendable>(
        reaching crashPoint: CrashPoint? = nil,
        _ change: @Sendable (any StorageTransaction, inout StoreEffects) async throws -> T
    ) async throws -> T {
        let (value, effects) = try await context.database.transaction { tx -> (T, StoreEffects) in
            var effects = StoreEffects()
            let value = try await change(tx, &effects)
            return (value, effects)
        }
        if !effects.isEmpty { crashPoint?.reach() }
        await publish(effects)
        return value
    }

    /// Hands committed notifications to delivery, wakes the updates streams of the accounts whose queue changed and
    /// counts what happened.
    func publish(_ effects: StoreEffects) async {
        context.metrics.paid(effects.payments)
        context.metrics.created(effects.notifications)
        context.notifications.deliver(effects.notifications)
        for key in effects.feedKeys { await context.feed.changed(key) }
    }
}
