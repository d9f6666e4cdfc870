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
            var rows: [[String: Any]] = []
            if let bundleId {
                let (notifications, attempts) = try await self.notifications.deliveryLog(
                    bundleId: bundleId, environment: environment, limit: 200)
                let attemptsByNotification = Dictionary(grouping: attempts, by: \.notificationUUID)
                for notification in notifications where type.isEmpty || notification.notificationType.rawValue == type {
                    var row = Self.notificationRow(notification)
                    row["deliveries"] = (attemptsByNotification[notification.uuid] ?? []).map { attempt in
                        [
                            "at": Self.time(attempt.attemptedAt), "url": attempt.url, "result": attempt.result.rawValue,
                            "status": attempt.httpStatus.map(String.init) ?? "—",
                        ]
                    }
                    rows.append(row)
                }
            }
            return renderer.page(
                "notifications", title: "Notifications", section: "Notifications",
                values: [
                    "apps": apps.map { ["bundleId": $0.bundleId, "selected": $0.bundleId == bundleId] },
                    "environments": StoreEnvironment.allCases.map {
                        ["value": $0.rawValue, "selected": $0 == environment]
                    },
                    "type": type, "bundleId": bundleId ?? "", "environment": environment.rawValue,
                    "notifications": rows, "empty": rows.isEmpty,
                ], session: context.consoleSession)
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
