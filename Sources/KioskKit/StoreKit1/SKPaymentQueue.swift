import Foundation
import KioskProtocol
import Logging
import Synchronization

/// The device's payment queue: payments go in, transactions come out to observers, and nothing is lost on the way.
///
/// ```swift
/// SKPaymentQueue.default().add(observer)          // first thing at launch
/// SKPaymentQueue.default().add(SKPayment(product: product))
/// // observer: deliver purchased/restored content, then
/// SKPaymentQueue.default().finishTransaction(transaction)
/// ```
///
/// Durability, under the client's state directory: a payment is stored with its idempotency key before it is
/// sent and re-sent with the same key until the store answers (at the next launch if need be), so the store
/// charges once; a finish is stored until the store acknowledges it; unfinished transactions are kept and
/// delivered to every observer added, including ones the store delivered before any observer existed.
///
/// Once an observer is added (or a payment, a restore, a StoreKit 2 listener), the queue syncs in the
/// background: it fetches every unfinished entry, then follows the store's updates stream from its cursor,
/// reconnecting with backoff and fetching the unfinished entries again at every reconnect.
public final class SKPaymentQueue: Sendable {
    let api: StoreAPI
    let stateFile: DeviceStateFile
    let callbackQueue: DispatchQueue
    let logger: Logger
    let retryDelayMaximum: Duration
    let locked: Mutex<State>

    /// The queue's in-memory state; `device` is what is persisted.
    struct State: Sendable {
        var device: DeviceState
        /// The cursor of the last snapshot (see ``DeviceState/apply(_:settledThrough:)``).
        var settledThrough: Int64 = 0
        var observers: [ObserverReference] = []
        var delegate = DelegateReference()
        /// The object shown for each transaction, by its device id.
        var views: [UUID: SKPaymentTransaction] = [:]
        /// StoreKit 2 `Transaction.updates` listeners.
        var listeners: [UUID: AsyncStream<QueueEntry>.Continuation] = [:]
        var unfinishedReplayed = false
        /// Keys of payments whose StoreKit 2 `purchase()` is waiting for the answer itself.
        var directPurchaseKeys: Set<String> = []
        var sending: Set<String> = []
        var finishing: Set<Int64> = []
        var promoting: Set<Int64> = []
        /// Background work; ``close()`` cancels the cancellable tasks and awaits them all.
        var tasks: [UUID: (task: Task<Void, Never>, cancelOnClose: Bool)] = [:]
        var wantsSync = false
        var sync: (generation: Int, task: Task<Void, Never>)?
        var syncGeneration = 0
        var isClosed = false
    }

    init(
        api: StoreAPI, stateFile: DeviceStateFile, device: DeviceState, callbackQueue: DispatchQueue,
        logger: Logger, retryDelayMaximum: Duration
    ) {
        self.api = api
        self.stateFile = stateFile
        self.callbackQueue = callbackQueue
        self.logger = logger
        self.retryDelayMaximum = retryDelayMaximum
        self.locked = Mutex(State(device: device))
    }

    /// The queue of the client set with ``KioskKit/configure(_:)``.
    public static func `default`() -> SKPaymentQueue {
        KioskKit.sharedClient.paymentQueue
    }

    /// Whether the shared client can take payments now: configured and signed in.
    public static func canMakePayments() -> Bool {
        KioskKit.client?.isSignedIn ?? false
    }

    /// Decides about payments whose storefront changed (held weakly).
    public var delegate: (any SKPaymentQueueDelegate)? {
        get { locked.withLock { $0.delegate.delegate } }
        set { locked.withLock { $0.delegate = DelegateReference(delegate: newValue) } }
    }

    /// The signed-in account's storefront.
    public var storefront: SKStorefront? {
        locked.withLock { $0.device.session.map { SKStorefront($0.storefront) } }
    }

    /// The unfinished transactions, oldest first.
    public var transactions: [SKPaymentTransaction] {
        locked.withLock { state in state.device.transactions.map { view(for: $0, in: &state) } }
    }

    /// Adds an observer (held weakly). It receives every unfinished transaction at once, then every change, and
    /// is asked about promoted purchases. Adding it starts the queue's background sync.
    public func add(_ observer: any SKPaymentTransactionObserver) {
        let reference = ObserverReference(observer)
        locked.withLock { state in
            guard !state.observers.contains(where: { $0.id == reference.id }) else { return }
            state.observers.append(reference)
            let pairs = state.device.transactions.map { (view(for: $0, in: &state), $0) }
            guard !pairs.isEmpty else { return }
            callbackQueue.async {
                for (view, record) in pairs { view.update(record) }
                reference.observer?.paymentQueue(self, updatedTransactions: pairs.map(\.0))
            }
        }
        startSync()
        handlePromotions()
    }

    /// Removes an observer.
    public func remove(_ observer: any SKPaymentTransactionObserver) {
        locked.withLock { state in state.observers.removeAll { $0.id == ObjectIdentifier(observer) } }
    }

    /// Adds a payment: observers see it `purchasing`, then what the store made of it. The payment is stored
    /// before it is sent and re-sent with the same idempotency key until the store answers.
    public func add(_ payment: SKPayment) {
        let request = PaymentRequest(
            productId: payment.productIdentifier, quantity: payment.quantity,
            applicationUsername: payment.applicationUsername,
            idempotencyKey: payment.idempotencyKey ?? UUID().uuidString,
            simulatesAskToBuyInSandbox: payment.simulatesAskToBuyInSandbox ? true : nil,
            paymentDiscount: payment.paymentDiscount?.request)
        enqueue(request)
        startSync()
        spawn { _ = await self.send(idempotencyKey: request.idempotencyKey) }
    }

    /// Finishes a `purchased`, `failed` or `restored` transaction, once its content is delivered. The finish is
    /// stored and re-sent until the store acknowledges it. Finishing a `purchasing` or `deferred` transaction
    /// does nothing.
    public func finishTransaction(_ transaction: SKPaymentTransaction) {
        var sequence: Int64?
        update { state in
            let changes = state.device.finish(id: transaction.id)
            if case .removed(let record) = changes.first { sequence = record.entry?.sequence }
            if changes.isEmpty {
                logger.warning(
                    "finishTransaction ignored: the transaction is not finishable",
                    metadata: ["transaction": "\(transaction)"])
            }
            return changes
        }
        if let sequence { spawn(cancelOnClose: false) { await self.sendFinish(sequence: sequence) } }
    }

    /// Restores the account's non-consumables and auto-renewable subscriptions as new `restored` transactions,
    /// then calls `paymentQueueRestoreCompletedTransactionsFinished` (or `…FailedWithError`).
    public func restoreCompletedTransactions() {
        restoreCompletedTransactions(withApplicationUsername: nil)
    }

    /// Restores only purchases made with this `applicationUsername`.
    public func restoreCompletedTransactions(withApplicationUsername username: String?) {
        startSync()
        spawn {
            let observers = { self.locked.withLock { $0.observers } }
            do {
                let session = try self.requireSession()
                let snapshot = try await self.api.restore(
                    RestoreRequest(applicationUsername: username), token: session.token)
                self.update { state in snapshot.entries.flatMap { state.device.apply($0) } }
                let current = observers()
                self.callbackQueue.async {
                    for reference in current {
                        reference.observer?.paymentQueueRestoreCompletedTransactionsFinished(self)
                    }
                }
            } catch {
                let failure = SKError(wrapping: error)
                let current = observers()
                self.callbackQueue.async {
                    for reference in current {
                        reference.observer?.paymentQueue(self, restoreCompletedTransactionsFailedWithError: failure)
                    }
                }
            }
        }
    }
}

// MARK: - State changes and delivery

extension SKPaymentQueue {
    /// Applies a transition to the state, persists the device state and tells observers and listeners what
    /// changed, all under the lock so every observer sees changes in the order they happened.
    func update(_ transition: (inout State) -> [DeviceState.Change]) {
        let promoted = locked.withLock { state in
            let changes = transition(&state)
            stateFile.save(state.device)
            deliver(changes, in: &state)
            return changes.contains { if case .promoted = $0 { true } else { false } }
        }
        if promoted { handlePromotions() }
    }

    /// Stores a payment about to be sent.
    func enqueue(_ request: PaymentRequest) {
        update { state in
            state.device.addPayment(
                request, id: UUID(), storefrontId: state.device.session?.storefront.identifier)
        }
    }

    private func deliver(_ changes: [DeviceState.Change], in state: inout State) {
        var updated: [(SKPaymentTransaction, StoredTransaction)] = []
        var removed: [SKPaymentTransaction] = []
        var revokedProducts: [String] = []
        for change in changes {
            switch change {
            case .updated(let record):
                updated.append((view(for: record, in: &state), record))
                if let entry = record.entry, entry.transaction != nil,
                    entry.state == .purchased || entry.state == .restored,
                    !state.directPurchaseKeys.contains(record.payment.idempotencyKey)
                {
                    for listener in state.listeners.values { listener.yield(entry) }
                }
            case .removed(let record):
                if let view = state.views.removeValue(forKey: record.id) { removed.append(view) }
            case .promoted:
                break
            case .revoked(let entry):
                revokedProducts.append(entry.productId)
                for listener in state.listeners.values { listener.yield(entry) }
            }
        }
        guard !updated.isEmpty || !removed.isEmpty || !revokedProducts.isEmpty else { return }
        let observers = state.observers
        callbackQueue.async { [updated, removed, revokedProducts] in
            for (view, record) in updated { view.update(record) }
            for reference in observers {
                guard let observer = reference.observer else { continue }
                if !updated.isEmpty { observer.paymentQueue(self, updatedTransactions: updated.map(\.0)) }
                if !removed.isEmpty { observer.paymentQueue(self, removedTransactions: removed) }
                if !revokedProducts.isEmpty {
                    observer.paymentQueue(self, didRevokeEntitlementsForProductIdentifiers: revokedProducts)
                }
            }
        }
    }

    /// The object shown for a transaction, made on first use.
    func view(for record: StoredTransaction, in state: inout State) -> SKPaymentTransaction {
        if let view = state.views[record.id] { return view }
        let view = SKPaymentTransaction(record)
        state.views[record.id] = view
        return view
    }

    /// Runs work the queue owns. ``close()`` awaits it, cancelling it first unless `cancelOnClose` is false
    /// (finishes: their request in flight is let through so a closing app still reaches the store).
    func spawn(cancelOnClose: Bool = true, _ work: @escaping @Sendable () async -> Void) {
        let id = UUID()
        locked.withLock { state in
            guard !state.isClosed else { return }
            let task = Task {
                await work()
                _ = self.locked.withLock { $0.tasks.removeValue(forKey: id) }
            }
            state.tasks[id] = (task, cancelOnClose)
        }
    }

    func requireSession() throws -> StoredSession {
        guard let session = locked.withLock({ $0.device.session }) else {
            throw KioskKitError(code: .notSignedIn, message: "No account is signed in; call signIn(email:password:).")
        }
        return session
    }

    /// The wait before retry `attempt` (0-based): 250 ms doubling up to the configured maximum.
    func retryDelay(attempt: Int) -> Duration {
        min(retryDelayMaximum, .milliseconds(250) * (1 << min(attempt, 16)))
    }

    /// Calls `body` on the callback queue and returns its answer.
    func askOnCallbackQueue<Answer: Sendable>(_ body: @escaping @Sendable () -> Answer) async -> Answer {
        await withCheckedContinuation { continuation in
            callbackQueue.async { continuation.resume(returning: body()) }
        }
    }
}
