import Foundation
import KioskProtocol

/// Everything a device keeps between launches, and the pure rules that change it.
///
/// The invariant it serves: no lost purchase, no double charge. A payment is stored with its idempotency key
/// before it is sent and stays until the store answers it, so a relaunch re-sends the same key; an entry the
/// app finished stays in `pendingFinishes` until the store acknowledges it; unfinished entries are kept so a
/// relaunch shows them again even before the store is reached.
///
/// Every method is a pure transition returning what observers must be told; the engine persists the new value
/// and delivers the changes.
struct DeviceState: Codable, Sendable, Hashable {
    /// The signed-in session, nil once signed out.
    var session: StoredSession?
    /// The account the queue belongs to; kept after sign-out so signing in again to it keeps the queue.
    var accountId: UUID?
    /// The sequence of the last updates event applied; nil until the first sync.
    var cursor: Int64?
    /// Unfinished transactions in arrival order: payments still being sent, deferred, purchased, failed, restored.
    var transactions: [StoredTransaction] = []
    /// Promoted purchases not yet answered and finished.
    var promotions: [QueueEntry] = []
    /// Entries the app finished whose finish the store has not acknowledged yet.
    var pendingFinishes: [Int64] = []
    /// The last acknowledged finishes, so a late copy of a finished entry is not shown again.
    var recentlyFinished: [Int64] = []

    static let recentlyFinishedLimit = 256

    /// One change observers must hear about.
    enum Change: Sendable, Hashable {
        /// A transaction appeared or changed state.
        case updated(StoredTransaction)
        /// A transaction left the queue (finished here, or found finished at the store).
        case removed(StoredTransaction)
        /// A promoted purchase waits for `shouldAddStorePayment`.
        case promoted(QueueEntry)
        /// A transaction was refunded or revoked (a `revoked` entry, finished from the start).
        case revoked(QueueEntry)
    }

    /// Records a session. Signing in to another account starts an empty queue: the previous account's
    /// transactions are its own and come back from the store when it signs in again.
    mutating func signIn(_ session: StoredSession) -> [Change] {
        var changes: [Change] = []
        if accountId != session.account.id {
            changes = transactions.map(Change.removed)
            self = DeviceState()
            accountId = session.account.id
        }
        self.session = session
        return changes
    }

    /// Stores a payment about to be sent. A payment whose key is already queued is not added twice.
    mutating func addPayment(_ payment: PaymentRequest, id: UUID, storefrontId: String?) -> [Change] {
        guard !transactions.contains(where: { $0.payment.idempotencyKey == payment.idempotencyKey }) else {
            return []
        }
        let transaction = StoredTransaction(id: id, payment: payment, storefrontId: storefrontId)
        transactions.append(transaction)
        return [.updated(transaction)]
    }

    /// The payments stored but not answered yet, oldest first.
    var pendingPayments: [StoredTransaction] { transactions.filter(\.isPending) }

    /// Applies one entry from the store (a payment's answer, a snapshot, the updates stream or a restore).
    ///
    /// - Parameter settledThrough: the cursor of the last queue snapshot. An entry at or below it that the
    ///   snapshot did not list and that matches nothing held here was settled already (finished, or a
    ///   deferral since decided), so a replay of it is ignored.
    mutating func apply(_ entry: QueueEntry, settledThrough: Int64 = 0) -> [Change] {
        if pendingFinishes.contains(entry.sequence) || recentlyFinished.contains(entry.sequence) { return [] }
        if entry.state == .revoked {
            // Only the updates stream brings them; `applyUpdate` tells each once.
            return entry.transaction == nil ? [] : [.revoked(entry)]
        }
        if entry.state == .promoted {
            guard !entry.finished, entry.sequence > settledThrough,
                !promotions.contains(where: { $0.sequence == entry.sequence })
            else {
                return []
            }
            promotions.append(entry)
            return [.promoted(entry)]
        }
        if let index = transactions.firstIndex(where: { $0.matches(entry) }) {
            if let current = transactions[index].entry, current.sequence >= entry.sequence { return [] }
            if entry.isSettled { return [.removed(transactions.remove(at: index))] }
            transactions[index].entry = entry
            transactions[index].localError = nil
            return [.updated(transactions[index])]
        }
        guard !entry.isSettled, entry.sequence > settledThrough else { return [] }
        let transaction = StoredTransaction(id: UUID(), entry: entry)
        transactions.append(transaction)
        return [.updated(transaction)]
    }

    /// Applies one entry of the updates stream and moves the cursor past it. Two readers of the stream (the
    /// background sync and `AppStore.sync`) may both bring an entry; a revocation is told only by the first.
    mutating func applyUpdate(_ entry: QueueEntry, settledThrough: Int64) -> [Change] {
        let seen = cursor.map { entry.sequence <= $0 } ?? false
        cursor = max(cursor ?? 0, entry.sequence)
        if entry.state == .revoked && seen { return [] }
        return apply(entry, settledThrough: settledThrough)
    }

    /// Applies a snapshot of every unfinished entry: adds what is new, and drops what the store no longer holds
    /// unfinished (another device finished it). Deferred and unsent payments are never in a snapshot and stay.
    mutating func reconcile(with snapshot: QueueSnapshot) -> [Change] {
        var changes = snapshot.entries.flatMap { apply($0) }
        let unfinished = Set(snapshot.entries.map(\.sequence))
        let settled = { (entry: QueueEntry) in
            entry.state != .deferred && entry.sequence <= snapshot.cursor && !unfinished.contains(entry.sequence)
        }
        for transaction in transactions {
            if let entry = transaction.entry, settled(entry) {
                transactions.removeAll { $0.id == transaction.id }
                changes.append(.removed(transaction))
            }
        }
        promotions.removeAll(where: settled)
        if cursor == nil { cursor = snapshot.cursor }
        return changes
    }

    /// Records a payment the store refused without making an entry (invalid quantity, unknown product…).
    mutating func failPayment(idempotencyKey: String, error: StoreKitErrorInfo) -> [Change] {
        guard
            let index = transactions.firstIndex(where: { $0.isPending && $0.payment.idempotencyKey == idempotencyKey })
        else {
            return []
        }
        transactions[index].localError = error
        return [.updated(transactions[index])]
    }

    /// Removes a finished transaction; an entry's sequence waits in `pendingFinishes` until acknowledged.
    /// Payments not answered yet and deferred ones cannot be finished (StoreKit raises an exception).
    mutating func finish(id: UUID) -> [Change] {
        guard let index = transactions.firstIndex(where: { $0.id == id }), transactions[index].isFinishable else {
            return []
        }
        let transaction = transactions.remove(at: index)
        if let sequence = transaction.entry?.sequence { pendingFinishes.append(sequence) }
        return [.removed(transaction)]
    }

    /// Removes an answered promotion; its finish waits in `pendingFinishes`.
    mutating func finishPromotion(sequence: Int64) {
        guard promotions.contains(where: { $0.sequence == sequence }) else { return }
        promotions.removeAll { $0.sequence == sequence }
        pendingFinishes.append(sequence)
    }

    /// The store acknowledged a finish.
    mutating func acknowledgeFinish(sequence: Int64) {
        pendingFinishes.removeAll { $0 == sequence }
        recentlyFinished.append(sequence)
        recentlyFinished.removeFirst(max(0, recentlyFinished.count - Self.recentlyFinishedLimit))
    }
}

/// A signed-in session as stored on the device.
struct StoredSession: Codable, Sendable, Hashable {
    var token: String
    /// `Production` or `Sandbox`.
    var environment: String
    var account: AccountInfo
    var storefront: StorefrontInfo
}

/// One unfinished transaction of the device's queue.
struct StoredTransaction: Codable, Sendable, Hashable {
    /// Identifies the transaction on this device (the `SKPaymentTransaction` object shown for it).
    var id: UUID
    /// The payment as sent, or as the entry describes it for purchases this device did not start.
    var payment: PaymentRequest
    /// The storefront the payment was added in, to ask the queue's delegate if it changed before sending.
    var storefrontId: String?
    /// The store's latest entry for it; nil while the payment waits for an answer.
    var entry: QueueEntry?
    /// Set when the store refused the payment without an entry.
    var localError: StoreKitErrorInfo?

    init(id: UUID, payment: PaymentRequest, storefrontId: String?) {
        self.id = id
        self.payment = payment
        self.storefrontId = storefrontId
    }

    init(id: UUID, entry: QueueEntry) {
        self.id = id
        self.payment = PaymentRequest(
            productId: entry.productId, quantity: entry.quantity, applicationUsername: entry.applicationUsername,
            appAccountToken: entry.appAccountToken, idempotencyKey: entry.idempotencyKey ?? "")
        self.entry = entry
    }

    /// Stored but not answered: the payment must be (re-)sent with its key.
    var isPending: Bool { entry == nil && localError == nil }

    /// Answered with an outcome the app finishes: purchased, failed or restored.
    var isFinishable: Bool {
        if localError != nil { return true }
        guard let state = entry?.state else { return false }
        return state == .purchased || state == .failed || state == .restored
    }

    /// Whether an entry belongs to this transaction: the same entry, the same payment, or the answer to the
    /// idempotency key this device sent.
    func matches(_ entry: QueueEntry) -> Bool {
        if self.entry?.sequence == entry.sequence { return true }
        if let paymentId = entry.paymentId, self.entry?.paymentId == paymentId { return true }
        if let key = entry.idempotencyKey, !key.isEmpty, payment.idempotencyKey == key { return true }
        return false
    }
}

extension QueueEntry {
    /// Finished, so nothing is left to show. A deferred entry counts as finished at the store (there is nothing
    /// to finish) but still shows its payment waiting for approval.
    var isSettled: Bool { finished && state != .deferred }
}
