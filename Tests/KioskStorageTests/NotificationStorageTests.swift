import Foundation
import KioskCore
import Testing

@testable import KioskSQL
@testable import KioskStorage

/// The storage contract for the notification outbox: claiming due notifications for delivery and ending them.
/// Each test runs once per engine in `TestEngine.all`.
@Suite("Notification storage contract")
struct NotificationStorageTests {
    @Test(arguments: TestEngine.all)
    func backlogCountsPendingNotificationsOfOneEnvironment(engine: TestEngine) async throws {
        // Proves `/metrics`' backlog: only pending notifications count, per environment, with the oldest's creation;
        // an environment with none answers zero and no date.
        try await engine.withDatabase { database, _ in
            let start = Fixtures.created
            let rows: [(String, StoreEnvironment, ServerNotification.State, Double)] = [
                ("1", .sandbox, .pending, 30), ("2", .sandbox, .pending, 10), ("3", .sandbox, .delivered, 0),
                ("4", .sandbox, .failed, 5), ("5", .production, .delivered, 0),
            ]
            try await database.transaction { tx in
                try await tx.insertApp(Fixtures.app())
                for (id, environment, state, offset) in rows {
                    try await tx.insertNotification(
                        ServerNotification(
                            uuid: "00000000-0000-0000-0000-00000000010\(id)", environment: environment,
                            appId: Fixtures.app().id, notificationType: .refund, subtype: nil, transactionId: nil,
                            originalTransactionId: nil, payload: "{}", testToken: nil, state: state,
                            nextAttemptAt: state == .pending ? start : nil, attemptCount: 0,
                            createdAt: start + offset))
                }
            }
            let sandbox = try await database.transaction { try await $0.notificationBacklog(environment: .sandbox) }
            #expect(sandbox.count == 2 && sandbox.oldest == start + 10)
            let production = try await database.transaction {
                try await $0.notificationBacklog(environment: .production)
            }
            #expect(production.count == 0 && production.oldest == nil)
            #expect(
                try await database.transaction { try await $0.earliestDueSubscription(environment: .sandbox) } == nil)
        }
    }

    @Test
    func notificationsStoredSignedBeforeMigration26ReadTheirPayloadOutOfTheirJWS() async throws {
        // Proves a notification stored before migration 26 (its JWS in `signed_payload`, no `payload`) reads back with
        // the JSON its JWS signed, which delivery and the history then sign again. SQLite only: the DDL is one text for
        // both engines, and only SQLite can be written here the way an older store wrote it.
        let (url, directory) = try TestEngine.newSQLiteFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await TestEngine.open(url)
        try await database.transaction { try await $0.insertApp(Fixtures.app()) }
        try await database.close()

        let uuid = "00000000-0000-0000-0000-000000000026"
        let payload = #"{"notificationType":"REFUND","notificationUUID":"\#(uuid)","signedDate":1,"version":"2.0"}"#
        let encoded = Data(payload.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let older = try await DatabaseOpener.open(url: url, migrations: Migration.all, logger: TestEngine.logger)
        try await older.withSession { session in
            try await session.run(
                """
                INSERT INTO notifications (uuid, environment, app_id, notification_type, signed_payload, state,
                    created_at)
                VALUES (\(bind: uuid), 'sandbox', \(bind: Fixtures.app().id), 'REFUND',
                    \(bind: "eyJhbGciOiJFUzI1NiJ9.\(encoded).c2ln"), 'failed', 0)
                """
            )
        }
        try await older.close()

        let reopened = try await TestEngine.open(url)
        let notification = try await reopened.transaction { try await $0.notification(uuid: uuid) }
        try await reopened.close()
        #expect(notification?.payload == payload)
    }

    @Test(arguments: TestEngine.all)
    func claimLeasesEveryRowAndEndingReleasesThem(engine: TestEngine) async throws {
        // Proves one claim leases all it returns (a second claim before the lease ends gets none of them), the
        // environment and due time limit it, and ending several in one statement sets their state, clears their
        // schedule and lease and keeps their attempt counts.
        try await engine.withDatabase { database, _ in
            let due = Fixtures.created
            let notifications = (0..<3).map { index in
                ServerNotification(
                    uuid: "00000000-0000-0000-0000-00000000000\(index)", environment: .sandbox,
                    appId: Fixtures.app().id, notificationType: .didRenew, subtype: nil, transactionId: nil,
                    originalTransactionId: nil, payload: "{\"index\":\(index)}", testToken: nil,
                    state: .pending, nextAttemptAt: due, attemptCount: index, createdAt: due)
            }
            var later = notifications[0]
            later.uuid = "00000000-0000-0000-0000-000000000009"
            later.nextAttemptAt = due + 60
            var production = notifications[0]
            production.uuid = "00000000-0000-0000-0000-000000000008"
            production.environment = .production
            let inserted = notifications + [later, production]
            try await database.transaction {
                try await $0.insertApp(Fixtures.app())
                for notification in inserted { try await $0.insertNotification(notification) }
            }

            let claimed = try await database.transaction {
                try await $0.claimDueNotifications(
                    environment: .sandbox, dueBy: due, now: due, leaseUntil: due + 120, limit: 10)
            }
            #expect(claimed.map(\.uuid) == notifications.map(\.uuid))
            let again = try await database.transaction {
                try await $0.claimDueNotifications(
                    environment: .sandbox, dueBy: due + 60, now: due + 1, leaseUntil: due + 121, limit: 10)
            }
            #expect(again.map(\.uuid) == [inserted[3].uuid])

            try await database.transaction {
                try await $0.endNotifications(uuids: claimed.map(\.uuid), in: .unconfigured)
                try await $0.endNotifications(uuids: [], in: .failed)
            }
            for original in notifications {
                let stored = try #require(
                    try await database.transaction { try await $0.notification(uuid: original.uuid) })
                #expect(stored.state == .unconfigured)
                #expect(stored.nextAttemptAt == nil)
                #expect(stored.attemptCount == original.attemptCount)
            }
            // Once every lease has run out, only the row still pending is claimed again: ended rows never are.
            let afterLeases = try await database.transaction {
                try await $0.claimDueNotifications(
                    environment: .sandbox, dueBy: due + 3_600, now: due + 3_600, leaseUntil: due + 3_720, limit: 10)
            }
            #expect(afterLeases.map(\.uuid) == [inserted[3].uuid])
        }
    }
}
