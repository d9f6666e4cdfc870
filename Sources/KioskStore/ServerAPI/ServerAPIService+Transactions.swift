import Foundation
import KioskCore
import KioskProtocol
import KioskSigning
import KioskStorage

/// The transaction endpoints of the App Store Server API. Every lookup is scoped to the caller's app and
/// environment: another app's transaction is "not found".
extension ServerAPIService {
    /// Transactions per history and refund-history page, as Apple pages them.
    static let pageSize = 20

    func transactionInfo(_ id: Int64, caller: ServerAPICaller) async throws -> TransactionInfoResponse {
        let transaction = try await database.read { tx in try await Self.transaction(id, caller: caller, in: tx) }
        return TransactionInfoResponse(signedTransactionInfo: transaction.signedTransaction)
    }

    /// One page of the customer's history. Version 1 leaves out consumables the app finished; version 2 has
    /// every transaction.
    func history(
        anyTransactionId: Int64, _ request: ServerAPIHistoryRequest, version: Int, caller: ServerAPICaller
    ) async throws -> HistoryResponse {
        let (transactions, revision, hasMore) = try await page(
            anyTransactionId: anyTransactionId, request, excludeFinishedConsumables: version == 1, caller: caller)
        return HistoryResponse(
            revision: revision, hasMore: hasMore, bundleId: caller.app.bundleId, appAppleId: caller.app.id,
            environment: caller.environment.appleName, signedTransactions: transactions.map(\.signedTransaction))
    }

    /// One page of the customer's revoked (refunded) transactions, oldest change first.
    func refundHistory(anyTransactionId: Int64, revision: String?, caller: ServerAPICaller) async throws
        -> RefundHistoryResponse
    {
        var request = ServerAPIHistoryRequest()
        request.revision = try revision.map { token in
            let revision = try ServerAPIRevision(token: token)
            guard !revision.descending else { throw ServerAPIError.invalidRequestRevision }
            return revision
        }
        request.revoked = true
        let (transactions, next, hasMore) = try await page(
            anyTransactionId: anyTransactionId, request, excludeFinishedConsumables: false, caller: caller)
        return RefundHistoryResponse(
            signedTransactions: transactions.map(\.signedTransaction), revision: next, hasMore: hasMore)
    }

    private func page(
        anyTransactionId: Int64, _ request: ServerAPIHistoryRequest, excludeFinishedConsumables: Bool,
        caller: ServerAPICaller
    ) async throws -> ([StoreTransaction], revision: String, hasMore: Bool) {
        let rows = try await database.read { tx -> [StoreTransaction] in
            let accountId = try await Self.customer(anyTransactionId, caller: caller, in: tx)
            if request.matchesNothing { return [] }
            let cleared = try await tx.account(id: accountId, environment: caller.environment)?.sandbox?
                .purchaseHistoryClearedAt
            return try await tx.transactionHistory(
                request.storageQuery(
                    environment: caller.environment, appId: caller.app.id, accountId: accountId,
                    historyClearedAt: cleared, excludeFinishedConsumables: excludeFinishedConsumables,
                    pageSize: Self.pageSize))
        }
        let page = Array(rows.prefix(Self.pageSize))
        let position = page.last.map {
            TransactionHistoryQuery.Position(modifiedAt: $0.modifiedAt.millisecondsSince1970, id: $0.id)
        }
        let revision = ServerAPIRevision(
            descending: request.descending, position: position ?? request.revision?.position)
        return (page, revision.token, rows.count > Self.pageSize)
    }

    func lookUpOrder(_ orderId: String, caller: ServerAPICaller) async throws -> OrderLookupResponse {
        let transactions = try await database.transaction { tx in
            try await tx.transactions(orderId: orderId, appId: caller.app.id, environment: caller.environment)
        }
        return OrderLookupResponse(
            status: transactions.isEmpty ? 1 : 0, signedTransactions: transactions.map(\.signedTransaction))
    }

    /// Keeps the latest consumption report of a transaction. Version 1 takes consumables and auto-renewable
    /// subscriptions only.
    func saveConsumption(_ id: Int64, body: String, version: Int, caller: ServerAPICaller) async throws {
        let now = clocks.now(caller.environment)
        try await database.transaction { tx in
            let transaction = try await Self.transaction(id, caller: caller, in: tx)
            if version == 1, ![.consumable, .autoRenewable].contains(transaction.productType) {
                throw ServerAPIError.invalidTransactionNotConsumable
            }
            try await tx.saveConsumptionReport(
                ConsumptionReport(
                    environment: caller.environment, transactionId: id, appId: caller.app.id, apiVersion: version,
                    body: body, receivedAt: now))
        }
    }

    /// Sets the app account token on every transaction of an original transaction id and signs them again.
    func setAppAccountToken(_ token: UUID, originalTransactionId: Int64, caller: ServerAPICaller) async throws {
        let now = clocks.now(caller.environment)
        try await database.transaction { tx in
            let original = try await Self.transaction(originalTransactionId, caller: caller, in: tx)
            guard original.originalTransactionId == original.id else {
                throw ServerAPIError.transactionIdIsNotOriginalTransactionId
            }
            for var transaction in try await tx.transactions(
                originalTransactionId: original.id, appId: caller.app.id, environment: caller.environment)
            {
                transaction.appAccountToken = token
                transaction.modifiedAt = now
                try ledger.sign(&transaction, bundleId: caller.app.bundleId, now: now)
                try await tx.updateTransaction(transaction)
            }
        }
    }

    /// The customer's signed `AppTransaction`: what the app's own `AppTransaction.shared` would show.
    func appTransactionInfo(anyTransactionId: Int64, caller: ServerAPICaller) async throws -> AppTransactionInfoResponse
    {
        let appTransaction = try await database.transaction { tx in
            let accountId = try await Self.customer(anyTransactionId, caller: caller, in: tx)
            guard
                let appTransaction = try await tx.appTransaction(
                    accountId: accountId, appId: caller.app.id, environment: caller.environment)
            else { throw ServerAPIError.appTransactionDoesNotExist }
            return appTransaction
        }
        let payload = AppTransactionPayload(appTransaction, app: caller.app, now: clocks.now(caller.environment))
        return AppTransactionInfoResponse(
            signedAppTransactionInfo: try signing.sign(payload, environment: caller.environment))
    }

    /// Finishes the transaction's unfinished queue entries, as the app's `finish()` would, and wakes the
    /// account's updates streams. Finishing again changes nothing.
    func finish(_ id: Int64, caller: ServerAPICaller) async throws {
        let now = clocks.now(caller.environment)
        try await ledger.commit { tx, effects in
            let transaction = try await Self.transaction(id, caller: caller, in: tx)
            for record in try await tx.unfinishedQueueRecords(
                accountId: transaction.accountId, appId: caller.app.id, environment: caller.environment)
            where record.transactionId == id {
                _ = try await tx.finishQueueRecord(sequence: record.sequence, at: now)
                effects.wake(
                    QueueFeed.Key(
                        environment: caller.environment, accountId: transaction.accountId, appId: caller.app.id))
            }
        }
    }

    /// The caller's transaction `id`; `4040010` when the app has none with it in this environment.
    private static func transaction(_ id: Int64, caller: ServerAPICaller, in tx: any StorageTransaction)
        async throws -> StoreTransaction
    {
        guard let transaction = try await tx.transaction(id: id, environment: caller.environment),
            transaction.appId == caller.app.id
        else { throw ServerAPIError.transactionIdNotFound }
        return transaction
    }

    /// The account `anyTransactionId` belongs to in the caller's app; `4040010` when none.
    private static func customer(_ anyTransactionId: Int64, caller: ServerAPICaller, in tx: any StorageTransaction)
        async throws -> UUID
    {
        guard
            let accountId = try await tx.accountId(
                anyTransactionId: anyTransactionId, appId: caller.app.id, environment: caller.environment)
        else { throw ServerAPIError.transactionIdNotFound }
        return accountId
    }
}
