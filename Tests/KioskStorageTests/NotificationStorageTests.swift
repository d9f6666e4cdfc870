import Foundation
import KioskCore
import Testing

@testable import KioskStorage

/// The storage contract for the notification outbox: claiming due notifications for delivery and ending them.
/// Each test runs once per engine in `TestEngine.all`.
@Suite("Notification storage contract")
struct NotificationStorageTests {
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
                    appId: Fixtures.app().id, notificationType: "DID_RENEW", subtype: nil, transactionId: nil,
                    originalTransactionId: nil, signedPayload: "signed.payload.\(index)", testToken: nil,
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
