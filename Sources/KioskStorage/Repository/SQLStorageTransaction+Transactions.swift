import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Store transactions, keyed by environment and id (each environment numbers its own). Deleting them also
/// deletes the queue entries that show them, which keep no foreign key.
extension SQLStorageTransaction {
    func insertTransactions(_ transactions: [StoreTransaction]) async throws {
        try await insert(
            transactions,
            into: """
                transactions (environment, id, app_id, account_id, product_id, product_type,
                    original_transaction_id, purchase_date, original_purchase_date, quantity, price_minor_units,
                    currency, storefront, storefront_id, application_username, app_account_token, order_id,
                    subscription_group_id, web_order_line_item_id, expires_date, revocation_date, revocation_reason,
                    revocation_type, transaction_reason, is_upgraded, offer_type, offer_identifier,
                    offer_discount_type, offer_period, refunded_minor_units, modified_at, revision,
                    signed_transaction, commitment_period, commitment_periods,
                    commitment_expires_at, commitment_price_minor_units)
                """
        ) { transaction -> SQLQueryString in
            """
            (\(bind: transaction.environment.rawValue), \(bind: transaction.id), \(bind: transaction.appId),
                \(bind: Self.text(transaction.accountId)), \(bind: transaction.productId),
                \(bind: transaction.productType.rawValue), \(bind: transaction.originalTransactionId),
                \(bind: transaction.purchaseDate.millisecondsSince1970),
                \(bind: transaction.originalPurchaseDate.millisecondsSince1970), \(bind: transaction.quantity),
                \(bind: transaction.priceMinorUnits), \(bind: transaction.currency), \(bind: transaction.storefront),
                \(bind: transaction.storefrontId), \(bind: transaction.applicationUsername),
                \(bind: transaction.appAccountToken.map(Self.text)), \(bind: transaction.orderId),
                \(bind: transaction.subscriptionGroupId), \(bind: transaction.webOrderLineItemId),
                \(bind: transaction.expiresDate?.millisecondsSince1970),
                \(bind: transaction.revocationDate?.millisecondsSince1970), \(bind: transaction.revocationReason),
                \(bind: transaction.revocationType?.rawValue), \(bind: transaction.transactionReason.rawValue),
                \(bind: transaction.isUpgraded), \(bind: transaction.offer?.type.rawValue),
                \(bind: transaction.offer?.identifier), \(bind: transaction.offer?.paymentMode.rawValue),
                \(bind: transaction.offer?.period), \(bind: transaction.refundedMinorUnits),
                \(bind: transaction.modifiedAt.millisecondsSince1970), \(bind: transaction.revision),
                \(bind: transaction.signedTransaction),
                \(bind: transaction.commitment?.billingPeriodNumber), \(bind: transaction.commitment?.totalBillingPeriods),
                \(bind: transaction.commitment?.expiresDate.millisecondsSince1970),
                \(bind: transaction.commitment?.priceMinorUnits))
            """
        }
    }

    func updateTransaction(_ transaction: StoreTransaction) async throws {
        let row = try await session.first(
            """
            UPDATE transactions SET app_id = \(bind: transaction.appId),
                account_id = \(bind: Self.text(transaction.accountId)), product_id = \(bind: transaction.productId),
                product_type = \(bind: transaction.productType.rawValue),
                original_transaction_id = \(bind: transaction.originalTransactionId),
                purchase_date = \(bind: transaction.purchaseDate.millisecondsSince1970),
                original_purchase_date = \(bind: transaction.originalPurchaseDate.millisecondsSince1970),
                quantity = \(bind: transaction.quantity), price_minor_units = \(bind: transaction.priceMinorUnits),
                currency = \(bind: transaction.currency), storefront = \(bind: transaction.storefront),
                storefront_id = \(bind: transaction.storefrontId),
                application_username = \(bind: transaction.applicationUsername),
                app_account_token = \(bind: transaction.appAccountToken.map(Self.text)),
                order_id = \(bind: transaction.orderId),
                subscription_group_id = \(bind: transaction.subscriptionGroupId),
                web_order_line_item_id = \(bind: transaction.webOrderLineItemId),
                expires_date = \(bind: transaction.expiresDate?.millisecondsSince1970),
                revocation_date = \(bind: transaction.revocationDate?.millisecondsSince1970),
                revocation_reason = \(bind: transaction.revocationReason),
                revocation_type = \(bind: transaction.revocationType?.rawValue),
                transaction_reason = \(bind: transaction.transactionReason.rawValue),
                is_upgraded = \(bind: transaction.isUpgraded),
                offer_type = \(bind: transaction.offer?.type.rawValue),
                offer_identifier = \(bind: transaction.offer?.identifier),
                offer_discount_type = \(bind: transaction.offer?.paymentMode.rawValue),
                offer_period = \(bind: transaction.offer?.period),
                refunded_minor_units = \(bind: transaction.refundedMinorUnits),
                modified_at = \(bind: transaction.modifiedAt.millisecondsSince1970),
                revision = \(bind: transaction.revision),
                signed_transaction = \(bind: transaction.signedTransaction),
                commitment_period = \(bind: transaction.commitment?.billingPeriodNumber),
                commitment_periods = \(bind: transaction.commitment?.totalBillingPeriods),
                commitment_expires_at = \(bind: transaction.commitment?.expiresDate.millisecondsSince1970),
                commitment_price_minor_units = \(bind: transaction.commitment?.priceMinorUnits)
            WHERE environment = \(bind: transaction.environment.rawValue) AND id = \(bind: transaction.id)
                AND revision = \(bind: transaction.revision - 1)
            RETURNING id
            """
        )
        try requireUpdated(
            row,
            "\(transaction.environment.rawValue) transaction \(transaction.id) at revision \(transaction.revision - 1)")
    }

    func transaction(id: StoreTransaction.ID, environment: StoreEnvironment) async throws -> StoreTransaction? {
        try await session.first(
            "SELECT * FROM transactions WHERE environment = \(bind: environment.rawValue) AND id = \(bind: id)"
        )
        .map(Self.decodeTransaction)
    }

    func transactions(originalTransactionIds: [StoreTransaction.ID], environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    {
        guard !originalTransactionIds.isEmpty else { return [] }
        return try await session.all(
            """
            SELECT * FROM transactions WHERE environment = \(bind: environment.rawValue)
                AND original_transaction_id IN (\(binds: originalTransactionIds))
            """
        )
        .map(Self.decodeTransaction)
    }

    func transactions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws
        -> [StoreTransaction]
    {
        try await session.all(
            """
            SELECT * FROM transactions WHERE \(Self.ownedBy(accountId, appId, environment))
            ORDER BY purchase_date, id
            """
        )
        .map(Self.decodeTransaction)
    }

    func subscriptionChains(environment: StoreEnvironment, from start: Date, to end: Date) async throws
        -> [StoreTransaction]
    {
        let renewable = ProductType.autoRenewable.rawValue
        return try await session.all(
            """
            SELECT * FROM transactions WHERE environment = \(bind: environment.rawValue)
                AND product_type = \(bind: renewable) AND purchase_date <= \(bind: end.millisecondsSince1970)
                AND original_transaction_id IN (
                    SELECT original_transaction_id FROM transactions
                    WHERE environment = \(bind: environment.rawValue) AND product_type = \(bind: renewable)
                        AND purchase_date <= \(bind: end.millisecondsSince1970)
                        AND (expires_date >= \(bind: start.millisecondsSince1970)
                            OR revocation_date >= \(bind: start.millisecondsSince1970)))
            ORDER BY purchase_date, id
            """
        )
        .map(Self.decodeTransaction)
    }

    func deleteTransaction(id: StoreTransaction.ID, environment: StoreEnvironment) async throws -> Int {
        // A restored entry's `transaction_id` is the original purchase it restores, so this one condition takes
        // both the entries that show the transaction and the restores of it.
        try await session.run(
            """
            DELETE FROM queue_entries
            WHERE environment = \(bind: environment.rawValue) AND transaction_id = \(bind: id)
            """
        )
        return try await session.all(
            """
            DELETE FROM transactions WHERE environment = \(bind: environment.rawValue) AND id = \(bind: id)
            RETURNING id
            """
        )
        .count
    }

    func deleteTransactions(accountId: UUID, appId: App.ID, environment: StoreEnvironment) async throws -> Int {
        let owner = Self.ownedBy(accountId, appId, environment)
        try await session.run("DELETE FROM queue_entries WHERE \(owner)")
        try await session.run("DELETE FROM payments WHERE \(owner)")
        try await session.run("DELETE FROM subscriptions WHERE \(owner)")
        return try await session.all("DELETE FROM transactions WHERE \(owner) RETURNING id").count
    }

    static func decodeTransaction(_ row: any SQLRow) throws -> StoreTransaction {
        StoreTransaction(
            id: try row.decode(column: "id", as: Int64.self),
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            accountId: try row.uuid("account_id"),
            productId: try row.decode(column: "product_id", as: String.self),
            productType: try row.enumeration("product_type", as: ProductType.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: Int64.self),
            purchaseDate: try row.date("purchase_date"),
            originalPurchaseDate: try row.date("original_purchase_date"),
            quantity: try row.decode(column: "quantity", as: Int.self),
            priceMinorUnits: try row.decode(column: "price_minor_units", as: Int.self),
            currency: try row.decode(column: "currency", as: String.self),
            storefront: try row.decode(column: "storefront", as: String.self),
            storefrontId: try row.decode(column: "storefront_id", as: Int.self),
            applicationUsername: try row.optional("application_username", as: String.self),
            appAccountToken: try row.optionalUUID("app_account_token"),
            orderId: try row.decode(column: "order_id", as: String.self),
            subscriptionGroupId: try row.optional("subscription_group_id", as: Int64.self),
            webOrderLineItemId: try row.optional("web_order_line_item_id", as: Int64.self),
            expiresDate: try row.optionalDate("expires_date"),
            revocationDate: try row.optionalDate("revocation_date"),
            revocationReason: try row.optional("revocation_reason", as: Int.self),
            revocationType: try row.decodeNil(column: "revocation_type")
                ? nil : row.enumeration("revocation_type", as: RevocationType.self),
            transactionReason: try row.enumeration("transaction_reason", as: TransactionReason.self),
            isUpgraded: try row.decode(column: "is_upgraded", as: Bool.self),
            offer: try decodeOffer(row),
            commitment: try decodeCommitment(row),
            refundedMinorUnits: try row.decode(column: "refunded_minor_units", as: Int.self),
            modifiedAt: try row.date("modified_at"),
            revision: try row.decode(column: "revision", as: Int64.self),
            signedTransaction: try row.decode(column: "signed_transaction", as: String.self)
        )
    }

    /// The commitment columns of a transaction or subscription row, nil when it is billed up front.
    static func decodeCommitment(_ row: any SQLRow) throws -> TransactionCommitment? {
        guard let number = try row.optional("commitment_period", as: Int.self) else { return nil }
        return TransactionCommitment(
            billingPeriodNumber: number,
            totalBillingPeriods: try row.decode(column: "commitment_periods", as: Int.self),
            expiresDate: try row.date("commitment_expires_at"),
            priceMinorUnits: try row.decode(column: "commitment_price_minor_units", as: Int.self))
    }

    /// The offer columns, nil when the transaction has no offer.
    private static func decodeOffer(_ row: any SQLRow) throws -> AppliedOffer? {
        guard let type = try row.optional("offer_type", as: Int.self) else { return nil }
        guard let offerType = OfferType(rawValue: type),
            let mode = OfferPaymentMode(rawValue: try row.decode(column: "offer_discount_type", as: String.self))
        else { throw StorageError.engine(message: "transaction row has an unknown offer type or discount type") }
        return AppliedOffer(
            type: offerType, identifier: try row.optional("offer_identifier", as: String.self), paymentMode: mode,
            period: try row.optional("offer_period", as: String.self))
    }
}
