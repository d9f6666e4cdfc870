import Foundation
import KioskCore
import KioskSigning
import KioskStore
import KioskTesting
import Testing

/// Failed notifications are retried on Apple's schedule (1, 12, 24, 48 and 72 hours after the previous attempt),
/// on the sandbox clock for the sandbox, with the same UUID and signed payload, each URL until it answers; an app
/// can turn sandbox retries off. Over HTTP on both engines, against live receivers.
@Suite struct NotificationRetryTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    static let hour: TimeInterval = 3600

    /// A receiver failing for the first 72 sandbox hours gets the notification at +0, +1, +13, +37 and +85 hours
    /// and no more after it answered 200; nothing is sent early; history shows every attempt at its time.
    @Test(arguments: TestDatabase.available)
    func failedNotificationsAreRetriedOnApplesSchedule(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        let recovery = Self.start.addingTimeInterval(72 * Self.hour)
        try await withNotificationReceiver(answering: { clock.now() < recovery ? .internalServerError : .ok }) {
            receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let key = try await Self.prepare(store, urls: [receiver.url])
                let notifications = try await Self.sendTestNotification(store, key: key, clock: clock)
                #expect(receiver.payloads.count == 1)
                let failures = try await Self.history(store, key: key, clock: clock, onlyFailures: true)
                #expect(failures.count == 1)

                var received = 1
                for hours in [1.0, 13, 37, 85] {
                    clock.set(Self.start.addingTimeInterval(hours * Self.hour - 60))
                    await notifications.deliverDue(.sandbox)
                    #expect(receiver.payloads.count == received, "nothing is sent before +\(hours) h")
                    clock.set(Self.start.addingTimeInterval(hours * Self.hour))
                    await notifications.deliverDue(.sandbox)
                    received += 1
                    #expect(receiver.payloads.count == received, "the retry due at +\(hours) h")
                }
                clock.set(Self.start.addingTimeInterval(300 * Self.hour))
                await notifications.deliverDue(.sandbox)
                #expect(receiver.payloads.count == 5, "no retry after the success")
                // Each attempt signs the notification afresh: the payload is the same bytes every time.
                #expect(
                    Set(receiver.payloads.map(JWSPayload.decode)).count == 1, "every attempt sends the same payload")
                #expect(receiver.payloads.allSatisfy { JWSPayload.decode($0) != nil })

                let history = try await Self.history(store, key: key, clock: clock)
                #expect(history.count == 1)
                let sent = try #require(receiver.payloads.first)
                let listed = try #require(history.first?["signedPayload"] as? String)
                #expect(JWSPayload.decode(listed) == JWSPayload.decode(sent))
                let attempts = try #require(history.first?["sendAttempts"] as? [[String: Any]])
                #expect(
                    attempts.compactMap { ($0["attemptDate"] as? NSNumber)?.int64Value }
                        == [0, 1, 13, 37, 85].map {
                            Self.start.addingTimeInterval(Double($0) * Self.hour).millisecondsSince1970
                        })
                #expect(
                    attempts.compactMap { $0["sendAttemptResult"] as? String }
                        == Array(repeating: "UNSUCCESSFUL_HTTP_RESPONSE_CODE", count: 4) + ["SUCCESS"])
                #expect(try await Self.history(store, key: key, clock: clock, onlyFailures: true).isEmpty)
            }
        }
    }

    /// A receiver that never takes the notification gets Apple's whole schedule, the first attempt and five retries
    /// at +1, +13, +37, +85 and +157 hours, none early and none after the last; the notification then stays failed.
    @Test(arguments: TestDatabase.available)
    func retriesEndAfterApplesFifthRetry(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver(status: .serviceUnavailable) { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let key = try await Self.prepare(store, urls: [receiver.url])
                let notifications = try await Self.sendTestNotification(store, key: key, clock: clock)
                #expect(receiver.payloads.count == 1)
                let schedule: [Double] = [0, 1, 13, 37, 85, 157]
                for (index, hours) in schedule.enumerated().dropFirst() {
                    clock.set(Self.start.addingTimeInterval(hours * Self.hour - 60))
                    await notifications.deliverDue(.sandbox)
                    #expect(receiver.payloads.count == index, "nothing is sent before +\(hours) h")
                    clock.set(Self.start.addingTimeInterval(hours * Self.hour))
                    await notifications.deliverDue(.sandbox)
                    #expect(receiver.payloads.count == index + 1, "the retry due at +\(hours) h")
                }
                // 25 days on (the history below reads the last 30).
                clock.set(Self.start.addingTimeInterval(600 * Self.hour))
                await notifications.deliverDue(.sandbox)
                #expect(receiver.payloads.count == 6, "no attempt after the fifth retry")

                let base = "/sandbox/test/v1/apps/\(TestStore.bundleId)/notifications"
                let listed = try await store.request(.GET, base, token: .some(store.adminToken))
                let stored = try #require((listed.json["notifications"] as? [[String: Any]])?.first, "\(listed.text)")
                #expect(stored["state"] as? String == "failed" && stored["attempts"] as? Int == 6, "\(listed.text)")
                let failures = try await Self.history(store, key: key, clock: clock, onlyFailures: true)
                let attempts = try #require(failures.first?["sendAttempts"] as? [[String: Any]], "\(failures)")
                #expect(
                    attempts.compactMap { ($0["attemptDate"] as? NSNumber)?.int64Value }
                        == schedule.map { Self.start.addingTimeInterval($0 * Self.hour).millisecondsSince1970 })
                #expect(
                    attempts.compactMap { $0["sendAttemptResult"] as? String }
                        == Array(repeating: "UNSUCCESSFUL_HTTP_RESPONSE_CODE", count: 6))
            }
        }
    }

    /// A receiver that does not answer within the store's deadline (5 s) is a failed attempt, `TIMED_OUT`, and is
    /// retried on the schedule like any other failure.
    @Test(arguments: TestDatabase.available)
    func aReceiverThatTimesOutIsAFailedAttempt(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let key = try await Self.prepare(store, urls: [receiver.slowURL])
                let notifications = try await Self.sendTestNotification(store, key: key, clock: clock)
                clock.set(Self.start.addingTimeInterval(Self.hour))
                await notifications.deliverDue(.sandbox)
                #expect(receiver.payloads.count == 2, "the notification arrived twice, never answered in time")
                let failures = try await Self.history(store, key: key, clock: clock, onlyFailures: true)
                let attempts = try #require(failures.first?["sendAttempts"] as? [[String: Any]], "\(failures)")
                #expect(
                    attempts.compactMap { ($0["attemptDate"] as? NSNumber)?.int64Value }
                        == [0, 1].map { Self.start.addingTimeInterval($0 * Self.hour).millisecondsSince1970 })
                #expect(attempts.compactMap { $0["sendAttemptResult"] as? String } == ["TIMED_OUT", "TIMED_OUT"])
            }
        }
    }

    /// With sandbox retries off (like Apple's sandbox) a failed notification gets one attempt and stays failed.
    @Test(arguments: TestDatabase.available)
    func sandboxRetriesCanBeTurnedOff(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver(status: .internalServerError) { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let key = try await Self.prepare(store, urls: [receiver.url])
                let off = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)", json: ["sandboxNotificationRetries": false])
                #expect(off.status == 200, "\(off.text)")
                #expect(off.json["sandboxNotificationRetries"] as? Bool == false)
                let notifications = try await Self.sendTestNotification(store, key: key, clock: clock)
                clock.set(Self.start.addingTimeInterval(200 * Self.hour))
                await notifications.deliverDue(.sandbox)
                #expect(receiver.payloads.count == 1)
                let failures = try await Self.history(store, key: key, clock: clock, onlyFailures: true)
                #expect((failures.first?["sendAttempts"] as? [Any])?.count == 1)
            }
        }
    }

    /// Each URL is retried until it answers 2xx; one that took the notification is not sent it again.
    @Test(arguments: TestDatabase.available)
    func eachURLIsRetriedUntilItTakesTheNotification(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        let recovery = Self.start.addingTimeInterval(Self.hour)
        try await withNotificationReceiver { healthy in
            try await withNotificationReceiver(answering: { clock.now() < recovery ? .serviceUnavailable : .ok }) {
                flaky in
                try await withTestStore(engine: database, clock: clock) { store in
                    let key = try await Self.prepare(store, urls: [healthy.url, flaky.url])
                    let requested = try await store.inApps(
                        .POST, "/inApps/v1/notifications/test", key: key, clock: clock)
                    #expect(requested.status == 200, "\(requested.text)")
                    let notifications = store.built.context.notifications
                    await notifications.deliverDue(.sandbox)
                    #expect(healthy.payloads.count == 1 && flaky.payloads.count == 1)
                    clock.set(recovery)
                    await notifications.deliverDue(.sandbox)
                    #expect(healthy.payloads.count == 1, "the URL that answered 200 is not sent it again")
                    #expect(flaky.payloads.count == 2)
                    let history = try await Self.history(store, key: key, clock: clock)
                    #expect(
                        (history.first?["sendAttempts"] as? [[String: Any]])?.compactMap {
                            $0["sendAttemptResult"] as? String
                        }.sorted() == ["SUCCESS", "SUCCESS", "UNSUCCESSFUL_HTTP_RESPONSE_CODE"])
                    #expect(try await Self.history(store, key: key, clock: clock, onlyFailures: true).isEmpty)
                }
            }
        }
    }

    /// A replay sends the same signed payload again now and records it; one that gets through makes a failed
    /// notification delivered. The list shows each notification's delivery; unknown UUIDs are 404.
    @Test(arguments: TestDatabase.available)
    func notificationsCanBeListedAndReplayed(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        let recovery = Self.start.addingTimeInterval(Self.hour)
        try await withNotificationReceiver(answering: { clock.now() < recovery ? .badGateway : .ok }) { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                let key = try await Self.prepare(store, urls: [receiver.url])
                _ = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)", json: ["sandboxNotificationRetries": false])
                let requested = try await store.inApps(.POST, "/inApps/v1/notifications/test", key: key, clock: clock)
                #expect(requested.status == 200, "\(requested.text)")
                await store.built.context.notifications.deliverDue(.sandbox)
                let base = "/sandbox/test/v1/apps/\(TestStore.bundleId)/notifications"
                let listed = try await store.request(.GET, base, token: .some(store.adminToken))
                let first = try #require((listed.json["notifications"] as? [[String: Any]])?.first, "\(listed.text)")
                #expect(first["notificationType"] as? String == "TEST")
                #expect(first["state"] as? String == "failed")
                #expect(first["attempts"] as? Int == 1)
                let uuid = try #require(first["notificationUUID"] as? String)

                clock.set(recovery)
                let resent = try await store.request(.POST, "\(base)/\(uuid)/resend", token: .some(store.adminToken))
                #expect(resent.status == 200, "\(resent.text)")
                #expect(resent.json["state"] as? String == "delivered")
                #expect(resent.json["attempts"] as? Int == 2)
                #expect(receiver.payloads.count == 2 && Set(receiver.payloads.map(JWSPayload.decode)).count == 1)
                let history = try await Self.history(store, key: key, clock: clock)
                #expect(
                    (history.first?["sendAttempts"] as? [[String: Any]])?.compactMap {
                        ($0["attemptDate"] as? NSNumber)?.int64Value
                    } == [Self.start.millisecondsSince1970, recovery.millisecondsSince1970])
                let unknown = try await store.request(
                    .POST, "\(base)/\(UUID().uuidString.lowercased())/resend", token: .some(store.adminToken))
                #expect(unknown.status == 404, "\(unknown.text)")
                #expect(unknown.errorCode == "notification_not_found", "\(unknown.text)")
                let production = try await store.request(
                    .GET, base + "?environment=production", token: .some(store.adminToken))
                #expect((production.json["notifications"] as? [Any])?.isEmpty == true, "\(production.text)")
            }
        }
    }

    /// A notification of an app with no URL for its environment is `unconfigured` from the commit that created it,
    /// with no attempt scheduled: no delivery round has to write that state in a commit of its own. Once a URL is set,
    /// later notifications go out and the earlier one stays as it was.
    @Test(arguments: TestDatabase.available)
    func notificationsWithNowhereToGoAreUnconfiguredAtOnce(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await store.prepareSubscriptionCatalog()
                _ = try await store.buyMonthly(clock: clock)
                let base = "/sandbox/test/v1/apps/\(TestStore.bundleId)/notifications"
                let listed = try await store.request(.GET, base, token: .some(store.adminToken))
                let stored = try #require((listed.json["notifications"] as? [[String: Any]])?.first, "\(listed.text)")
                #expect(stored["notificationType"] as? String == "SUBSCRIBED")
                #expect(stored["state"] as? String == "unconfigured", "\(listed.text)")
                #expect(stored["attempts"] as? Int == 0)

                try await store.setNotificationURLs([receiver.url])
                let key = try await store.createServerAPIKey()
                let second = try await store.inApps(.POST, "/inApps/v1/notifications/test", key: key, clock: clock)
                #expect(second.status == 200, "\(second.text)")
                await store.built.context.notifications.deliverDue(.sandbox)
                let after = try await store.request(.GET, base, token: .some(store.adminToken))
                let states = (after.json["notifications"] as? [[String: Any]] ?? []).compactMap {
                    $0["state"] as? String
                }
                #expect(states.sorted() == ["delivered", "unconfigured"], "\(after.text)")
                #expect(receiver.payloads.count == 1)
            }
        }
    }

    /// A notification URL that answers a redirect is a failed attempt, as at Apple: the store does not follow it (a
    /// followed 307 would re-send the POST to an address no one configured; a 302 would turn it into a GET).
    @Test func aRedirectIsAFailedAttemptNotFollowed() async throws {
        let clock = ManualClock(Self.start)
        try await withNotificationReceiver { receiver in
            try await withTestStore(clock: clock) { store in
                let key = try await Self.prepare(store, urls: [receiver.movedURL])
                let requested = try await store.inApps(.POST, "/inApps/v1/notifications/test", key: key, clock: clock)
                #expect(requested.status == 200, "\(requested.text)")
                await store.built.context.notifications.deliverDue(.sandbox)
                #expect(receiver.payloads.isEmpty, "the redirect was not followed to /notifications")
                let history = try await Self.history(store, key: key, clock: clock, onlyFailures: true)
                let attempts = history.first?["sendAttempts"] as? [[String: Any]] ?? []
                #expect(
                    attempts.compactMap { $0["sendAttemptResult"] as? String } == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE"],
                    "\(history)")
            }
        }
    }

    /// An app with sandbox notification URLs and a Server API key.
    /// Requests Apple's test notification and lets the store make its first attempt; answers the store's
    /// notification service, to make the attempts that fall due later.
    static func sendTestNotification(_ store: TestStore, key: ServerAPIKey, clock: ManualClock) async throws
        -> NotificationService
    {
        let requested = try await store.inApps(.POST, "/inApps/v1/notifications/test", key: key, clock: clock)
        #expect(requested.status == 200, "\(requested.text)")
        let notifications = store.built.context.notifications
        await notifications.deliverDue(.sandbox)
        return notifications
    }

    static func prepare(_ store: TestStore, urls: [String]) async throws -> ServerAPIKey {
        try await store.createApp()
        try await store.setNotificationURLs(urls)
        return try await store.createServerAPIKey()
    }

    /// The sandbox notification history of the last 30 days.
    static func history(_ store: TestStore, key: ServerAPIKey, clock: ManualClock, onlyFailures: Bool = false)
        async throws -> [[String: Any]]
    {
        let now = clock.now().millisecondsSince1970
        let answer = try await store.inApps(
            .POST, "/inApps/v1/notifications/history", key: key,
            json: ["startDate": now - 30 * 86_400_000, "endDate": now + 1, "onlyFailures": onlyFailures], clock: clock)
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(answer.json["notificationHistory"] as? [[String: Any]])
    }
}
