import Foundation
import KioskProtocol

/// What the StoreKit 2 face needs from the device queue: one queue serves both faces.
extension SKPaymentQueue {
    /// A stream of purchased and restored entries for `Transaction.updates`. The first listener of the process
    /// also gets the unfinished ones already known, as StoreKit 2 delivers them once after launch.
    func transactionEntries() -> AsyncStream<QueueEntry> {
        let (stream, continuation) = AsyncStream.makeStream(of: QueueEntry.self)
        let id = UUID()
        continuation.onTermination = { _ in
            _ = self.locked.withLock { $0.listeners.removeValue(forKey: id) }
        }
        let isClosed = locked.withLock { state in
            guard !state.isClosed else { return true }
            if !state.unfinishedReplayed {
                state.unfinishedReplayed = true
                for entry in Self.unfinishedTransactionEntries(state.device) { continuation.yield(entry) }
            }
            state.listeners[id] = continuation
            return false
        }
        // Outside the lock: finishing runs the termination handler, which takes the lock.
        if isClosed { continuation.finish() }
        startSync()
        return stream
    }

    /// The purchased and restored entries not finished yet.
    var unfinishedTransactionEntries: [QueueEntry] {
        locked.withLock { Self.unfinishedTransactionEntries($0.device) }
    }

    private static func unfinishedTransactionEntries(_ device: DeviceState) -> [QueueEntry] {
        device.transactions.compactMap(\.entry).filter {
            $0.transaction != nil && ($0.state == .purchased || $0.state == .restored)
        }
    }

    /// Stores and sends a payment for `Product.purchase`, returning the store's answer to it. Its entries reach
    /// `Transaction.updates` only if the answer is not final here (deferred, or sending stopped).
    func purchase(_ request: PaymentRequest) async -> PaymentOutcome {
        // Claimed for sending before it is stored: a sync running meanwhile resends stored payments, and must not
        // take this one (this call would then see it "sent elsewhere" and have no answer to return).
        locked.withLock { state in
            _ = state.directPurchaseKeys.insert(request.idempotencyKey)
            _ = state.sending.insert(request.idempotencyKey)
        }
        defer { locked.withLock { _ = $0.directPurchaseKeys.remove(request.idempotencyKey) } }
        enqueue(request)
        startSync()
        return await sendClaimed(idempotencyKey: request.idempotencyKey)
    }

    /// Finishes the unfinished transaction with this store transaction id, if there is one.
    func finish(transactionId: String) {
        let transaction = locked.withLock { state in
            state.device.transactions.first { $0.entry?.transaction?.transactionId == transactionId }
                .map { view(for: $0, in: &state) }
        }
        if let transaction { finishTransaction(transaction) }
    }

    /// Brings the device up to date now (`AppStore.sync()`): fetches the unfinished entries, then reads the
    /// updates stream from the device's cursor until the store says it caught up, so revocations and other changes
    /// made while the app was not running are told too. Returns once observers were called with all of it.
    func syncNow() async throws {
        let session = try requireSession()
        let snapshot = try await api.unfinished(token: session.token)
        update { state in
            state.settledThrough = max(state.settledThrough, snapshot.cursor)
            return state.device.reconcile(with: snapshot)
        }
        let cursor = locked.withLock { $0.device.cursor ?? snapshot.cursor }
        try await api.updates(after: cursor, token: session.token, untilCaughtUp: true) { entry in
            update { state in state.device.applyUpdate(entry, settledThrough: state.settledThrough) }
        }
        await askOnCallbackQueue {}
    }
}
