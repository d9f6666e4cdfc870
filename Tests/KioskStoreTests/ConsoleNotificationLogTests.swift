import Foundation
import KioskCore
import KioskTesting
import Testing

/// The console's notification log and sandbox page as a person reads them: the attempt count agrees with the
/// deliveries listed beside it, and the sandbox's time is written like every other time in the console.
@Suite struct ConsoleNotificationLogTests {
    /// A first attempt that fails and a resend that gets through: two POSTs listed, so "2", where the scheduled
    /// attempt count alone said "1".
    @Test func theAttemptCountIsTheDeliveriesListed() async throws {
        let clock = ManualClock(NotificationRetryTests.start)
        let recovery = NotificationRetryTests.start.addingTimeInterval(NotificationRetryTests.hour)
        try await withNotificationReceiver(answering: { clock.now() < recovery ? .badGateway : .ok }) { receiver in
            try await withTestStore(clock: clock) { store in
                let key = try await NotificationRetryTests.prepare(store, urls: [receiver.url])
                _ = try await store.request(
                    .PATCH, "/admin/v1/apps/\(TestStore.bundleId)", json: ["sandboxNotificationRetries": false])
                let requested = try await store.inApps(.POST, "/inApps/v1/notifications/test", key: key, clock: clock)
                #expect(requested.status == 200, "\(requested.text)")
                await store.built.context.notifications.deliverDue(.sandbox)
                let base = "/sandbox/test/v1/apps/\(TestStore.bundleId)/notifications"
                let listed = try await store.request(.GET, base, token: .some(store.adminToken))
                let uuid = try #require(
                    (listed.json["notifications"] as? [[String: Any]])?.first?["notificationUUID"] as? String,
                    "\(listed.text)")
                clock.set(recovery)
                let resent = try await store.request(.POST, "\(base)/\(uuid)/resend", token: .some(store.adminToken))
                #expect(resent.status == 200, "\(resent.text)")

                let visitor = ConsoleTests.Visitor(store)
                _ = try await visitor.signIn()
                let page = try await visitor.get(
                    "/console/notifications?app=\(TestStore.bundleId)&environment=sandbox")
                #expect(page.status == 200)
                Self.expectAttempts(in: page.text, count: 2)

                // Where each attempt went and what it answered is for those who manage the app (they set the URLs);
                // a read-only role sees the count, not the addresses and answers.
                _ = try await store.request(
                    .POST, "/admin/v1/console-users",
                    json: [
                        "email": "ads@example.com", "name": "Ads", "roles": ["MARKETING"], "password": "long-enough-1",
                    ])
                let reader = ConsoleTests.Visitor(store)
                _ = try await reader.post("/console/sign-in", "email=ads%40example.com&password=long-enough-1")
                let read = try await reader.get("/console/notifications?app=\(TestStore.bundleId)&environment=sandbox")
                #expect(read.status == 200 && read.text.contains("<td>2</td>"), "\(read.text)")
                #expect(!read.text.contains(receiver.url), "no delivery address for a read-only role")
            }
        }
    }

    /// The sandbox's "now" is "2026-… UTC" like the console's other times, not a raw ISO 8601 string.
    @Test func theSandboxTimeIsWrittenLikeEveryOtherTime() async throws {
        try await withTestStore(clock: ManualClock(NotificationRetryTests.start)) { store in
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn()
            let page = try await visitor.get("/console/sandbox")
            #expect(page.status == 200)
            Self.expectSandboxNow(in: page.text)
        }
    }

    /// Checks the log's one row shows `count` attempts and lists as many deliveries.
    static func expectAttempts(in html: String, count: Int) {
        let cell = html.range(of: #"<td>[0-9]+<br><small>"#, options: .regularExpression).map { html[$0] } ?? ""
        #expect(cell == "<td>\(count)<br><small>", "the attempts cell: \(html)")
        #expect(html.components(separatedBy: "<small>").count - 1 == count, "deliveries listed: \(html)")
    }

    /// Checks the sandbox page writes its time as the console does ("yyyy-MM-dd HH:mm:ss UTC").
    static func expectSandboxNow(in html: String) {
        let pattern = #"<dd id="sandbox-now">[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC</dd>"#
        #expect(html.range(of: pattern, options: .regularExpression) != nil, "\(html)")
    }
}
