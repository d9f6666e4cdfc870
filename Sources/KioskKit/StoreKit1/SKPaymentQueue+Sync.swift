import Foundation
import KioskProtocol

/// Background work: the sync loop, sending payments and finishes, promoted purchases, sessions, shutdown.
extension SKPaymentQueue {
    /// Starts the background sync if it is not running and an account is signed in.
    func startSync() {
        locked.withLock { state in
            state.wantsSync = true
            startSyncIfPossible(in: &state)
        }
    }

    /// Restarts the background sync after the session changed.
    func restartSync() {
        locked.withLock { state in
            state.sync?.task.cancel()
            state.sync = nil
            startSyncIfPossible(in: &state)
        }
    }

    private func startSyncIfPossible(in state: inout State) {
        guard state.wantsSync, state.sync == nil, !state.isClosed, let session = state.device.session else { return }
        state.syncGeneration &+= 1
        let generation = state.syncGeneration
        state.sync = (generation, Task { await self.runSync(session: session, generation: generation) })
    }

    /// Re-sends stored payments and finishes, fetches the unfinished entries, then follows the updates stream;
    /// on failure waits (with backoff) and starts over, until cancelled or the session is refused.
    private func runSync(session: StoredSession, generation: Int) async {
        var attempt = 0
        while !Task.isCancelled {
            resendStoredWork()
            do {
                let snapshot = try await api.unfinished(token: session.token)
                update { state in
                    state.settledThrough = snapshot.cursor
                    return state.device.reconcile(with: snapshot)
                }
                attempt = 0
                handlePromotions()
                let cursor = locked.withLock { $0.device.cursor ?? snapshot.cursor }
                try await api.updates(after: cursor, token: session.token) { entry in
                    update { state in state.device.applyUpdate(entry, settledThrough: state.settledThrough) }
                }
            } catch let error as KioskKitError where error.httpStatus == 401 {
                logger.warning("The store refused the session; sign in again.", metadata: ["error": "\(error)"])
                update { state in
                    state.device.session = nil
                    return []
                }
                break
            } catch {
                if Task.isCancelled { break }
                logger.notice("Queue sync interrupted; retrying.", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: retryDelay(attempt: attempt))
            attempt += 1
        }
        locked.withLock { state in
            if state.sync?.generation == generation { state.sync = nil }
        }
    }

    /// Sends every stored payment and finish that is not being sent already.
    private func resendStoredWork() {
        let (keys, sequences) = locked.withLock { state in
            (
                state.device.pendingPayments.map(\.payment.idempotencyKey).filter { !state.sending.contains($0) },
                state.device.pendingFinishes.filter { !state.finishing.contains($0) }
            )
        }
        for key in keys { spawn { _ = await self.send(idempotencyKey: key) } }
        for sequence in sequences { spawn(cancelOnClose: false) { await self.sendFinish(sequence: sequence) } }
    }

    /// What became of a payment.
    enum PaymentOutcome: Sendable {
        /// The store's entry for it: purchased, failed or deferred.
        case answered(QueueEntry)
        /// Refused before the store made an entry (invalid quantity, unknown product, no session…).
        case refused(StoreKitErrorInfo)
        /// Sending stopped (the client closed, or it is being sent elsewhere); it is re-sent at the next sync.
        case stopped
    }

    /// Sends a stored payment until the store answers it, retrying network and transient failures with the same
    /// idempotency key. Nothing is sent before the stored payment is on disk.
    func send(idempotencyKey key: String) async -> PaymentOutcome {
        guard locked.withLock({ $0.sending.insert(key).inserted }) else { return .stopped }
        return await sendClaimed(idempotencyKey: key)
    }

    /// ``send(idempotencyKey:)`` for a key this caller already put in `sending`; releases it when done.
    func sendClaimed(idempotencyKey key: String) async -> PaymentOutcome {
        defer { locked.withLock { _ = $0.sending.remove(key) } }
        do {
            try await stateFile.flush()
        } catch {
            logger.error("Payment not sent: its state could not be stored.", metadata: ["error": "\(error)"])
            return refuse(key, code: .unknown, reason: "state_not_stored", message: "\(error)")
        }
        var attempt = 0
        while !Task.isCancelled {
            let (record, session, delegate) = locked.withLock {
                state -> (StoredTransaction?, StoredSession?, DelegateReference) in
                (
                    state.device.transactions.first { $0.payment.idempotencyKey == key }, state.device.session,
                    state.delegate
                )
            }
            guard let record, record.isPending else {
                if let entry = record?.entry { return .answered(entry) }
                return record?.localError.map(PaymentOutcome.refused) ?? .stopped
            }
            guard let session else {
                return refuse(
                    key, code: .clientInvalid, reason: "not_signed_in", message: "No account is signed in.")
            }
            if let added = record.storefrontId, added != session.storefront.identifier {
                let storefront = SKStorefront(session.storefront)
                let transaction = locked.withLock { state in view(for: record, in: &state) }
                let proceed = await askOnCallbackQueue {
                    delegate.delegate?.paymentQueue(self, shouldContinue: transaction, in: storefront) ?? true
                }
                guard proceed else {
                    return refuse(
                        key, code: .storeProductNotAvailable, reason: "storefront_changed",
                        message: "The storefront changed and the app chose not to continue.")
                }
            }
            do {
                let entry = try await api.pay(record.payment, token: session.token)
                update { state in state.device.apply(entry) }
                return .answered(entry)
            } catch let error as KioskKitError where error.isRetryable {
                logger.notice("Payment not answered; retrying with the same key.", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: retryDelay(attempt: attempt))
                attempt += 1
            } catch let error as KioskKitError {
                let code = SKError(error).code
                return refuse(
                    key, code: code, reason: error.storeError?.code ?? "\(error.code)", message: error.message)
            } catch {
                break
            }
        }
        return .stopped
    }

    private func refuse(_ key: String, code: SKError.Code, reason: String, message: String) -> PaymentOutcome {
        let info = StoreKitErrorInfo(skErrorCode: code.rawValue, code: reason, message: message)
        update { state in state.device.failPayment(idempotencyKey: key, error: info) }
        return .refused(info)
    }

    /// Sends a stored finish until the store acknowledges it. A refused session leaves it stored for the next
    /// sign-in; an entry the store does not know has nothing left to finish. Once the queue is closing, a failed
    /// attempt is not retried: the finish stays stored for the next launch.
    func sendFinish(sequence: Int64) async {
        guard locked.withLock({ $0.finishing.insert(sequence).inserted }) else { return }
        defer { locked.withLock { _ = $0.finishing.remove(sequence) } }
        var attempt = 0
        while !Task.isCancelled {
            guard let session = locked.withLock({ $0.device.session }) else { return }
            do {
                _ = try await api.finish(sequence: sequence, token: session.token)
            } catch let error as KioskKitError where error.isRetryable {
                if locked.withLock({ $0.isClosed }) { return }
                try? await Task.sleep(for: retryDelay(attempt: attempt))
                attempt += 1
                continue
            } catch let error as KioskKitError where error.httpStatus != 401 {
                logger.warning("The store refused a finish; dropping it.", metadata: ["error": "\(error)"])
            } catch {
                return
            }
            update { state in
                state.device.acknowledgeFinish(sequence: sequence)
                return []
            }
            return
        }
    }

    /// Asks observers about promoted purchases not being handled yet, once an observer exists.
    func handlePromotions() {
        let entries = locked.withLock { state -> [QueueEntry] in
            guard !state.observers.isEmpty, state.device.session != nil else { return [] }
            let new = state.device.promotions.filter { !state.promoting.contains($0.sequence) }
            state.promoting.formUnion(new.map(\.sequence))
            return new
        }
        for entry in entries {
            spawn {
                await self.promote(entry)
                _ = self.locked.withLock { $0.promoting.remove(entry.sequence) }
            }
        }
    }

    /// Asks every observer `shouldAddStorePayment`; if all agree the payment is added (its key derived from the
    /// entry, so it charges once), else the app keeps the payment to add later. Either way the promoted entry is
    /// finished afterwards. A product no longer on sale just finishes the entry.
    private func promote(_ entry: QueueEntry) async {
        guard let session = locked.withLock({ $0.device.session }) else { return }
        let product: SKProduct?
        do {
            product = try await api.products([entry.productId], token: session.token).products.first.map(SKProduct.init)
        } catch {
            logger.notice("Promoted purchase postponed to the next sync.", metadata: ["error": "\(error)"])
            return
        }
        if let product {
            let payment = SKPayment(
                productIdentifier: entry.productId, quantity: entry.quantity,
                applicationUsername: entry.applicationUsername, idempotencyKey: "promoted-\(entry.sequence)")
            let observers = locked.withLock { $0.observers }
            let accepted = await askOnCallbackQueue {
                observers.allSatisfy { reference in
                    reference.observer?.paymentQueue(self, shouldAddStorePayment: payment, for: product) ?? true
                }
            }
            if accepted { add(payment) }
        }
        update { state in
            state.device.finishPromotion(sequence: entry.sequence)
            return []
        }
        await sendFinish(sequence: entry.sequence)
    }

    /// Records a session and restarts the sync with it; tells observers if the storefront changed.
    func signIn(_ session: StoredSession) async throws {
        var storefrontChanged = false
        update { state in
            storefrontChanged = state.device.session.map { $0.storefront != session.storefront } ?? false
            return state.device.signIn(session)
        }
        try await stateFile.flush()
        if storefrontChanged {
            let observers = locked.withLock { $0.observers }
            callbackQueue.async {
                for reference in observers { reference.observer?.paymentQueueDidChangeStorefront(self) }
            }
        }
        restartSync()
    }

    /// Forgets the session and stops the sync; the queue itself is kept for the next sign-in.
    func signOut() async throws -> StoredSession? {
        var previous: StoredSession?
        update { state in
            previous = state.device.session
            state.device.session = nil
            return []
        }
        try await stateFile.flush()
        restartSync()
        return previous
    }

    /// Stops the background work and waits for it: payments being sent and the sync are cancelled (they resume
    /// at the next launch); finishes in flight complete their current attempt. Then writes the state.
    func close() async {
        let (tasks, listeners) = locked.withLock { state in
            state.isClosed = true
            state.sync?.task.cancel()
            for (task, cancelOnClose) in state.tasks.values where cancelOnClose { task.cancel() }
            return (
                state.tasks.values.map(\.task) + [state.sync?.task].compactMap { $0 }, Array(state.listeners.values)
            )
        }
        // Outside the lock: finishing a listener runs its termination handler, which takes the lock.
        for listener in listeners { listener.finish() }
        for task in tasks { await task.value }
        try? await stateFile.flush()
    }
}
