import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import Testing

/// The store's operator refunds a production purchase, or takes the refund back: through the admin API, the CLI and
/// the console (for those whose roles refund customers). Each is what Apple's support does: the transaction
/// re-signed, the refund's money recorded, the app's server told; repeating one changes nothing more.
@Suite struct ProductionRefundTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09-21

    /// A production purchase of coins by us@example.com; its transaction id.
    static func productionPurchase(_ store: TestStore) async throws -> String {
        try await store.preparePurchaseCatalog()
        try await store.buyCoinsInProduction()
        let token = try await store.signIn("us@example.com", sandbox: false)
        return try #require(try await store.pay(TestStore.coins, token: token, sandbox: false).transactionId)
    }

    static func path(_ transactionId: String, _ action: String) -> String {
        "/admin/v1/apps/\(TestStore.bundleId)/transactions/\(transactionId)/\(action)"
    }

    @Test(arguments: TestDatabase.available)
    func theOperatorRefundsAndReversesThroughTheAPI(database: TestDatabase) async throws {
        try await withTestStore(engine: database, clock: ManualClock(Self.start)) { store in
            let transactionId = try await Self.productionPurchase(store)
            let refunded = try await store.request(
                .POST, Self.path(transactionId, "refund"), json: ["percentage": 50, "reason": 1])
            #expect(refunded.status == 200, "\(refunded.text)")
            #expect(refunded.json["revocationType"] as? String == "REFUND_PRORATED")
            #expect(refunded.json["notificationType"] as? String == "REFUND")
            let again = try await store.request(
                .POST, Self.path(transactionId, "refund"), json: ["percentage": 50, "reason": 1])
            let notificationUUID = try #require(refunded.json["notificationUUID"] as? String, "\(refunded.text)")
            #expect(
                again.status == 200 && again.json["notificationUUID"] as? String == notificationUUID, "\(again.text)")

            // The day's sales report has the refund as a row of its own, units negative.
            let report = try await store.request(.GET, "/admin/v1/reports/sales?frequency=daily&date=2026-09-21")
            #expect(report.text.split(separator: "\n").contains { $0.contains("\t-1\t") }, "\(report.text)")
            let notifications = try await store.request(
                .GET, "/sandbox/test/v1/apps/\(TestStore.bundleId)/notifications?environment=production",
                token: store.adminToken)
            let types = (notifications.json["notifications"] as? [[String: Any]] ?? []).compactMap {
                $0["notificationType"] as? String
            }
            #expect(types.filter { $0 == "REFUND" }.count == 1, "\(types)")

            let reversed = try await store.request(.POST, Self.path(transactionId, "reverse-refund"), json: [:])
            #expect(reversed.json["notificationType"] as? String == "REFUND_REVERSED", "\(reversed.text)")
            #expect(reversed.json["revocationDate"] == nil)
            let notRefunded = try await store.request(.POST, Self.path(transactionId, "reverse-refund"), json: [:])
            #expect(notRefunded.status == 200, "a repeated reversal answers the same")

            // Refused: a sandbox transaction on the production path, numbers out of range, unknown fields.
            let sandbox = try #require(
                try await store.pay(TestStore.coins, token: try await store.signIn()).transactionId)
            let wrongEnvironment = try await store.request(.POST, Self.path(sandbox, "refund"), json: [:])
            #expect(wrongEnvironment.status == 404 && wrongEnvironment.errorCode == "transaction_not_found")
            for (id, body, code) in [
                ("abc", [String: Any](), "bad_request"), ("99999999999999999999", [:], "bad_request"),
                (transactionId, ["percentage": 0], "invalid_percentage"),
                (transactionId, ["percentage": 101], "invalid_percentage"),
                (transactionId, ["reason": 7], "invalid_reason"),
                (transactionId, ["refundEverything": true], "unknown_field"),
            ] {
                let answer = try await store.request(.POST, Self.path(id, "refund"), json: body)
                #expect(answer.status == 400 && answer.errorCode == code, "\(id) \(body): \(answer.text)")
            }
        }
    }

    /// `kiosk accounts refund` and `reverse-refund`, as an operator types them.
    @Test func theOperatorRefundsFromTheCommandLine() async throws {
        try await withTestStore(clock: ManualClock(Self.start)) { store in
            let transactionId = try await Self.productionPurchase(store)
            let connection = ["--server", store.baseURL, "--token", store.adminToken]
            let refunded = try await KioskProcess.run(
                ["accounts", "refund", transactionId, "--app", TestStore.bundleId, "--percentage", "25"] + connection)
            #expect(
                refunded.status == 0 && refunded.stdout.contains("in part"), "\(refunded.stdout) \(refunded.stderr)")
            // The app has no production notification URL: REFUND is not sent, and the line says so and how to fix it.
            #expect(
                refunded.stdout.contains(
                    ") was not sent: the app has no production notification URL — set one with "
                        + "`kiosk apps update \(TestStore.bundleId) --production-notification-url URL`"),
                "\(refunded.stdout)")
            let reversed = try await KioskProcess.run(
                ["accounts", "reverse-refund", transactionId, "--app", TestStore.bundleId] + connection)
            #expect(reversed.stdout.contains("Reversed the refund"), "\(reversed.stdout) \(reversed.stderr)")
            let unknown = try await KioskProcess.run(
                ["accounts", "refund", "42", "--app", TestStore.bundleId] + connection)
            #expect(unknown.status != 0 && unknown.stderr.contains("no production transaction 42"), "\(unknown.stderr)")
        }
    }

    /// Customer Support refunds from the production customer's page; a Developer sees no such form and is refused.
    @Test func customerSupportRefundsFromTheConsole() async throws {
        try await withTestStore(clock: ManualClock(Self.start)) { store in
            let transactionId = try await Self.productionPurchase(store)
            for (email, role) in [("help@example.com", "CUSTOMER_SUPPORT"), ("dev@example.com", "DEVELOPER")] {
                _ = try await store.request(
                    .POST, "/admin/v1/console-users",
                    json: ["email": email, "name": role, "roles": [role], "password": "long-enough-1"])
            }
            let page = "/console/customers/production/us@example.com"
            let support = ConsoleTests.Visitor(store)
            _ = try await support.post("/console/sign-in", "email=help%40example.com&password=long-enough-1")
            let before = try await support.get(page).text
            let action = "/console/refunds/\(TestStore.bundleId)/\(transactionId)/refund"
            #expect(before.contains("action=\"\(action)\""), "\(before)")
            let refunded = try await support.post(
                action, "csrf=\(try await support.csrf(page))&percentage=100&reason=0&back=\(page)")
            #expect(refunded.status == 303 && refunded.location == page, "\(refunded.text)")
            #expect(try await support.get(page).text.contains("Reverse refund"))

            let developer = ConsoleTests.Visitor(store)
            _ = try await developer.post("/console/sign-in", "email=dev%40example.com&password=long-enough-1")
            let seen = try await developer.get(page).text
            #expect(!seen.contains("/console/refunds/"), "no refund form for a Developer")
            let refused = try await developer.post(
                "/console/refunds/\(TestStore.bundleId)/\(transactionId)/reverse-refund",
                "csrf=\(try await developer.csrf(page))&back=\(page)")
            #expect(refused.status == 403 && refused.text.contains("Customer Support"))
            #expect(try await support.get("/console/audit").status == 403, "support reads no audit log")
        }
    }
}
