import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import Testing

/// Apple's own `AppStoreServerAPIClient` and `SignedDataVerifier` (PyPI app-store-server-library) against the
/// subscription and notification endpoints, in both environments.
@Suite(
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON (.ci/run does) to a python with PyPI app-store-server-library"))
struct ServerAPINotificationsInteropTests {
    static let interop = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop")

    /// Every subscription and notification call of Apple's client parses Kiosk's answers; the renewal info and
    /// the test notification it fetched pass Apple's verifier for the environment.
    @Test(arguments: ["sandbox", "production"])
    func appleClientDrivesSubscriptionsAndNotifications(environment: String) async throws {
        let sandbox = environment == "sandbox"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kiosk-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withNotificationReceiver { receiver in
            try await withStore(.sqlite) { store in
                try await store.prepareSubscriptionCatalog()
                var email = TestStore.testerEmail
                if !sandbox {
                    for action in ["submit", "approve"] {
                        let reviewed = try await store.request(
                            .POST, "/admin/v1/apps/\(TestStore.bundleId)/products/\(TestStore.monthly)/review",
                            json: ["action": action])
                        #expect(reviewed.status == 200, "\(reviewed.text)")
                    }
                    email = "buyer@example.com"
                    _ = try await store.request(
                        .POST, "/admin/v1/accounts", json: ["email": email, "password": TestStore.password])
                }
                try await store.setNotificationURLs([receiver.url], sandbox: sandbox)
                let key = try await store.createServerAPIKey()
                let keyFile = directory.appendingPathComponent("key.p8")
                try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .ascii)
                let bought = try await store.pay(
                    TestStore.monthly, token: try await store.signIn(email, sandbox: sandbox), sandbox: sandbox)
                let transactionId = try #require(bought.transactionId, "\(bought.text)")
                let app = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)")
                let appAppleId = try #require(app.json["appAppleId"] as? Int)
                let root = try await store.request(.GET, "/admin/v1/certificates/\(environment)/root?format=der")
                try root.body.write(to: directory.appendingPathComponent("root.der"))

                let (status, output) = try await runProcess(
                    try TestEnvironment.require(.python),
                    [
                        Self.interop.appendingPathComponent("server_api_notifications.py").path,
                        "--base-url", store.baseURL + (sandbox ? "/sandbox" : ""),
                        "--environment", sandbox ? "Sandbox" : "Production", "--key-file", keyFile.path,
                        "--key-id", key.keyId, "--issuer-id", key.issuerId, "--bundle-id", TestStore.bundleId,
                        "--transaction-id", transactionId, "--product-id", TestStore.monthly,
                        "--out-dir", directory.path,
                    ])
                #expect(status == 0, "\(output)")
                let summary = try #require(
                    try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
                #expect(summary["statusesEnvironment"] as? String == (sandbox ? "Sandbox" : "Production"))
                #expect(summary["statusesAppAppleId"] as? Int == appAppleId)
                let groups = try #require(summary["statuses"] as? [[String: Any]])
                #expect(groups.first?["group"] as? String == "21000001")
                #expect(groups.first?["statuses"] as? [Int] == [1])
                #expect((summary["filteredStatuses"] as? [[String: Any]])?.first?["statuses"] as? [Int] == [1])
                let extended = try #require(summary["extended"] as? [String: Any])
                #expect(extended["originalTransactionId"] as? String == transactionId)
                #expect(extended["success"] as? Bool == true)
                #expect(extended["effectiveDate"] is Int)
                #expect(extended["webOrderLineItemId"] is String)
                let mass = try #require(summary["mass"] as? [String: Any])
                #expect(mass["requestIdentifier"] as? Bool == true)
                #expect(mass["complete"] as? Bool == true)
                #expect(mass["succeededCount"] as? Int == 1)
                #expect(mass["failedCount"] as? Int == 0)
                let test = try #require(summary["testNotification"] as? [String: Any])
                #expect(test["results"] as? [String] == ["SUCCESS"])
                let history = try #require(summary["history"] as? [String: Any])
                // SUBSCRIBED (the purchase), RENEWAL_EXTENDED (single), RENEWAL_EXTENDED + SUMMARY (mass), TEST.
                #expect(history["count"] as? Int == 5)
                #expect(history["hasMore"] as? Bool == false)
                #expect(history["testCount"] as? Int == 1)
                #expect((summary["refused"] as? [String: Any])?["rawApiError"] as? Int == 4_000_020)

                for (kind, file) in [("renewal", "renewal.jws"), ("notification", "notification.jws")] {
                    let (verified, decoded) = try await runProcess(
                        try TestEnvironment.require(.python),
                        [
                            Self.interop.appendingPathComponent("verify_signed_data.py").path,
                            "--root-der", directory.appendingPathComponent("root.der").path,
                            "--environment", sandbox ? "Sandbox" : "Production", "--bundle-id", TestStore.bundleId,
                            "--app-apple-id", String(appAppleId), "--kind", kind,
                            "--jws-file", directory.appendingPathComponent(file).path,
                        ])
                    #expect(verified == 0, "\(kind): \(decoded)")
                }
            }
        }
    }
}
