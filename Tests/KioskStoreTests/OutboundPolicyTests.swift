import Foundation
import KioskCore
import KioskSigning
import KioskStore
import KioskTesting
import Testing

/// The operator's outbound policy (`--outbound-urls public-https`): notification and real-time URLs must be https
/// to public addresses. It is checked when a URL is set and again before each request, on the addresses the host
/// resolves to then, so a URL set before the policy was turned on cannot reach the operator's network either.
/// Development's default (`any`) keeps loopback URLs working.
@Suite struct OutboundPolicyTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// Loopback, private, link-local, shared, documentation and plain-http URLs are refused with the reason; a public
    /// https URL is kept.
    @Test(arguments: TestDatabase.available)
    func internalAddressesCannotBeSet(database: TestDatabase) async throws {
        try await withTestStore(engine: database, configure: { $0.outboundURLs = .publicHTTPS }) { store in
            try await store.createApp()
            let refused: [(url: String, reason: String)] = [
                ("http://merchant.example/apple", "sends only to https URLs"),
                ("https://127.0.0.1:8090/apple", "127.0.0.1 is not a public address"),
                ("https://localhost/apple", "localhost is this machine"),
                ("https://10.1.2.3/apple", "10.1.2.3 is not a public address"),
                ("https://169.254.169.254/latest/meta-data", "169.254.169.254 is not a public address"),
                ("https://[::1]:8443/apple", "::1 is not a public address"),
                ("https://[::ffff:192.168.1.1]/apple", "is not a public address"),
                ("https://100.64.0.1/apple", "100.64.0.1 is not a public address"),
            ]
            for (url, reason) in refused {
                let answer = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)", json: ["productionNotificationURLs": [url]])
                #expect(answer.status == 400, "\(url): \(answer.text)")
                let error = answer.json["error"] as? [String: Any]
                #expect(error?["code"] as? String == "invalid_notification_url", "\(url): \(answer.text)")
                #expect((error?["message"] as? String)?.contains(reason) == true, "\(url): \(answer.text)")
                #expect(error?["field"] as? String == "productionNotificationURLs[0]", "\(answer.text)")
            }
            let app = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)")
            #expect(app.json["productionNotificationURLs"] as? [String] == [], "nothing refused was kept: \(app.text)")
            let kept = try await store.request(
                .PATCH, "/admin/v1/apps/\(TestStore.bundleId)",
                json: ["productionNotificationURLs": ["https://merchant.example/apple", "https://8.8.8.8/apple"]])
            #expect(kept.status == 200, "\(kept.text)")
            #expect(
                kept.json["productionNotificationURLs"] as? [String] == [
                    "https://merchant.example/apple", "https://8.8.8.8/apple",
                ])
        }
    }

    /// A notification URL on loopback set while the policy was `any` gets no request once the store runs with
    /// `public-https`: the attempt is recorded as Apple's `OTHER`, and the receiver hears nothing.
    @Test(arguments: TestDatabase.available)
    func aURLSetBeforeThePolicyIsCheckedAtDelivery(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-outbound-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await database.withFreshDatabase { databaseURL in
            try await Self.deliverAfterThePolicyChanged(databaseURL: databaseURL, directory: directory, clock: clock)
        }
    }

    static func deliverAfterThePolicyChanged(databaseURL: String?, directory: URL, clock: ManualClock) async throws {
        try await withNotificationReceiver(status: .ok) { receiver in
            let key = try await withTestStore(databaseURL: databaseURL, clock: clock, dataDirectory: directory) {
                store in
                try await store.createApp()
                try await store.setNotificationURLs([receiver.url])
                return try await store.createServerAPIKey()
            }
            try await withTestStore(
                databaseURL: databaseURL, clock: clock, dataDirectory: directory,
                configure: { $0.outboundURLs = .publicHTTPS }
            ) { store in
                let requested = try await store.inApps(
                    .POST, "/inApps/v1/notifications/test", key: key, clock: clock)
                #expect(requested.status == 200, "\(requested.text)")
                await store.built.context.notifications.deliverDue(.sandbox)
                #expect(receiver.payloads.isEmpty, "the loopback receiver got nothing")
                let now = clock.now().millisecondsSince1970
                let history = try await store.inApps(
                    .POST, "/inApps/v1/notifications/history", key: key,
                    json: ["startDate": now - 86_400_000, "endDate": now + 1], clock: clock)
                let entries = history.json["notificationHistory"] as? [[String: Any]]
                let attempts = entries?.first?["sendAttempts"] as? [[String: Any]]
                #expect(attempts?.count == 1, "\(history.text)")
                #expect(attempts?.first?["sendAttemptResult"] as? String == "OTHER", "\(history.text)")
            }
        }
    }

    /// Apple's real-time URL is held to the policy too; under the default, loopback stays allowed for development.
    @Test(arguments: TestDatabase.available)
    func theRealtimeURLIsHeldToThePolicy(database: TestDatabase) async throws {
        let clock = ManualClock(Self.start)
        try await withTestStore(engine: database, clock: clock, configure: { $0.outboundURLs = .publicHTTPS }) {
            store in
            try await store.createApp()
            let key = try await store.createServerAPIKey()
            let refused = try await store.inApps(
                .PUT, "/inApps/v1/messaging/realtime/url", key: key,
                json: ["realtimeURL": "https://192.168.0.10/retention"], clock: clock)
            #expect(refused.status == 400, "\(refused.text)")
            #expect(refused.json["errorCode"] as? Int == 4_000_215, "\(refused.text)")
            #expect((refused.json["errorMessage"] as? String)?.contains("192.168.0.10 is not a public address") == true)
        }
        try await withTestStore(engine: database, clock: clock) { store in
            try await store.createApp()
            let key = try await store.createServerAPIKey()
            let kept = try await store.inApps(
                .PUT, "/inApps/v1/messaging/realtime/url", key: key,
                json: ["realtimeURL": "https://127.0.0.1:8443/retention"], clock: clock)
            #expect(kept.status == 200, "under the default policy loopback is allowed: \(kept.text)")
        }
    }
}
