import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

extension PurchaseService {
    /// Every unfinished entry of the client's account and app: what a client syncs at launch and on reconnect.
    public func unfinished(for client: ClientSession) async throws -> QueueSnapshot {
        try await database.transaction { tx in
            // The cursor is read first: on PostgreSQL each statement sees the commits made before it, so an entry
            // committed between two reads is then either in the list or after the cursor, never lost between.
            let cursor = try await tx.latestQueueSequence()
            let records = try await tx.unfinishedQueueRecords(
                accountId: client.account.id, appId: client.app.id, environment: client.environment)
            var entries: [QueueEntry] = []
            for record in records { entries.append(try await entry(for: record, in: tx)) }
            return QueueSnapshot(entries: entries, cursor: cursor)
        }
    }

    /// Entries after `cursor` (finished or not), for the updates stream.
    public func entries(after cursor: Int64, limit: Int, for client: ClientSession) async throws -> [QueueEntry] {
        try await database.transaction { tx in
            let records = try await tx.queueRecords(
                accountId: client.account.id, appId: client.app.id, environment: client.environment, after: cursor,
                limit: limit)
            var entries: [QueueEntry] = []
            for record in records { entries.append(try await entry(for: record, in: tx)) }
            return entries
        }
    }

    /// `finishTransaction`: the entry stops coming back. Finishing twice answers the same.
    public func finish(sequence: Int64, for client: ClientSession) async throws -> QueueEntry {
        try await database.transaction { tx in
            guard let record = try await tx.queueRecord(sequence: sequence), record.accountId == client.account.id,
                record.appId == client.app.id, record.environment == client.environment,
                let finished = try await tx.finishQueueRecord(sequence: sequence, at: clocks.now(client.environment))
            else {
                throw KioskError.notFound(
                    "unknown_queue_entry",
                    "The queue of this account and app has no entry \(sequence).", field: "sequence",
                    fix: "Finish only transactions the queue handed out to this session.")
            }
            return try await entry(for: finished, in: tx)
        }
    }

    /// `restoreCompletedTransactions`: one new `restored` entry per restorable purchase (non-consumables and
    /// auto-renewable subscriptions, not revoked); consumables and non-renewing subscriptions never come back
    /// (seed 000). Restoring twice makes the entries twice, as StoreKit does.
    public func restore(_ request: RestoreRequest, for client: ClientSession) async throws -> QueueSnapshot {
        if let name = request.applicationUsername, name.count > 255 {
            throw KioskError.invalid(
                "application_username_too_long", "applicationUsername may have at most 255 characters.",
                field: "applicationUsername", fix: "Send the same value the payments carried.")
        }
        try await failIfArmed(.restore, client: client)
        let now = clocks.now(client.environment)
        return try await ledger.commit { tx, effects in
            var latestByOriginal: [Int64: StoreTransaction] = [:]
            for transaction in try await visibleTransactions(client: client, in: tx)
            where transaction.revocationDate == nil
                && [.nonConsumable, .autoRenewable].contains(transaction.productType)
            {
                latestByOriginal[transaction.originalTransactionId] = transaction
            }
            var entries: [QueueEntry] = []
            for transaction in latestByOriginal.values.sorted(by: { $0.id < $1.id }) {
                // Transaction id before queue sequence, the order a charge takes them in: the same lock order on
                // PostgreSQL's counter rows, so a restore and a purchase never deadlock.
                let restoreId = try await tx.nextIdentifier(
                    client.environment == .production ? .productionTransactionId : .sandboxTransactionId)
                let record = QueueRecord(
                    sequence: try await tx.nextIdentifier(.queueEntry), environment: client.environment,
                    accountId: client.account.id, appId: client.app.id, state: .restored, paymentId: nil,
                    productId: transaction.productId, quantity: transaction.quantity, transactionId: transaction.id,
                    restoreTransactionId: restoreId, createdAt: now)
                try await tx.insertQueueRecord(record)
                entries.append(try await entry(for: record, in: tx))
                effects.wake(client.feedKey)
            }
            return QueueSnapshot(entries: entries, cursor: try await tx.latestQueueSequence())
        }
    }

    /// `Transaction.currentEntitlements`: the latest transaction of each non-consumable, non-renewing and
    /// unexpired auto-renewable purchase, none revoked.
    public func entitlements(for client: ClientSession) async throws -> EntitlementsResponse {
        let now = clocks.now(client.environment)
        let transactions = try await database.transaction { tx in try await visibleTransactions(client: client, in: tx)
        }
        var latestByOriginal: [Int64: StoreTransaction] = [:]
        for transaction in transactions where transaction.productType != .consumable {
            latestByOriginal[transaction.originalTransactionId] = transaction
        }
        let current = latestByOriginal.values.filter { transaction in
            transaction.revocationDate == nil && (transaction.expiresDate.map { $0 > now } ?? true)
        }
        return EntitlementsResponse(transactions: current.sorted { $0.id < $1.id }.map { Self.info($0) })
    }

    /// The wire form of a record, with its payment's and transaction's details.
    func entry(for record: QueueRecord, in tx: any StorageTransaction) async throws -> QueueEntry {
        let payment = try await record.paymentId.asyncMap { try await tx.payment(id: $0) } ?? nil
        let transaction =
            try await record.transactionId.asyncMap {
                try await tx.transaction(id: $0, environment: record.environment)
            } ?? nil
        let info = transaction.map { transaction in
            record.restoreTransactionId.map { Self.info(transaction, restoredAs: $0, at: record.createdAt) }
                ?? Self.info(transaction)
        }
        let error = record.errorCode.map { code in
            StoreKitErrorInfo(
                skErrorCode: code, code: record.errorReason ?? "failed",
                message: Self.failureMessage(record.errorReason, code: code))
        }
        return QueueEntry(
            sequence: record.sequence, state: Self.wireState(record.state),
            paymentId: record.paymentId, idempotencyKey: payment?.idempotencyKey, productId: record.productId,
            quantity: record.quantity,
            applicationUsername: payment?.applicationUsername ?? transaction?.applicationUsername,
            appAccountToken: payment?.appAccountToken ?? transaction?.appAccountToken, transaction: info, error: error,
            date: record.createdAt.millisecondsSince1970, finished: record.finishedAt != nil)
    }

    static func wireState(_ state: QueueRecord.State) -> QueueEntryState {
        switch state {
        case .purchased: .purchased
        case .failed: .failed
        case .deferred: .deferred
        case .restored: .restored
        case .promoted: .promoted
        case .revoked: .revoked
        }
    }

    static func info(_ transaction: StoreTransaction) -> TransactionInfo {
        TransactionInfo(
            transactionId: String(transaction.id), originalTransactionId: String(transaction.originalTransactionId),
            purchaseDate: transaction.purchaseDate.millisecondsSince1970,
            originalPurchaseDate: transaction.originalPurchaseDate.millisecondsSince1970,
            signedTransaction: transaction.signedTransaction, transactionReceipt: transaction.transactionReceipt)
    }

    /// A restored transaction: a new identifier and date; the original is the restored purchase. Its signed forms
    /// are the original purchase's (StoreKit 2 has no restored transactions of its own).
    static func info(_ transaction: StoreTransaction, restoredAs id: Int64, at date: Date) -> TransactionInfo {
        TransactionInfo(
            transactionId: String(id), originalTransactionId: String(transaction.id),
            purchaseDate: date.millisecondsSince1970,
            originalPurchaseDate: transaction.purchaseDate.millisecondsSince1970,
            signedTransaction: transaction.signedTransaction, transactionReceipt: transaction.transactionReceipt)
    }

    static func failureMessage(_ reason: String?, code: Int) -> String {
        switch reason {
        case "purchase_interrupted":
            "The purchase was interrupted (the sandbox tester has interrupted purchases on); it completes once resolved."
        case "payment_declined": "The account's payment method was declined."
        case "insufficient_funds": "The account's payment method has insufficient funds."
        case "ask_to_buy_declined": "The parent declined the Ask to Buy request."
        case "injected_failure": "The sandbox test controls made this purchase fail."
        case "already_subscribed": "The account is already subscribed to this product; nothing was charged."
        case "missing_offer_params":
            "The promotional offer lacks an identifier, key identifier, nonce, signature or timestamp."
        case "unknown_offer", "offer_not_applicable": "The product has no such offer."
        case "ineligible_for_offer": "Promotional offers are for customers who have or had a subscription in the group."
        case "unknown_offer_key": "The promotional offer was signed with a key that is not an active key of the app."
        case "offer_signature_expired": "The promotional offer's signature is more than 24 hours old."
        case "invalid_offer_signature": "The promotional offer's signature does not verify."
        case "offer_nonce_reused": "The promotional offer's nonce was already redeemed."
        case "no_offer_price": "The offer has no price in the account's storefront."
        case "win_back_offer_inactive": "The win-back offer is not running now."
        case "win_back_still_subscribed":
            "Win-back offers are for customers whose subscription in the group ended; the account is still subscribed."
        case "win_back_paid_too_little": "The account paid for too few months in the group for this win-back offer."
        case "win_back_nothing_ended": "The account has no ended subscription in the group to win back."
        case "win_back_too_soon": "The account's subscription ended too recently for this win-back offer."
        case "win_back_too_late": "The account's subscription ended too long ago for this win-back offer."
        case "win_back_wait_between_offers": "The account redeemed a win-back offer in the group too recently."
        case "product_not_available", "unknown_product": "The product is not available for purchase."
        default: "The payment failed (SKError code \(code))."
        }
    }
}

extension Optional {
    /// `map` with an async transform.
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
