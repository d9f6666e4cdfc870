import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Payments, keyed by id and, per account and app, by the client's idempotency key.
extension SQLStorageTransaction {
    func insertPayment(_ payment: Payment) async throws {
        try await session.run(
            """
            INSERT INTO payments (id, environment, account_id, app_id, idempotency_key, product_id, quantity,
                application_username, app_account_token, state, transaction_id, error_code, error_reason,
                created_at, updated_at, billing_plan)
            VALUES (\(bind: Self.text(payment.id)), \(bind: payment.environment.rawValue),
                \(bind: Self.text(payment.accountId)), \(bind: payment.appId), \(bind: payment.idempotencyKey),
                \(bind: payment.productId), \(bind: payment.quantity), \(bind: payment.applicationUsername),
                \(bind: payment.appAccountToken.map(Self.text)), \(bind: payment.state.rawValue),
                \(bind: payment.transactionId), \(bind: payment.errorCode), \(bind: payment.errorReason?.rawValue),
                \(bind: payment.createdAt.millisecondsSince1970), \(bind: payment.updatedAt.millisecondsSince1970),
                \(bind: payment.billingPlan?.rawValue))
            """
        )
    }

    func updatePayment(_ payment: Payment) async throws {
        let row = try await session.first(
            """
            UPDATE payments SET environment = \(bind: payment.environment.rawValue),
                account_id = \(bind: Self.text(payment.accountId)), app_id = \(bind: payment.appId),
                idempotency_key = \(bind: payment.idempotencyKey), product_id = \(bind: payment.productId),
                quantity = \(bind: payment.quantity), application_username = \(bind: payment.applicationUsername),
                app_account_token = \(bind: payment.appAccountToken.map(Self.text)),
                state = \(bind: payment.state.rawValue), transaction_id = \(bind: payment.transactionId),
                error_code = \(bind: payment.errorCode), error_reason = \(bind: payment.errorReason?.rawValue),
                created_at = \(bind: payment.createdAt.millisecondsSince1970),
                updated_at = \(bind: payment.updatedAt.millisecondsSince1970),
                billing_plan = \(bind: payment.billingPlan?.rawValue)
            WHERE id = \(bind: Self.text(payment.id))
            RETURNING id
            """
        )
        try requireUpdated(row, "payment \(payment.id)")
    }

    func payment(id: Payment.ID) async throws -> Payment? {
        try await session.first("SELECT * FROM payments WHERE id = \(bind: Self.text(id))").map(Self.decodePayment)
    }

    func payment(accountId: UUID, appId: App.ID, idempotencyKey: String) async throws -> Payment? {
        try await session.first(
            """
            SELECT * FROM payments
            WHERE account_id = \(bind: Self.text(accountId)) AND app_id = \(bind: appId)
                AND idempotency_key = \(bind: idempotencyKey)
            """
        )
        .map(Self.decodePayment)
    }

    func payments(appId: App.ID, environment: StoreEnvironment, accountId: UUID?, state: PaymentState?)
        async throws -> [Payment]
    {
        var filter: SQLQueryString = "app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)"
        if let accountId { filter += " AND account_id = \(bind: Self.text(accountId))" }
        if let state { filter += " AND state = \(bind: state.rawValue)" }
        return try await session.all("SELECT * FROM payments WHERE \(filter) ORDER BY created_at, id")
            .map(Self.decodePayment)
            .sorted { ($0.createdAt, Self.text($0.id)) < ($1.createdAt, Self.text($1.id)) }
    }

    private static func decodePayment(_ row: any SQLRow) throws -> Payment {
        Payment(
            id: try row.uuid("id"),
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            accountId: try row.uuid("account_id"),
            appId: try row.decode(column: "app_id", as: Int64.self),
            idempotencyKey: try row.optional("idempotency_key", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            quantity: try row.decode(column: "quantity", as: Int.self),
            applicationUsername: try row.optional("application_username", as: String.self),
            appAccountToken: try row.optionalUUID("app_account_token"),
            state: try row.enumeration("state", as: PaymentState.self),
            transactionId: try row.optional("transaction_id", as: Int64.self),
            errorCode: try row.optional("error_code", as: Int.self),
            errorReason: try row.decodeNil(column: "error_reason")
                ? nil : row.enumeration("error_reason", as: ErrorCode.self),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"),
            billingPlan: try row.decodeNil(column: "billing_plan")
                ? nil : row.enumeration("billing_plan", as: BillingPlanType.self)
        )
    }
}
