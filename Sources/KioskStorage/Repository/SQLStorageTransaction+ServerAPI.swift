import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// What the App Store Server API's transaction endpoints read and keep: app transactions, consumption reports,
/// transaction history pages, order and original-transaction lookups.
extension SQLStorageTransaction {
    /// Inserts the account's app transaction unless it has one. Its id is derived from the account, so a
    /// concurrent insert of the same one collides on the primary key as well as on the account: either conflict
    /// means it exists.
    func ensureAppTransaction(_ appTransaction: StoreAppTransaction) async throws -> StoreAppTransaction {
        try await session.run(
            """
            INSERT INTO app_transactions (environment, id, app_id, account_id, original_purchase_date)
            VALUES (\(bind: appTransaction.environment.rawValue), \(bind: appTransaction.id),
                \(bind: appTransaction.appId), \(bind: Self.text(appTransaction.accountId)),
                \(bind: appTransaction.originalPurchaseDate.millisecondsSince1970))
            ON CONFLICT DO NOTHING
            """
        )
        guard
            let stored = try await self.appTransaction(
                accountId: appTransaction.accountId, appId: appTransaction.appId,
                environment: appTransaction.environment)
        else { throw StorageError.engine(message: "app transaction \(appTransaction.id) was not stored") }
        return stored
    }

    func appTransaction(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> StoreAppTransaction?
    {
        try await session.first("SELECT * FROM app_transactions WHERE \(Self.ownedBy(accountId, appId, environment))")
            .map { row in
                StoreAppTransaction(
                    environment: try row.enumeration("environment", as: StoreEnvironment.self),
                    id: try row.decode(column: "id", as: Int64.self),
                    appId: try row.decode(column: "app_id", as: Int64.self), accountId: try row.uuid("account_id"),
                    originalPurchaseDate: try row.date("original_purchase_date"),
                    consentRescindedBy: try row.optional("consent_rescinded_by", as: String.self))
            }
    }

    func rescindConsent(_ appTransaction: StoreAppTransaction, notificationUUID uuid: String) async throws -> Bool {
        try await !session.all(
            """
            UPDATE app_transactions SET consent_rescinded_by = \(bind: uuid)
            WHERE environment = \(bind: appTransaction.environment.rawValue) AND id = \(bind: appTransaction.id)
                AND consent_rescinded_by IS NULL
            RETURNING id
            """
        ).isEmpty
    }

    func accountId(anyTransactionId: Int64, appId: App.ID, environment: StoreEnvironment) async throws -> UUID? {
        let scope: SQLQueryString = "environment = \(bind: environment.rawValue) AND app_id = \(bind: appId)"
        return try await session.first(
            """
            SELECT account_id FROM transactions
            WHERE \(scope) AND (id = \(bind: anyTransactionId) OR original_transaction_id = \(bind: anyTransactionId))
            UNION ALL
            SELECT account_id FROM app_transactions WHERE \(scope) AND id = \(bind: anyTransactionId)
            LIMIT 1
            """
        )
        .map { try $0.uuid("account_id") }
    }

    func transactionHistory(_ query: TransactionHistoryQuery) async throws -> [StoreTransaction] {
        var conditions: [SQLQueryString] = [Self.ownedBy(query.accountId, query.appId, query.environment)]
        if let after = query.after {
            let comparison: SQLQueryString = query.descending ? "<" : ">"
            conditions.append(
                """
                (modified_at \(comparison) \(bind: after.modifiedAt)
                    OR (modified_at = \(bind: after.modifiedAt) AND id \(comparison) \(bind: after.id)))
                """
            )
        }
        if let from = query.purchasedFrom {
            conditions.append("purchase_date >= \(bind: from.millisecondsSince1970)")
        }
        if let before = query.purchasedBefore {
            conditions.append("purchase_date < \(bind: before.millisecondsSince1970)")
        }
        if !query.productIds.isEmpty {
            conditions.append("product_id IN (\(binds: query.productIds))")
        }
        if !query.productTypes.isEmpty {
            conditions.append("product_type IN (\(binds: query.productTypes.map(\.rawValue)))")
        }
        if !query.subscriptionGroupIds.isEmpty {
            conditions.append("subscription_group_id IN (\(binds: query.subscriptionGroupIds))")
        }
        switch query.revoked {
        case true?: conditions.append("revocation_date IS NOT NULL")
        case false?: conditions.append("revocation_date IS NULL")
        case nil: break
        }
        if query.excludeFinishedConsumables {
            // A consumable stays until the client finished every queue entry that shows it.
            conditions.append(
                """
                (product_type <> \(bind: ProductType.consumable.rawValue) OR EXISTS (
                    SELECT 1 FROM queue_entries q
                    WHERE q.environment = transactions.environment AND q.account_id = transactions.account_id
                        AND q.app_id = transactions.app_id AND q.transaction_id = transactions.id
                        AND q.finished_at IS NULL))
                """
            )
        }
        let direction: SQLQueryString = query.descending ? "DESC" : "ASC"
        return try await session.all(
            """
            SELECT * FROM transactions WHERE \(conditions.joined(separator: " AND "))
            ORDER BY modified_at \(direction), id \(direction)
            LIMIT \(bind: query.limit)
            """
        )
        .map(Self.decodeTransaction)
    }

    func transactions(orderId: String, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    {
        try await session.all(
            """
            SELECT * FROM transactions
            WHERE environment = \(bind: environment.rawValue) AND app_id = \(bind: appId)
                AND order_id = \(bind: orderId)
            ORDER BY id
            """
        )
        .map(Self.decodeTransaction)
    }

    func transactions(originalTransactionId: Int64, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    {
        try await session.all(
            """
            SELECT * FROM transactions
            WHERE environment = \(bind: environment.rawValue) AND app_id = \(bind: appId)
                AND original_transaction_id = \(bind: originalTransactionId)
            ORDER BY id
            """
        )
        .map(Self.decodeTransaction)
    }

    func saveConsumptionReport(_ report: ConsumptionReport) async throws {
        try await session.run(
            """
            INSERT INTO consumption_reports (environment, transaction_id, app_id, api_version, body, received_at)
            VALUES (\(bind: report.environment.rawValue), \(bind: report.transactionId), \(bind: report.appId),
                \(bind: report.apiVersion), \(bind: report.body), \(bind: report.receivedAt.millisecondsSince1970))
            ON CONFLICT (environment, transaction_id) DO UPDATE SET app_id = excluded.app_id,
                api_version = excluded.api_version, body = excluded.body, received_at = excluded.received_at
            """
        )
    }

    func consumptionReport(transactionId: Int64, environment: StoreEnvironment) async throws -> ConsumptionReport? {
        try await session.first(
            """
            SELECT * FROM consumption_reports
            WHERE environment = \(bind: environment.rawValue) AND transaction_id = \(bind: transactionId)
            """
        )
        .map { row in
            ConsumptionReport(
                environment: try row.enumeration("environment", as: StoreEnvironment.self),
                transactionId: try row.decode(column: "transaction_id", as: Int64.self),
                appId: try row.decode(column: "app_id", as: Int64.self),
                apiVersion: try row.decode(column: "api_version", as: Int.self),
                body: try row.decode(column: "body", as: String.self), receivedAt: try row.date("received_at"))
        }
    }
}
