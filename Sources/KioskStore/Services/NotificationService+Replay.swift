import Foundation
import KioskCore
import KioskProtocol
import KioskStorage

/// Notifications on demand: an app's latest ones with their delivery state, and a replay of one.
extension NotificationService {
    /// How many notifications ``notifications(bundleId:environment:)`` lists.
    static let listLimit = 100

    /// The app's latest notifications in `environment`, newest first, with how their delivery stands.
    public func notifications(bundleId: String, environment: StoreEnvironment) async throws
        -> TestNotificationsResponse
    {
        try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            let notifications = try await tx.notifications(
                appId: app.id, environment: environment, limit: Self.listLimit)
            let attempts = Dictionary(
                grouping: try await tx.notificationAttempts(uuids: notifications.map(\.uuid)), by: \.notificationUUID)
            return TestNotificationsResponse(
                notifications: notifications.map { Self.info($0, attempts: attempts[$0.uuid]?.count ?? 0) })
        }
    }

    /// The app's newest `limit` notifications in `environment`, newest first, and every attempt to deliver them.
    public func deliveryLog(bundleId: String, environment: StoreEnvironment, limit: Int) async throws
        -> (notifications: [ServerNotification], attempts: [NotificationAttempt])
    {
        try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            let notifications = try await tx.notifications(appId: app.id, environment: environment, limit: limit)
            return (notifications, try await tx.notificationAttempts(uuids: notifications.map(\.uuid)))
        }
    }

    /// Sends the notification's signed payload again now to every URL of its environment and records the
    /// attempts; one that reaches every URL makes a failed notification delivered. Its retry schedule is kept.
    public func resend(bundleId: String, uuid: String) async throws -> TestNotificationInfo {
        let (notification, app, earlier) = try await database.transaction { tx in
            let app = try await CatalogService.requireApp(bundleId, in: tx)
            guard let notification = try await tx.notification(uuid: uuid.lowercased()), notification.appId == app.id
            else {
                throw KioskError(
                    .notificationNotFound, "The app \(bundleId) has no notification \(uuid).",
                    field: "notificationUUID", fix: "List them with `kiosk notifications list --app \(bundleId)`.")
            }
            return (notification, app, try await tx.notificationAttempts(uuids: [notification.uuid]))
        }
        let urls = app.notificationURLs(for: notification.environment)
        guard !urls.isEmpty else {
            throw KioskError(
                .noNotificationUrl,
                "The app \(bundleId) has no \(notification.environment.rawValue) notification URL to send it to.",
                field: "notificationUUID",
                fix:
                    "Set one with `kiosk apps update \(bundleId) --\(notification.environment.rawValue)-notification-url URL`."
            )
        }
        // One round at a time: a replay and a scheduled attempt of the same notification never interleave.
        let round = rounds[notification.environment]!
        await round.acquire()
        defer { round.release() }
        let attempts = try await post(
            notification, to: urls, at: clocks.now(notification.environment), after: earlier)
        let answered = Set((earlier + attempts).filter { $0.result == .success }.map(\.url))
        let updated = try await database.transaction { [attempts] tx -> ServerNotification in
            for attempt in attempts { try await tx.insertNotificationAttempt(attempt) }
            guard var current = try await tx.notification(uuid: notification.uuid) else { return notification }
            if current.state != .delivered, urls.allSatisfy(answered.contains) {
                current.state = .delivered
                current.nextAttemptAt = nil
                try await tx.updateNotificationState(
                    uuid: current.uuid, state: .delivered, nextAttemptAt: nil, attemptCount: current.attemptCount)
            }
            return current
        }
        logFailures(attempts, of: notification, next: updated.nextAttemptAt)
        metrics.attempted(attempts, environment: notification.environment)
        return Self.info(updated, attempts: earlier.count + attempts.count)
    }

    static func info(_ notification: ServerNotification, attempts: Int) -> TestNotificationInfo {
        TestNotificationInfo(
            notificationUUID: notification.uuid, environment: notification.environment.rawValue,
            notificationType: notification.notificationType, subtype: notification.subtype,
            transactionId: notification.transactionId.map(String.init), state: notification.state.rawValue,
            attempts: attempts, nextAttemptDate: notification.nextAttemptAt?.millisecondsSince1970,
            createdDate: notification.createdAt.millisecondsSince1970)
    }
}
