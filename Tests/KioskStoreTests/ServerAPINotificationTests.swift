import Foundation
import KioskCore
import KioskSigning
import KioskTesting
import Testing

/// Test notifications, their delivery to a live receiver and notification history, over HTTP on both engines.
@Suite struct ServerAPINotificationTests {
    /// A test notification reaches the sandbox URL signed by the sandbox chain and reports SUCCESS; one to a
    /// production URL answering 500 reports UNSUCCESSFUL_HTTP_RESPONSE_CODE and shows among the failures; no URL
    /// is 4040007; bad and unknown tokens are refused.
    @Test(arguments: TestDatabase.available)
    func testNotificationsAreDeliveredAndReported(database: TestDatabase) async throws {
        try await withNotificationReceiver { receiver in
            try await withNotificationReceiver(status: .internalServerError) { failing in
                try await withStore(database) { store in
                    try await store.createApp()
                    let key = try await store.createServerAPIKey()
                    let noURL = try await store.serverAPI(.POST, "/inApps/v1/notifications/test", key: key)
                    #expect(noURL.status == 404)
                    #expect(noURL.appleErrorCode == 4_040_007)

                    try await store.setNotificationURLs([receiver.url])
                    let requested = try await store.serverAPI(.POST, "/inApps/v1/notifications/test", key: key)
                    #expect(requested.status == 200, "\(requested.text)")
                    #expect(requested.header("Content-Type") == "application/json")
                    let token = try #require(requested.json["testNotificationToken"] as? String)
                    let parts = token.split(separator: "_")
                    #expect(parts.count == 2 && UUID(uuidString: String(parts[0])) != nil && Int64(parts[1]) != nil)

                    let delivered = try await receiver.payloads(from: store)
                    #expect(delivered.count == 1)
                    let received = try #require(delivered.first)
                    #expect(receiver.contentTypes.first == "application/json")
                    let payload = try await verifiedPayload(
                        received, as: NotificationPayload.self, root: store.built.signing.identity(.sandbox).root,
                        clock: SystemClock())
                    #expect(payload.notificationType == .test)
                    #expect(payload.subtype == nil)
                    #expect(payload.version == "2.0")
                    #expect(payload.notificationUUID == payload.notificationUUID.lowercased())
                    #expect(payload.data?.appAppleId == 1_400_000_001)
                    #expect(payload.data?.bundleId == TestStore.bundleId)
                    #expect(payload.data?.environment == "Sandbox")
                    #expect(payload.data?.bundleVersion == nil)

                    let status = try await Self.attemptsArrive(store, token: token, key: key, sandbox: true)
                    // The status signs the notification afresh: a JWS that verifies, with the payload that was sent.
                    let listed = try #require(status.json["signedPayload"] as? String)
                    #expect(JWSPayload.decode(listed) == JWSPayload.decode(received))
                    _ = try await verifiedPayload(
                        listed, as: NotificationPayload.self, root: store.built.signing.identity(.sandbox).root,
                        clock: SystemClock())
                    let attempts = try #require(status.json["sendAttempts"] as? [[String: Any]])
                    #expect(attempts.count == 1)
                    #expect(attempts.first?["sendAttemptResult"] as? String == "SUCCESS")
                    #expect(attempts.first?["attemptDate"] is NSNumber)

                    let malformed = try await store.serverAPI(.GET, "/inApps/v1/notifications/test/nope", key: key)
                    #expect(malformed.appleErrorCode == 4_000_020)
                    let unknown = try await store.serverAPI(
                        .GET, "/inApps/v1/notifications/test/\(UUID().uuidString.lowercased())_1700000000000", key: key)
                    #expect(unknown.appleErrorCode == 4_040_008)
                    let otherEnvironment = try await store.serverAPI(
                        .GET, "/inApps/v1/notifications/test/\(token)", key: key, sandbox: false)
                    #expect(otherEnvironment.appleErrorCode == 4_040_008)

                    let noProductionURL = try await store.serverAPI(
                        .POST, "/inApps/v1/notifications/test", key: key, sandbox: false)
                    #expect(noProductionURL.appleErrorCode == 4_040_007)
                    try await store.setNotificationURLs([failing.url], sandbox: false)
                    let production = try await store.serverAPI(
                        .POST, "/inApps/v1/notifications/test", key: key, sandbox: false)
                    let productionToken = try #require(production.json["testNotificationToken"] as? String)
                    let failed = try await Self.attemptsArrive(store, token: productionToken, key: key, sandbox: false)
                    #expect(
                        (failed.json["sendAttempts"] as? [[String: Any]])?.first?["sendAttemptResult"] as? String
                            == "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
                    let productionPayload = try await verifiedPayload(
                        try #require(failing.payloads.first), as: NotificationPayload.self,
                        root: store.built.signing.identity(.production).root, clock: SystemClock())
                    #expect(productionPayload.data?.environment == "Production")

                    let window: [String: Any] = [
                        "startDate": Date().millisecondsSince1970 - 3_600_000,
                        "endDate": Date().millisecondsSince1970 + 3_600_000, "onlyFailures": true,
                    ]
                    let failures = try await store.serverAPI(
                        .POST, "/inApps/v1/notifications/history", key: key, json: window, sandbox: false)
                    #expect((failures.json["notificationHistory"] as? [Any])?.count == 1, "\(failures.text)")
                    let sandboxFailures = try await store.serverAPI(
                        .POST, "/inApps/v1/notifications/history", key: key, json: window)
                    #expect((sandboxFailures.json["notificationHistory"] as? [Any])?.isEmpty == true)
                }
            }
        }
    }

    /// History pages 20 at a time, oldest first, with a token until the end; filters by type, subtype and
    /// subscription; refuses what Apple refuses.
    @Test(arguments: TestDatabase.available)
    func notificationHistoryPagesOldestFirst(database: TestDatabase) async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withNotificationReceiver { receiver in
            try await withTestStore(engine: database, clock: clock) { store in
                try await store.prepareSubscriptionCatalog()
                try await store.setNotificationURLs([receiver.url])
                let key = try await store.createServerAPIKey()
                let root = store.built.signing.identity(.sandbox).root
                let start = clock.now().millisecondsSince1970
                for _ in 0..<23 {
                    #expect(
                        try await store.inApps(.POST, "/inApps/v1/notifications/test", key: key, clock: clock).status
                            == 200)
                    clock.advance(by: 1)
                }
                let (transactionId, _) = try await store.buyMonthly(clock: clock)
                clock.advance(by: 1)
                let extended = try await store.inApps(
                    .PUT, "/inApps/v1/subscriptions/extend/\(transactionId)", key: key,
                    json: ["extendByDays": 1, "extendReasonCode": 0, "requestIdentifier": "e1"], clock: clock)
                #expect(extended.status == 200)
                // 23 TEST, the purchase's SUBSCRIBED and RENEWAL_EXTENDED.
                #expect(try await receiver.payloads(from: store).count == 25)

                func history(_ body: [String: Any], token: String? = nil) async throws -> TestStore.Answer {
                    var fields: [String: Any] = ["startDate": start, "endDate": clock.now().millisecondsSince1970 + 1]
                    fields.merge(body) { $1 }
                    let query = token.map { "?paginationToken=\($0)" } ?? ""
                    return try await store.inApps(
                        .POST, "/inApps/v1/notifications/history\(query)", key: key, json: fields, clock: clock)
                }
                let first = try await history([:])
                #expect(first.status == 200, "\(first.text)")
                #expect(first.json["hasMore"] as? Bool == true)
                let firstItems = try #require(first.json["notificationHistory"] as? [[String: Any]])
                #expect(firstItems.count == 20)
                let token = try #require(first.json["paginationToken"] as? String)
                let second = try await history([:], token: token)
                #expect(second.json["hasMore"] as? Bool == false)
                #expect(second.json["paginationToken"] == nil)
                let secondItems = try #require(second.json["notificationHistory"] as? [[String: Any]])
                #expect(secondItems.count == 5)
                var signedDates: [Int64] = []
                var types: [String] = []
                for item in firstItems + secondItems {
                    let payload = try await verifiedPayload(
                        try #require(item["signedPayload"] as? String), as: NotificationPayload.self, root: root,
                        clock: clock)
                    signedDates.append(payload.signedDate)
                    types.append(payload.notificationType.rawValue)
                    #expect(
                        (item["sendAttempts"] as? [[String: Any]])?.first?["sendAttemptResult"] as? String == "SUCCESS")
                }
                #expect(signedDates == signedDates.sorted(), "oldest first")
                #expect(types.last == "RENEWAL_EXTENDED")

                let tests = try await history(["notificationType": "TEST"], token: token)
                #expect((tests.json["notificationHistory"] as? [Any])?.count == 3)
                let bySubscription = try await history(["transactionId": transactionId])
                #expect((bySubscription.json["notificationHistory"] as? [Any])?.count == 2)
                let bySubtype = try await history([
                    "notificationType": "RENEWAL_EXTENSION", "notificationSubtype": "SUMMARY",
                ])
                #expect((bySubtype.json["notificationHistory"] as? [Any])?.isEmpty == true)
                let onlyFailures = try await history(["onlyFailures": true])
                #expect((onlyFailures.json["notificationHistory"] as? [Any])?.isEmpty == true)

                let now = clock.now().millisecondsSince1970
                for (body, code) in [
                    (["notificationType": "NOPE"], 4_000_018), (["notificationSubtype": "NOPE"], 4_000_018),
                    (["transactionId": transactionId, "notificationType": "TEST"], 4_000_019),
                    (["startDate": now - 181 * 86_400_000], 4_000_012),
                    (["startDate": now, "endDate": now], 4_000_013),
                    (["startDate": "yesterday"], 4_000_015), (["endDate": "today"], 4_000_016),
                    (["transactionId": "abc"], 4_000_006),
                ] as [([String: Any], Int)] {
                    let refused = try await history(body)
                    #expect(refused.appleErrorCode == code, "\(body): \(refused.text)")
                }
                #expect(try await history([:], token: "garbage").appleErrorCode == 4_000_014)
                let noStart = try await store.inApps(
                    .POST, "/inApps/v1/notifications/history", key: key, json: ["endDate": now], clock: clock)
                #expect(noStart.appleErrorCode == 4_000_015)
                let noEnd = try await store.inApps(
                    .POST, "/inApps/v1/notifications/history", key: key, json: ["startDate": now], clock: clock)
                #expect(noEnd.appleErrorCode == 4_000_016)
            }
        }
    }

    /// The sandbox clock may run days ahead of the real time (`kiosk test clock advance`); a client that knows only
    /// the real time (each of Apple's clients, the merchant's reconciliation with its default 179 days) still reads
    /// the 180 days before it, and no further.
    @Test func notificationHistoryReachesBackFromTheRealTimeWhileTheSandboxClockIsAhead() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))
        try await withTestStore(clock: clock) { store in
            try await store.prepareSubscriptionCatalog()
            let key = try await store.createServerAPIKey()
            let advanced = try await store.request(
                .POST, "/sandbox/test/v1/clock", json: ["action": "advance", "by": "3d"],
                token: .some(store.adminToken))
            #expect(advanced.status == 200, "\(advanced.text)")
            let now = clock.now().millisecondsSince1970
            func history(from start: Int64) async throws -> TestStore.Answer {
                try await store.inApps(
                    .POST, "/inApps/v1/notifications/history", key: key, json: ["startDate": start, "endDate": now],
                    clock: clock)
            }
            let reconciling = try await history(from: now - 179 * 86_400_000)
            #expect(reconciling.status == 200, "\(reconciling.text)")
            #expect(try await history(from: now - 181 * 86_400_000).appleErrorCode == 4_000_012)
        }
    }

    /// The test notification's status once the store has attempted every due notification of its environment.
    static func attemptsArrive(_ store: TestStore, token: String, key: ServerAPIKey, sandbox: Bool) async throws
        -> TestStore.Answer
    {
        await store.built.context.notifications.deliverDue(sandbox ? .sandbox : .production)
        let answer = try await store.serverAPI(
            .GET, "/inApps/v1/notifications/test/\(token)", key: key, sandbox: sandbox)
        #expect(answer.status == 200, "\(answer.text)")
        return answer
    }
}
