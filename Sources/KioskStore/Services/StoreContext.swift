import Foundation
import KioskCore
import KioskStorage
import Logging

/// What the store's services share, built once by ``buildStore(configuration:clock:logger:onServerRunning:)`` and
/// handed to each service's initializer, so no service fetches a dependency through another.
public final class StoreContext: Sendable {
    public let database: any KioskDatabase
    /// Production's clock and the sandbox's controllable one: everything reads the clock of its environment.
    public let clocks: StoreClocks
    public let signing: StoreSigning
    /// Wakes the updates streams of an account when its queue changes.
    let feed: QueueFeed
    /// The outbox of server notifications and their delivery.
    public let notifications: NotificationService
    /// The life signs `/metrics` serves.
    public let metrics: StoreMetrics
    public let logger: Logger

    init(
        database: any KioskDatabase, clocks: StoreClocks, signing: StoreSigning, feed: QueueFeed,
        notifications: NotificationService, metrics: StoreMetrics, logger: Logger
    ) {
        self.database = database
        self.clocks = clocks
        self.signing = signing
        self.feed = feed
        self.notifications = notifications
        self.metrics = metrics
        self.logger = logger
    }

    /// Where every change to transactions, queues and subscriptions is made and committed.
    var ledger: StoreLedger { StoreLedger(context: self) }
}
