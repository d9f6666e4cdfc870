import Foundation
import KioskCore
import KioskTestSupport
import KioskTesting
import Testing

/// Apple's own `AppStoreServerAPIClient` (PyPI app-store-server-library) against every Retention Messaging call,
/// in the sandbox (where uploads are approved at once and the performance test runs against a real endpoint) and
/// then in production (where uploads wait for App Review, and the real-time URL is accepted because the sandbox
/// test passed).
@Suite(
    .enabled(
        if: TestEnvironment.runs(.python),
        "set KIOSK_TEST_PYTHON (.ci/run does) to a python with PyPI app-store-server-library"))
struct RetentionInteropTests {
    static let script = ServerAPINotificationsInteropTests.interop.appendingPathComponent("retention_messaging.py")

    @Test func appleClientDrivesRetentionMessaging() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-retention-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withRetentionEndpoint { endpoint in
            try await withTestStore(configure: endpoint.configure(budget: .seconds(60))) { store in
                try await store.prepareSubscriptionCatalog()
                let key = try await store.createServerAPIKey()
                let keyFile = directory.appendingPathComponent("key.p8")
                try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .ascii)
                let bought = try await store.pay(TestStore.monthly, token: try await store.signIn())
                let transactionId = try #require(bought.transactionId, "\(bought.text)")
                endpoint.answer = .json("{}")

                func run(_ environment: String) async throws -> [String: Any] {
                    let sandbox = environment == "Sandbox"
                    let (status, output) = try await runProcess(
                        try TestEnvironment.require(.python),
                        [
                            Self.script.path, "--base-url", store.baseURL + (sandbox ? "/sandbox" : ""),
                            "--environment", environment, "--key-file", keyFile.path, "--key-id", key.keyId,
                            "--issuer-id", key.issuerId, "--bundle-id", TestStore.bundleId,
                            "--product-id", TestStore.monthly, "--transaction-id", transactionId,
                            "--realtime-url", endpoint.url,
                        ])
                    #expect(status == 0, "\(output)")
                    return try #require(
                        try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
                }
                func error(_ summary: [String: Any], _ call: String) -> Int? {
                    (summary[call] as? [String: Any])?["error"] as? Int
                }
                func succeeded(_ summary: [String: Any], _ call: String) -> Bool {
                    (summary[call] as? [String: Any])?.keys.contains("ok") == true
                }

                let sandbox = try await run("Sandbox")
                for call in [
                    "uploadImage", "uploadBullet", "uploadMessage", "uploadPlain", "configureDefault", "configureURL",
                    "deleteDefault", "deleteMessage", "deleteImage", "deleteURL",
                ] {
                    #expect(succeeded(sandbox, call), "\(call): \(sandbox[call] ?? "nothing")")
                }
                let image = try #require(sandbox["image"] as? String)
                let bullet = try #require(sandbox["bullet"] as? String)
                let message = try #require(sandbox["message"] as? String)
                let plain = try #require(sandbox["plain"] as? String)
                #expect(
                    sandbox["images"] as? [[String]]
                        == [[image, "APPROVED", "FULL_SIZE"], [bullet, "APPROVED", "BULLET_POINT"]].sorted {
                            $0[0] < $1[0]
                        })
                #expect(
                    sandbox["messages"] as? [[String]]
                        == [[message, "APPROVED"], [plain, "APPROVED"]].sorted { $0[0] < $1[0] })
                #expect(error(sandbox, "uploadImageAgain") == 4_090_000)
                #expect((sandbox["getDefault"] as? [String: Any])?["ok"] as? String == message)
                #expect(error(sandbox, "badLocale") == 4_000_164)
                #expect((sandbox["getURL"] as? [String: Any])?["ok"] as? String == endpoint.url)
                let config = try #require(sandbox["performanceTestConfig"] as? [String: Any])
                #expect(config["totalRequests"] as? Int == 20)
                #expect(config["responseTimeThreshold"] as? Int == 60_000)
                let test = try #require(sandbox["performanceTest"] as? [String: Any])
                #expect(test["result"] as? String == "PASS", "\(test)")
                #expect(test["successRate"] as? Int == 100)
                #expect(test["numPending"] as? Int == 0)
                #expect(test["target"] as? String == endpoint.url)
                #expect(test["p95"] is Int)
                #expect(error(sandbox, "unknownTest") == 4_040_018)
                #expect(error(sandbox, "defaultAfter") == 4_040_020)
                #expect(error(sandbox, "deleteImageInUse") == 4_030_019)
                #expect(error(sandbox, "deleteImageAgain") == 4_040_014)
                #expect(error(sandbox, "urlAfter") == 4_040_021)
                try await AppleVerifier.expectAccepts(
                    endpoint.received, kind: .realtimeRequest, store: store, bundleId: TestStore.bundleId)

                let production = try await run("Production")
                let pending = try #require(production["images"] as? [[String]])
                #expect(pending.map { $0[1] } == ["PENDING", "PENDING"], "\(pending)")
                #expect((production["messages"] as? [[String]])?.map { $0[1] } == ["PENDING", "PENDING"])
                #expect(error(production, "configureDefault") == 4_030_017)
                #expect(succeeded(production, "configureURL"), "\(production["configureURL"] ?? "")")
                #expect(production["performanceTest"] == nil)
                #expect(error(production, "deleteImageInUse") == 4_030_019)
                #expect(succeeded(production, "deleteImage"))
            }
        }
    }
}
