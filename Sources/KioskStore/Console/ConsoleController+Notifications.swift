import Foundation
import Hummingbird
import KioskCore

/// The notification delivery log per app and environment, with each notification's attempts and a resend.
extension ConsoleController {
    func addNotificationRoutes(to pages: RouterGroup<KioskRequestContext>) {
        pages.get("notifications") { request, context in
            let query = request.uri.queryParameters
            let apps = try await catalog.apps()
            let bundleId = query.get("app") ?? apps.first?.bundleId
            let environment = StoreEnvironment(rawValue: query.get("environment") ?? "") ?? .sandbox
            let type = query.get("type") ?? ""
            var rows: [NotificationsPage.Notification] = []
            if let bundleId {
                let (notifications, attempts) = try await self.notifications.deliveryLog(
                    bundleId: bundleId, environment: environment, limit: 200)
                let attemptsByNotification = Dictionary(grouping: attempts, by: \.notificationUUID)
                for notification in notifications where type.isEmpty || notification.notificationType.rawValue == type {
                    rows.append(
                        NotificationsPage.Notification(
                            notification,
                            deliveries: (attemptsByNotification[notification.uuid] ?? []).map { attempt in
                                NotificationsPage.Delivery(
                                    at: Self.time(attempt.attemptedAt), url: attempt.url,
                                    result: attempt.result.rawValue, status: attempt.httpStatus.map(String.init) ?? "—")
                            }))
                }
            }
            return renderer.page(
                NotificationsPage(
                    apps: apps.map {
                        NotificationsPage.AppChoice(bundleId: $0.bundleId, selected: $0.bundleId == bundleId)
                    },
                    environments: StoreEnvironment.allCases.map {
                        ConsoleOption(value: $0.rawValue, selected: $0 == environment)
                    },
                    type: type, bundleId: bundleId, notifications: rows, empty: rows.isEmpty),
                title: "Notifications", section: "Notifications", session: context.consoleSession)
        }
        pages.post("notifications/:bundleId/:uuid/resend") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let uuid = try context.parameters.require("uuid")
            return try await action(request, context, audit: "notification.resend") { form in
                let sent = try await notifications.resend(bundleId: bundleId, uuid: uuid)
                return (
                    "\(sent.notificationType) \(uuid)",
                    "/console/notifications?app=\(bundleId)&environment=\(sent.environment.lowercased())"
                )
            }
        }
    }
}

/// The notification delivery log of an app and environment, with each notification's attempts and a resend.
struct NotificationsPage: ConsoleView {
    static let template = "notifications"

    struct AppChoice: Decodable {
        var bundleId: String
        var selected: Bool
    }

    /// A server notification and its delivery attempts (which a customer's page leaves out).
    struct Notification: Decodable {
        var uuid: String
        var type: String
        var subtype: String?
        var state: String
        var attempts: Int
        var created: String
        var nextAttempt: String?
        var transactionId: String?
        var deliveries: [Delivery] = []
    }

    struct Delivery: Decodable {
        var at: String
        var url: String
        var result: String
        /// The HTTP status the server answered, or "—".
        var status: String
    }

    var apps: [AppChoice]
    var environments: [ConsoleOption]
    /// The notification type shown, as typed; empty for every type.
    var type: String
    /// The app shown; nil when the store has none.
    var bundleId: String?
    var notifications: [Notification]
    var empty: Bool
}

extension NotificationsPage.Notification {
    init(_ notification: ServerNotification, deliveries: [NotificationsPage.Delivery] = []) {
        self.init(
            uuid: notification.uuid, type: notification.notificationType.rawValue,
            subtype: notification.subtype?.rawValue, state: notification.state.rawValue,
            // The deliveries listed beside the count are every POST, resends included, which the scheduled
            // attempt count leaves out: the count shown is the one listed.
            attempts: max(notification.attemptCount, deliveries.count),
            created: ConsoleController.time(notification.createdAt),
            nextAttempt: notification.nextAttemptAt.map(ConsoleController.time),
            transactionId: notification.transactionId.map(String.init), deliveries: deliveries)
    }
}
