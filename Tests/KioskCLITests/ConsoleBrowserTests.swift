import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import Testing

/// The web console in a real browser: Debian's Chromium, driven by Selenium (`Tests/Interop/console_browser.py`),
/// walks a developer's first hour (sign in, create a product, see why it is unavailable, complete the agreement, buy
/// as a tester, find the customer, refund, resend the notification, watch the chart), the safety checks (no CSRF
/// token, a forged cookie) and a Developer's first sign-in, their role's limits and their session's end on the
/// store's clock. The store is checked afterwards through the admin API, so the pages are not trusted to
/// report their own success. Set `KIOSK_CONSOLE_SCREENSHOTS=docs/console` to refresh the README's screenshots.
@Suite struct ConsoleBrowserTests {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let script = tests.appendingPathComponent("Interop/console_browser.py").path
    /// The example `.storekit` file, shaped as Xcode writes them.
    static let storekit = tests.deletingLastPathComponent().appendingPathComponent("Examples/CoinGame.storekit").path

    @Test(.enabled(if: TestEnvironment.runs(.browser), "set KIOSK_TEST_BROWSER_PYTHON (.ci/run does)"))
    func aDevelopersFirstHourInTheConsole() async throws {
        let python = try TestEnvironment.require(.browser)
        let screenshots =
            ProcessInfo.processInfo.environment["KIOSK_CONSOLE_SCREENSHOTS"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-console-\(UUID().uuidString)").path
        let clock = ManualClock(Date())
        try await withNotificationSink(advancing: clock) { sink in
            try await withTestStore(clock: clock) { store in
                let (status, output) = try await runProcess(
                    python,
                    [
                        Self.script, "--base-url", store.baseURL, "--token", store.adminToken, "--receiver", sink.url,
                        "--storekit", Self.storekit, "--clock",
                        sink.url.replacingOccurrences(of: "/notifications", with: "/clock"),
                        "--screenshots", screenshots,
                    ])
                #expect(status == 0, "\(output)")
                let seen = try #require(
                    try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
                let transactionId = try #require(seen["transactionId"] as? String, "\(output)")

                // What the browser did, as the store saw it.
                let refunded = try await store.request(
                    .GET, "/sandbox/test/v1/apps/com.example.coins/transactions?tester=kid@example.com",
                    token: store.adminToken)
                let transaction = (refunded.json["transactions"] as? [[String: Any]])?.first ?? [:]
                #expect(transaction["transactionId"] as? String == transactionId, "\(refunded.text)")
                let notifications = try await store.request(
                    .GET, "/sandbox/test/v1/apps/com.example.coins/notifications", token: store.adminToken)
                let types = (notifications.json["notifications"] as? [[String: Any]] ?? []).compactMap {
                    $0["notificationType"] as? String
                }
                #expect(types.contains("REFUND"), "\(notifications.text)")
                let agreement = try await store.request(.GET, "/admin/v1/agreements/paid-apps")
                #expect(agreement.json["status"] as? String == "active", "\(agreement.text)")
                let evil = try await store.request(.GET, "/admin/v1/apps/com.example.evil")
                #expect(evil.status == 404, "the form without a CSRF token created nothing")
                // The REFUND reached the receiver once when sent and once more when resent: two attempts, both
                // received, the same notification each time.
                let refunds = (notifications.json["notifications"] as? [[String: Any]] ?? []).filter {
                    $0["notificationType"] as? String == "REFUND"
                }
                #expect(refunds.count == 1, "\(notifications.text)")
                let refundUUID = try #require(refunds.first?["notificationUUID"] as? String, "\(notifications.text)")
                #expect(refunds.first?["attempts"] as? Int == 2, "\(notifications.text)")
                #expect(sink.uuids.filter { $0 == refundUUID }.count == 2, "\(sink.uuids)")
                for page in [
                    "overview", "product-unavailable", "agreements", "money", "customer", "notifications", "catalog",
                    "audit", "team", "account", "checks", "subscriptions",
                ] {
                    #expect(FileManager.default.fileExists(atPath: "\(screenshots)/\(page).png"), "\(page).png")
                }
            }
        }
    }
}
