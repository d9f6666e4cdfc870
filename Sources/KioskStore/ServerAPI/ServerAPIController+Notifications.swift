import Foundation
import Hummingbird
import KioskCore
import KioskProtocol
import KioskStorage

extension ServerAPIController {
    /// Test notification and its status; notification history.
    func addNotificationRoutes(to group: RouterGroup<KioskRequestContext>) {
        group.post("v1/notifications/test") { _, context in
            try await requestTestNotification(context: context)
        }
        group.get("v1/notifications/test/:testNotificationToken") { _, context in
            try await testNotificationStatus(context: context)
        }
        group.post("v1/notifications/history") { request, context in
            try await notificationHistory(request, context: context)
        }
    }

    /// Notifications per history page, as Apple.
    static let notificationHistoryPageSize = 20
    /// How far back notification history reaches, as Apple.
    static let notificationHistoryReach: TimeInterval = 180 * 86_400

    /// `POST /inApps/v1/notifications/test`: sends a `TEST` notification to the app's URL for this environment;
    /// answers `{testNotificationToken: "<uuid>_<milliseconds>"}` at once.
    private func requestTestNotification(context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let now = service.clocks.now(environment)
        let token = UUID().uuidString.lowercased() + "_\(now.millisecondsSince1970)"
        try await service.ledger.commit { tx, effects in
            // The app as it is now: its URLs may have changed since the request was authenticated.
            guard let app = try await tx.app(id: caller.app.id), !app.notificationURLs(for: environment).isEmpty else {
                throw ServerAPIError.serverNotificationURLNotFound
            }
            effects.deliver([
                try await service.notifications.create(
                    NotificationContent(type: "TEST"), app: app, environment: environment, testToken: token, now: now,
                    in: tx)
            ])
        }
        return try ServerAPIAnswer.json(SendTestNotificationResponse(testNotificationToken: token))
    }

    /// `GET /inApps/v1/notifications/test/{token}`: the test notification and its send attempts (none while the
    /// delivery is under way).
    private func testNotificationStatus(context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let token = context.parameters.get("testNotificationToken") ?? ""
        guard Self.isTestNotificationToken(token) else { throw ServerAPIError.invalidTestNotificationToken }
        let found = try await service.database.transaction { tx -> (ServerNotification, [NotificationAttempt])? in
            guard
                let notification = try await tx.notification(
                    testToken: token, appId: caller.app.id, environment: environment)
            else { return nil }
            return (notification, try await tx.notificationAttempts(uuids: [notification.uuid]))
        }
        guard let (notification, attempts) = found else { throw ServerAPIError.testNotificationNotFound }
        return try ServerAPIAnswer.json(
            NotificationHistoryResponseItem(
                signedPayload: notification.signedPayload, sendAttempts: attempts.map(SendAttemptItem.init)))
    }

    /// `<lower- or upper-case UUID>_<decimal milliseconds>`.
    static func isTestNotificationToken(_ token: String) -> Bool {
        let parts = token.split(separator: "_", omittingEmptySubsequences: false)
        return parts.count == 2 && UUID(uuidString: String(parts[0])) != nil && !parts[1].isEmpty
            && parts[1].allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// `POST /inApps/v1/notifications/history?paginationToken=…`: the app's notifications in this environment
    /// created in `[startDate, endDate)`, **oldest first** (a new notification joins the end, so paging is stable
    /// while notifications arrive), 20 a page. `transactionId` (any transaction of the subscription or purchase)
    /// and `notificationType` exclude each other; `onlyFailures` keeps those not delivered, including ones still
    /// being attempted.
    private func notificationHistory(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let body = try await Self.decodeBody(NotificationHistoryRequest.self, request, context: context)
        let now = service.clocks.now(environment)
        guard let start = body.startDate.flatMap(Date.init(checkedMillisecondsSince1970:)) else {
            throw ServerAPIError.invalidStartDate
        }
        guard let end = body.endDate.flatMap(Date.init(checkedMillisecondsSince1970:)) else {
            throw ServerAPIError.invalidEndDate
        }
        // The sandbox clock may run ahead of the real time (`kiosk test clock advance`); a client that knows only
        // the real time, as every client of Apple's API does, may still ask for the 180 days before it.
        let reachedFrom = min(now, service.clocks.base.now())
        guard start >= reachedFrom - Self.notificationHistoryReach else {
            throw ServerAPIError.startDateTooFarInPast
        }
        guard start < end else { throw ServerAPIError.startDateAfterEndDate }
        if let type = body.notificationType, !Self.notificationTypes.contains(type) {
            throw ServerAPIError.invalidNotificationType
        }
        if let subtype = body.notificationSubtype, !Self.notificationSubtypes.contains(subtype) {
            throw ServerAPIError.invalidNotificationType
        }
        if body.transactionId != nil, body.notificationType != nil { throw ServerAPIError.multipleFiltersSupplied }
        let transactionId = try body.transactionId.map { try Self.decimalId($0, else: .invalidTransactionId) }
        var after: NotificationHistoryQuery.Cursor?
        if let token = request.uri.queryParameters.get("paginationToken") {
            guard let cursor = Self.cursor(fromPaginationToken: token) else {
                throw ServerAPIError.invalidPaginationToken
            }
            after = cursor
        }
        let page = try await service.database.transaction {
            [after] tx -> ([ServerNotification], [NotificationAttempt]) in
            var originalTransactionId: Int64?
            if let transactionId {
                guard let transaction = try await tx.transaction(id: transactionId, environment: environment),
                    transaction.appId == caller.app.id
                else { throw ServerAPIError.transactionIdNotFound }
                originalTransactionId = transaction.originalTransactionId
            }
            let notifications = try await tx.notifications(
                NotificationHistoryQuery(
                    environment: environment, appId: caller.app.id, start: start, end: end,
                    notificationType: body.notificationType, subtype: body.notificationSubtype,
                    originalTransactionId: originalTransactionId, onlyFailures: body.onlyFailures ?? false,
                    after: after, limit: Self.notificationHistoryPageSize + 1))
            let shown = Array(notifications.prefix(Self.notificationHistoryPageSize))
            return (notifications, try await tx.notificationAttempts(uuids: shown.map(\.uuid)))
        }
        let (found, attempts) = page
        let shown = found.prefix(Self.notificationHistoryPageSize)
        let hasMore = found.count > shown.count
        let attemptsByUUID = Dictionary(grouping: attempts, by: \.notificationUUID)
        return try ServerAPIAnswer.json(
            NotificationHistoryResponse(
                paginationToken: hasMore ? shown.last.map(Self.paginationToken(after:)) : nil, hasMore: hasMore,
                notificationHistory: shown.map {
                    NotificationHistoryResponseItem(
                        signedPayload: $0.signedPayload,
                        sendAttempts: (attemptsByUUID[$0.uuid] ?? []).map(SendAttemptItem.init))
                }))
    }

    /// An opaque token naming the last notification of a page: base64url of `<milliseconds>:<uuid>`.
    static func paginationToken(after notification: ServerNotification) -> String {
        Data("\(notification.createdAt.millisecondsSince1970):\(notification.uuid)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func cursor(fromPaginationToken token: String) -> NotificationHistoryQuery.Cursor? {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let createdAt = Date(checkedMillisecondsSince1970: parts[0]),
            UUID(uuidString: String(parts[1])) != nil
        else {
            return nil
        }
        return NotificationHistoryQuery.Cursor(createdAt: createdAt, uuid: String(parts[1]))
    }

    /// Apple's `notificationType` values.
    static let notificationTypes: Set<String> = [
        "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED",
        "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED",
        "CONSUMPTION_REQUEST", "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED",
        "EXTERNAL_PURCHASE_TOKEN", "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
    ]

    /// Apple's notification `subtype` values.
    static let notificationSubtypes: Set<String> = [
        "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY",
        "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED", "BILLING_RECOVERY",
        "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED", "CREATED", "ACTIVE_TOKEN_REMINDER",
    ]
}

// MARK: - Wire types

private struct NotificationHistoryRequest: Decodable {
    /// Nil when missing or not a number of milliseconds (4000015 / 4000016, as Apple).
    var startDate: Int64?
    var endDate: Int64?
    var notificationType: String?
    var notificationSubtype: String?
    var transactionId: String?
    var onlyFailures: Bool?

    private enum CodingKeys: String, CodingKey {
        case startDate, endDate, notificationType, notificationSubtype, transactionId, onlyFailures
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        startDate = try? container.decodeIfPresent(Int64.self, forKey: .startDate)
        endDate = try? container.decodeIfPresent(Int64.self, forKey: .endDate)
        notificationType = try container.serverAPIField(String.self, .notificationType, else: .invalidNotificationType)
        notificationSubtype = try container.serverAPIField(
            String.self, .notificationSubtype, else: .invalidNotificationType)
        transactionId = try container.serverAPIField(String.self, .transactionId, else: .invalidTransactionId)
        onlyFailures = try container.decodeIfPresent(Bool.self, forKey: .onlyFailures)
    }
}

extension SendAttemptItem {
    init(_ attempt: NotificationAttempt) {
        self.init(
            attemptDate: attempt.attemptedAt.millisecondsSince1970, sendAttemptResult: attempt.result.rawValue)
    }
}
