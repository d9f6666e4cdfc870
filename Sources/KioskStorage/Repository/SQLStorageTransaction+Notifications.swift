import Foundation
import KioskCore
import KioskSQL
import SQLKit

/// Server notifications and their delivery attempts; renewal-date extension requests and the extensions each
/// subscription got.
extension SQLStorageTransaction {
    func insertNotifications(_ notifications: [ServerNotification]) async throws {
        try await insert(
            notifications,
            into: """
                notifications (uuid, environment, app_id, notification_type, subtype, transaction_id,
                    original_transaction_id, signed_payload, payload, test_token, state, next_attempt_at,
                    attempt_count, created_at)
                """
        ) { notification -> SQLQueryString in
            """
            (\(bind: notification.uuid), \(bind: notification.environment.rawValue), \(bind: notification.appId),
                \(bind: notification.notificationType.rawValue), \(bind: notification.subtype?.rawValue),
                \(bind: notification.transactionId), \(bind: notification.originalTransactionId),
                '', \(bind: notification.payload), \(bind: notification.testToken),
                \(bind: notification.state.rawValue), \(bind: notification.nextAttemptAt?.millisecondsSince1970),
                \(bind: notification.attemptCount), \(bind: notification.createdAt.millisecondsSince1970))
            """
        }
    }

    /// The pending state as an SQL literal: the due index holds only pending notifications, and an engine uses it
    /// only for a query that names the state itself (migration 24).
    static let pendingNotification: SQLQueryString = "\(unsafeRaw: "'\(ServerNotification.State.pending.rawValue)'")"

    func notification(uuid: String) async throws -> ServerNotification? {
        try await session.first("SELECT * FROM notifications WHERE uuid = \(bind: uuid)").map(Self.decodeNotification)
    }

    func notification(testToken: String, appId: App.ID, environment: StoreEnvironment) async throws
        -> ServerNotification?
    {
        try await session.first(
            """
            SELECT * FROM notifications WHERE test_token = \(bind: testToken) AND app_id = \(bind: appId)
                AND environment = \(bind: environment.rawValue)
            """
        )
        .map(Self.decodeNotification)
    }

    func updateNotificationState(
        uuid: String, state: ServerNotification.State, nextAttemptAt: Date?, attemptCount: Int
    ) async throws {
        let row = try await session.first(
            """
            UPDATE notifications SET state = \(bind: state.rawValue),
                next_attempt_at = \(bind: nextAttemptAt?.millisecondsSince1970), attempt_count = \(bind: attemptCount),
                leased_until = NULL
            WHERE uuid = \(bind: uuid) RETURNING uuid
            """
        )
        try requireUpdated(row, "notification \(uuid)")
    }

    func endNotifications(uuids: [String], in state: ServerNotification.State) async throws {
        guard !uuids.isEmpty else { return }
        try await session.run(
            """
            UPDATE notifications SET state = \(bind: state.rawValue), next_attempt_at = NULL, leased_until = NULL
            WHERE uuid IN (\(binds: uuids))
            """
        )
    }

    func claimDueNotifications(
        environment: StoreEnvironment, dueBy: Date, now: Date, leaseUntil: Date, limit: Int
    ) async throws -> [ServerNotification] {
        // As in claimDueSubscriptions: PostgreSQL replicas lock what they take and skip what another holds; the
        // lease then keeps the rows theirs after this transaction, while they POST.
        let locking: SQLQueryString = session.sql.dialect.name == "postgresql" ? " FOR UPDATE SKIP LOCKED" : ""
        let claimed = try await session.all(
            """
            SELECT * FROM notifications WHERE environment = \(bind: environment.rawValue)
                AND state = \(Self.pendingNotification)
                AND next_attempt_at IS NOT NULL AND next_attempt_at <= \(bind: dueBy.millisecondsSince1970)
                AND (leased_until IS NULL OR leased_until <= \(bind: now.millisecondsSince1970))
            ORDER BY next_attempt_at, uuid
            LIMIT \(bind: limit)\(locking)
            """
        )
        .map(Self.decodeNotification)
        guard !claimed.isEmpty else { return [] }
        try await session.run(
            """
            UPDATE notifications SET leased_until = \(bind: leaseUntil.millisecondsSince1970)
            WHERE uuid IN (\(binds: claimed.map(\.uuid)))
            """
        )
        return claimed
    }

    func notifications(appId: App.ID, environment: StoreEnvironment, limit: Int) async throws -> [ServerNotification] {
        try await session.all(
            """
            SELECT * FROM notifications WHERE app_id = \(bind: appId) AND environment = \(bind: environment.rawValue)
            ORDER BY created_at DESC, uuid DESC LIMIT \(bind: limit)
            """
        )
        .map(Self.decodeNotification)
    }

    func notifications(_ query: NotificationHistoryQuery) async throws -> [ServerNotification] {
        var conditions: [SQLQueryString] = [
            "environment = \(bind: query.environment.rawValue)", "app_id = \(bind: query.appId)",
            "created_at >= \(bind: query.start.millisecondsSince1970)",
            "created_at < \(bind: query.end.millisecondsSince1970)",
        ]
        if let type = query.notificationType { conditions.append("notification_type = \(bind: type.rawValue)") }
        if let subtype = query.subtype { conditions.append("subtype = \(bind: subtype.rawValue)") }
        if let original = query.originalTransactionId {
            conditions.append("original_transaction_id = \(bind: original)")
        }
        if query.onlyFailures {
            conditions.append("state <> \(bind: ServerNotification.State.delivered.rawValue)")
        }
        if let after = query.after {
            let createdAt = after.createdAt.millisecondsSince1970
            conditions.append(
                "(created_at > \(bind: createdAt) OR (created_at = \(bind: createdAt) AND uuid > \(bind: after.uuid)))")
        }
        return try await session.all(
            """
            SELECT * FROM notifications WHERE \(conditions.joined(separator: " AND "))
            ORDER BY created_at, uuid LIMIT \(bind: query.limit)
            """
        )
        .map(Self.decodeNotification)
    }

    func insertNotificationAttempt(_ attempt: NotificationAttempt) async throws {
        try await session.run(
            """
            INSERT INTO notification_attempts (notification_uuid, attempt, url, attempted_at, result, http_status)
            VALUES (\(bind: attempt.notificationUUID), \(bind: attempt.attempt), \(bind: attempt.url),
                \(bind: attempt.attemptedAt.millisecondsSince1970), \(bind: attempt.result.rawValue),
                \(bind: attempt.httpStatus))
            """
        )
    }

    func notificationAttempts(uuids: [String]) async throws -> [NotificationAttempt] {
        guard !uuids.isEmpty else { return [] }
        let list = uuids.map { "\(bind: $0)" as SQLQueryString }.joined(separator: ", ")
        return try await session.all(
            """
            SELECT * FROM notification_attempts WHERE notification_uuid IN (\(list))
            ORDER BY attempted_at, attempt, url
            """
        )
        .map { row in
            NotificationAttempt(
                notificationUUID: try row.decode(column: "notification_uuid", as: String.self),
                attempt: try row.decode(column: "attempt", as: Int.self),
                url: try row.decode(column: "url", as: String.self), attemptedAt: try row.date("attempted_at"),
                result: try row.enumeration("result", as: NotificationAttempt.Result.self),
                httpStatus: try row.optional("http_status", as: Int.self))
        }
    }

    func insertRenewalExtensionRequest(_ request: RenewalExtensionRequest) async throws {
        try await session.run(
            """
            INSERT INTO renewal_extensions (environment, app_id, request_identifier, product_id,
                original_transaction_id, extend_by_days, reason_code, storefront_country_codes, created_at,
                completed_at, succeeded_count, failed_count, web_order_line_item_id, effective_date)
            VALUES (\(bind: request.environment.rawValue), \(bind: request.appId), \(bind: request.requestIdentifier),
                \(bind: request.productId), \(bind: request.originalTransactionId), \(bind: request.extendByDays),
                \(bind: request.reasonCode), \(bind: request.storefrontCountryCodes?.joined(separator: ",")),
                \(bind: request.createdAt.millisecondsSince1970), \(bind: request.completedAt?.millisecondsSince1970),
                \(bind: request.succeededCount), \(bind: request.failedCount), \(bind: request.webOrderLineItemId),
                \(bind: request.effectiveDate?.millisecondsSince1970))
            """
        )
    }

    func updateRenewalExtensionRequest(_ request: RenewalExtensionRequest) async throws {
        let row = try await session.first(
            """
            UPDATE renewal_extensions SET completed_at = \(bind: request.completedAt?.millisecondsSince1970),
                succeeded_count = \(bind: request.succeededCount), failed_count = \(bind: request.failedCount),
                web_order_line_item_id = \(bind: request.webOrderLineItemId),
                effective_date = \(bind: request.effectiveDate?.millisecondsSince1970)
            WHERE environment = \(bind: request.environment.rawValue) AND app_id = \(bind: request.appId)
                AND request_identifier = \(bind: request.requestIdentifier)
            RETURNING request_identifier
            """
        )
        try requireUpdated(row, "renewal extension request \(request.requestIdentifier)")
    }

    func renewalExtensionRequest(requestIdentifier: String, appId: App.ID, environment: StoreEnvironment)
        async throws -> RenewalExtensionRequest?
    {
        try await session.first(
            """
            SELECT * FROM renewal_extensions WHERE environment = \(bind: environment.rawValue)
                AND app_id = \(bind: appId) AND request_identifier = \(bind: requestIdentifier)
            """
        )
        .map { row in
            RenewalExtensionRequest(
                environment: try row.enumeration("environment", as: StoreEnvironment.self),
                appId: try row.decode(column: "app_id", as: Int64.self),
                requestIdentifier: try row.decode(column: "request_identifier", as: String.self),
                productId: try row.optional("product_id", as: String.self),
                originalTransactionId: try row.optional("original_transaction_id", as: Int64.self),
                extendByDays: try row.decode(column: "extend_by_days", as: Int.self),
                reasonCode: try row.decode(column: "reason_code", as: Int.self),
                storefrontCountryCodes: try row.optional("storefront_country_codes", as: String.self)
                    .map { $0.split(separator: ",").map(String.init) },
                createdAt: try row.date("created_at"), completedAt: try row.optionalDate("completed_at"),
                succeededCount: try row.decode(column: "succeeded_count", as: Int.self),
                failedCount: try row.decode(column: "failed_count", as: Int.self),
                webOrderLineItemId: try row.optional("web_order_line_item_id", as: Int64.self),
                effectiveDate: try row.optionalDate("effective_date"))
        }
    }

    func insertSubscriptionExtension(
        originalTransactionId: Int64, environment: StoreEnvironment, requestIdentifier: String, extendByDays: Int,
        at date: Date
    ) async throws {
        try await session.run(
            """
            INSERT INTO subscription_extensions (environment, original_transaction_id, request_identifier,
                extend_by_days, extended_at)
            VALUES (\(bind: environment.rawValue), \(bind: originalTransactionId), \(bind: requestIdentifier),
                \(bind: extendByDays), \(bind: date.millisecondsSince1970))
            """
        )
    }

    func subscriptionExtensionCount(originalTransactionId: Int64, environment: StoreEnvironment, since: Date)
        async throws -> Int
    {
        let row = try await session.first(
            """
            SELECT COUNT(*) AS count FROM subscription_extensions
            WHERE environment = \(bind: environment.rawValue)
                AND original_transaction_id = \(bind: originalTransactionId)
                AND extended_at >= \(bind: since.millisecondsSince1970)
            """
        )
        return try row?.decode(column: "count", as: Int.self) ?? 0
    }

    func latestSubscriptionTransactions(productId: String, appId: App.ID, environment: StoreEnvironment)
        async throws -> [StoreTransaction]
    {
        let ids = try await session.all(
            """
            SELECT id FROM transactions latest
            WHERE environment = \(bind: environment.rawValue) AND app_id = \(bind: appId)
                AND product_id = \(bind: productId)
                AND NOT EXISTS (
                    SELECT 1 FROM transactions later
                    WHERE later.environment = latest.environment
                        AND later.original_transaction_id = latest.original_transaction_id
                        AND (later.purchase_date > latest.purchase_date
                            OR (later.purchase_date = latest.purchase_date AND later.id > latest.id)))
            ORDER BY original_transaction_id
            """
        )
        .map { try $0.decode(column: "id", as: Int64.self) }
        var transactions: [StoreTransaction] = []
        for id in ids {
            if let transaction = try await transaction(id: id, environment: environment) {
                transactions.append(transaction)
            }
        }
        return transactions
    }

    /// The payload of a notification stored before migration 26, read out of the JWS it was stored as.
    private static func legacyPayload(_ row: any SQLRow) throws -> String {
        let signed = try row.decode(column: "signed_payload", as: String.self)
        guard let payload = JWSPayload.decode(signed) else {
            throw StorageError.engine(message: "a notification's stored JWS has no payload")
        }
        return String(decoding: payload, as: UTF8.self)
    }

    private static func decodeNotification(_ row: any SQLRow) throws -> ServerNotification {
        ServerNotification(
            uuid: try row.decode(column: "uuid", as: String.self),
            environment: try row.enumeration("environment", as: StoreEnvironment.self),
            appId: try row.decode(column: "app_id", as: Int64.self),
            notificationType: try row.enumeration("notification_type", as: NotificationType.self),
            subtype: try row.decodeNil(column: "subtype")
                ? nil : row.enumeration("subtype", as: NotificationSubtype.self),
            transactionId: try row.optional("transaction_id", as: Int64.self),
            originalTransactionId: try row.optional("original_transaction_id", as: Int64.self),
            payload: try row.optional("payload", as: String.self) ?? legacyPayload(row),
            testToken: try row.optional("test_token", as: String.self),
            state: try row.enumeration("state", as: ServerNotification.State.self),
            nextAttemptAt: try row.optionalDate("next_attempt_at"),
            attemptCount: try row.decode(column: "attempt_count", as: Int.self), createdAt: try row.date("created_at"))
    }
}
