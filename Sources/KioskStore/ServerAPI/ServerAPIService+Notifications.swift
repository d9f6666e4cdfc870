import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

/// The notification endpoints of the App Store Server API: the test notification and the history. Every lookup is
/// scoped to the caller's app and environment.
extension ServerAPIService {
    /// Sends a `TEST` notification to the app's URLs for the caller's environment and answers its token,
    /// `<uuid>_<milliseconds>`, at once.
    func sendTestNotification(caller: ServerAPICaller) async throws -> String {
        let environment = caller.environment
        let now = clocks.now(environment)
        let token = UUID().uuidString.lowercased() + "_\(now.millisecondsSince1970)"
        try await ledger.commit { tx, effects in
            // The app as it is now: its URLs may have changed since the request was authenticated.
            guard let app = try await tx.app(id: caller.app.id), !app.notificationURLs(for: environment).isEmpty else {
                throw ServerAPIError.serverNotificationURLNotFound
            }
            effects.deliver([
                try await notifications.create(
                    NotificationContent(type: .test), app: app, environment: environment, testToken: token, now: now,
                    in: tx)
            ])
        }
        return token
    }

    /// The test notification `token` names and its send attempts (none while the delivery is under way).
    func testNotificationStatus(token: String, caller: ServerAPICaller) async throws
        -> NotificationHistoryResponseItem
    {
        let found = try await database.transaction { tx -> (ServerNotification, [NotificationAttempt])? in
            guard
                let notification = try await tx.notification(
                    testToken: token, appId: caller.app.id, environment: caller.environment)
            else { return nil }
            return (notification, try await tx.notificationAttempts(uuids: [notification.uuid]))
        }
        guard let (notification, attempts) = found else { throw ServerAPIError.testNotificationNotFound }
        return NotificationHistoryResponseItem(
            signedPayload: try signing.sign(notification), sendAttempts: attempts.map(SendAttemptItem.init))
    }

    /// The notifications `query` finds, only those about the subscription or purchase of `anyTransactionId` when
    /// given, and their delivery attempts.
    func notificationHistory(
        _ query: NotificationHistoryQuery, anyTransactionId transactionId: Int64?, caller: ServerAPICaller
    ) async throws -> (notifications: [ServerNotification], attempts: [NotificationAttempt]) {
        try await database.transaction { tx in
            var query = query
            if let transactionId {
                guard let transaction = try await tx.transaction(id: transactionId, environment: caller.environment),
                    transaction.appId == caller.app.id
                else { throw ServerAPIError.transactionIdNotFound }
                query.originalTransactionId = transaction.originalTransactionId
            }
            let notifications = try await tx.notifications(query)
            return (notifications, try await tx.notificationAttempts(uuids: notifications.map(\.uuid)))
        }
    }
}
