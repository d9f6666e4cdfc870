import Foundation
import Hummingbird
import KioskCore
import KioskProtocol

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
                    environment: environment.rawValue, type: type, bundleId: bundleId, notifications: rows,
                    empty: rows.isEmpty),
                title: "Notifications", section: "Notifications", session: context.consoleSession)
        }
        pages.post("notifications/:bundleId/:uuid/resend") { request, context in
            let bundleId = try context.parameters.require("bundleId")
            let uuid = try context.parameters.require("uuid")
            return try await action(request, context, audit: "notification.resend") { form in
                let sent: TestNotificationInfo
                do {
                    sent = try await notifications.resend(bundleId: bundleId, uuid: uuid)
                } catch let error as KioskError where error.code == .noNotificationUrl {
                    throw ConsoleRefusal(
                        error, fix: "Set a notification URL for the environment, then resend it.",
                        link: Self.notificationURLsForm(bundleId))
                }
                let outcome =
                    switch sent.state {
                    case "delivered": "the app's server accepted it"
                    default: "the app's server did not accept it (\(sent.state))"
                    }
                return ConsoleOutcome(
                    target: "\(sent.notificationType) \(uuid)",
                    redirect: "/console/notifications?app=\(bundleId)&environment=\(sent.environment.lowercased())",
                    notice: "Sent \(sent.notificationType.rawValue) \(uuid) again: \(outcome); \(sent.attempts) "
                        + "attempt\(sent.attempts == 1 ? "" : "s") in all.")
            }
        }
    }

    /// The app page's form that sets its notification URLs.
    static func notificationURLsForm(_ bundleId: String) -> ConsoleNotice.Link {
        ConsoleNotice.Link(path: "/console/apps/\(bundleId)#notification-urls", text: "Set it on the app's page.")
    }

    /// What became of the notification an action made, as a sentence, and the console page that shows its delivery
    /// or sets the URL it lacked: never "sent" when the app has no notification URL.
    static func notificationNotice(
        _ type: NotificationType, state: String?, attempts: Int?, bundleId: String, environment: StoreEnvironment
    ) -> (text: String, link: ConsoleNotice.Link) {
        let log = ConsoleNotice.Link(
            path: "/console/notifications?app=\(bundleId)&environment=\(environment.rawValue)",
            text: "See its delivery.")
        switch state {
        case "unconfigured":
            return (
                "\(type.rawValue) was not sent: \(bundleId) has no \(environment.rawValue) notification URL; once "
                    + "one is set, resend it from Notifications.", notificationURLsForm(bundleId)
            )
        case "delivered":
            return ("The app's server received \(type.rawValue).", log)
        case "failed":
            let count = attempts ?? 0
            return ("\(type.rawValue) did not reach the app's server (\(count) attempt\(count == 1 ? "" : "s")).", log)
        default:
            return ("\(type.rawValue) is on its way to the app's server.", log)
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
    /// The environment shown.
    var environment: String
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
