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
        let token = try await service.sendTestNotification(caller: try context.requireServerAPICaller())
        return try ServerAPIAnswer.json(SendTestNotificationResponse(testNotificationToken: token))
    }

    /// `GET /inApps/v1/notifications/test/{token}`: the test notification and its send attempts (none while the
    /// delivery is under way).
    private func testNotificationStatus(context: KioskRequestContext) async throws -> Response {
        let caller = try context.requireServerAPICaller()
        let token = context.parameters.get("testNotificationToken") ?? ""
        guard Self.isTestNotificationToken(token) else { throw ServerAPIError.invalidTestNotificationToken }
        return try ServerAPIAnswer.json(try await service.testNotificationStatus(token: token, caller: caller))
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
        let notificationType = try body.notificationType.map {
            guard let type = NotificationType(rawValue: $0) else { throw ServerAPIError.invalidNotificationType }
            return type
        }
        let notificationSubtype = try body.notificationSubtype.map {
            guard let subtype = NotificationSubtype(rawValue: $0) else { throw ServerAPIError.invalidNotificationType }
            return subtype
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
        let query = NotificationHistoryQuery(
            environment: environment, appId: caller.app.id, start: start, end: end,
            notificationType: notificationType, subtype: notificationSubtype, originalTransactionId: nil,
            onlyFailures: body.onlyFailures ?? false, after: after, limit: Self.notificationHistoryPageSize + 1)
        let (found, attempts) = try await service.notificationHistory(
            query, anyTransactionId: transactionId, caller: caller)
        let shown = found.prefix(Self.notificationHistoryPageSize)
        let hasMore = found.count > shown.count
        let attemptsByUUID = Dictionary(grouping: attempts, by: \.notificationUUID)
        return try ServerAPIAnswer.json(
            NotificationHistoryResponse(
                paginationToken: hasMore ? shown.last.map(Self.paginationToken(after:)) : nil, hasMore: hasMore,
                notificationHistory: try shown.map {
                    NotificationHistoryResponseItem(
                        signedPayload: try service.signing.sign($0),
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
