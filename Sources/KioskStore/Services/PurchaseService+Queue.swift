import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

// Each answer's entries are read in a database transaction and made once it ended (`StoreLedger.entry(_:)`), so that
// their receipts are not signed while SQLite's one writer waits. Listings only read: they run beside the writer.
extension PurchaseService {
    /// Every unfinished entry of the client's account and app: what a client syncs at launch and on reconnect.
    public func unfinished(for client: ClientSession) async throws -> QueueSnapshot {
        let (rows, cursor) = try await database.read { tx in
            // The cursor is read first: on PostgreSQL each statement sees the commits made before it, so an entry
            // committed between two reads is then either in the list or after the cursor, never lost between.
            let cursor = try await tx.latestQueueSequence()
            let records = try await tx.unfinishedQueueRecords(
                accountId: client.account.id, appId: client.app.id, environment: client.environment)
            var rows: [QueueEntryRows] = []
            for record in records { rows.append(try await ledger.entryRows(for: record, in: tx)) }
            return (rows, cursor)
        }
        return QueueSnapshot(entries: try rows.map(ledger.entry), cursor: cursor)
    }

    /// Entries after `cursor` (finished or not), for the updates stream.
    public func entries(after cursor: Int64, limit: Int, for client: ClientSession) async throws -> [QueueEntry] {
        let rows = try await database.read { tx in
            let records = try await tx.queueRecords(
                accountId: client.account.id, appId: client.app.id, environment: client.environment, after: cursor,
                limit: limit)
            var rows: [QueueEntryRows] = []
            for record in records { rows.append(try await ledger.entryRows(for: record, in: tx)) }
            return rows
        }
        return try rows.map(ledger.entry)
    }

    /// `finishTransaction`: the entry stops coming back. Finishing twice answers the same.
    public func finish(sequence: Int64, for client: ClientSession) async throws -> QueueEntry {
        let rows = try await database.transaction { tx in
            guard let record = try await tx.queueRecord(sequence: sequence), record.accountId == client.account.id,
                record.appId == client.app.id, record.environment == client.environment,
                let finished = try await tx.finishQueueRecord(sequence: sequence, at: clocks.now(client.environment))
            else {
                throw KioskError(
                    .unknownQueueEntry, "The queue of this account and app has no entry \(sequence).",
                    field: "sequence",
                    fix: "Finish only transactions the queue handed out to this session.")
            }
            return try await ledger.entryRows(for: finished, in: tx)
        }
        return try ledger.entry(rows)
    }

    /// `restoreCompletedTransactions`: one new `restored` entry per restorable purchase (non-consumables and
    /// auto-renewable subscriptions, not revoked); consumables and non-renewing subscriptions never come back
    /// (In-App Purchase Programming Guide: Restoring Purchased Products). Restoring twice makes the entries twice,
    /// as StoreKit does.
    public func restore(_ request: RestoreRequest, for client: ClientSession) async throws -> QueueSnapshot {
        if let name = request.applicationUsername, name.count > 255 {
            throw KioskError(
                .applicationUsernameTooLong, "applicationUsername may have at most 255 characters.",
                field: "applicationUsername", fix: "Send the same value the payments carried.")
        }
        try await failIfArmed(.restore, client: client)
        let now = clocks.now(client.environment)
        let (rows, cursor) = try await ledger.commit { tx, effects in
            var latestByOriginal: [Int64: StoreTransaction] = [:]
            for transaction in try await visibleTransactions(client: client, in: tx)
            where transaction.revocationDate == nil
                && [.nonConsumable, .autoRenewable].contains(transaction.productType)
            {
                latestByOriginal[transaction.originalTransactionId] = transaction
            }
            var rows: [QueueEntryRows] = []
            for transaction in latestByOriginal.values.sorted(by: { $0.id < $1.id }) {
                // Transaction id before queue sequence, the order a charge takes them in: the same lock order on
                // PostgreSQL's counter rows, so a restore and a purchase never deadlock.
                let restoreId = try await tx.nextIdentifier(
                    client.environment == .production ? .productionTransactionId : .sandboxTransactionId)
                let record = StoreLedger.queueRecord(
                    .restored, about: transaction, sequence: try await tx.nextIdentifier(.queueEntry),
                    restoreTransactionId: restoreId, now: now)
                try await tx.insertQueueRecord(record)
                rows.append(try await ledger.entryRows(for: record, in: tx))
                effects.wake(client.feedKey)
            }
            return (rows, try await tx.latestQueueSequence())
        }
        return QueueSnapshot(entries: try rows.map(ledger.entry), cursor: cursor)
    }

    /// `Transaction.currentEntitlements`: the latest transaction of each non-consumable, non-renewing and
    /// unexpired auto-renewable purchase, none revoked.
    public func entitlements(for client: ClientSession) async throws -> EntitlementsResponse {
        let now = clocks.now(client.environment)
        let transactions = try await database.transaction { tx in try await visibleTransactions(client: client, in: tx)
        }
        let current = StoreTransaction.currentEntitlements(among: transactions, at: now)
        return EntitlementsResponse(
            transactions: try current.map {
                StoreLedger.info(
                    $0,
                    receipt: try StoreLedger.receipt(of: $0, bundleId: client.app.bundleId, signing: context.signing))
            })
    }

}

extension Optional {
    /// `map` with an async transform.
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
