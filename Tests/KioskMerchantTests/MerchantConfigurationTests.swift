import Foundation
import KioskCore
import KioskMerchant
import KioskSigning
import Testing
import X509

/// The configuration file: where the store is (Kiosk or Apple), and a clear refusal for every mistake.
@Suite struct MerchantConfigurationTests {
    /// `"store"` names Apple's endpoints, a Kiosk base URL, or each endpoint explicitly.
    @Test func storeEndpointsForAppleKioskAndExplicitURLs() throws {
        func endpoints(_ json: String) throws -> StoreEndpoints {
            try JSONDecoder().decode(StoreEndpoints.self, from: Data(json.utf8))
        }
        let apple = try endpoints("\"apple\"")
        #expect(apple.verifyReceipt[.production] == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(apple.verifyReceipt[.sandbox] == "https://sandbox.itunes.apple.com/verifyReceipt")
        #expect(apple.serverAPI[.production] == "https://api.storekit.itunes.apple.com")
        #expect(apple.serverAPI[.sandbox] == "https://api.storekit-sandbox.itunes.apple.com")
        let kiosk = try endpoints("\"http://127.0.0.1:8080/\"")
        #expect(kiosk.verifyReceipt[.sandbox] == "http://127.0.0.1:8080/sandbox/verifyReceipt")
        #expect(kiosk.serverAPI[.production] == "http://127.0.0.1:8080")
        let explicit = try endpoints(
            #"{"verifyReceipt": {"Production": "http://a/verifyReceipt", "Sandbox": "http://b/verifyReceipt"}, "serverAPI": {"Sandbox": "http://c"}}"#
        )
        #expect(
            explicit.verifyReceipt[.sandbox] == "http://b/verifyReceipt" && explicit.serverAPI[.sandbox] == "http://c")
        #expect(throws: DecodingError.self) { try endpoints("\"ftp://example.com\"") }
        #expect(throws: DecodingError.self) {
            try endpoints(#"{"verifyReceipt": {"Staging": "http://a"}, "serverAPI": {}}"#)
        }
    }

    /// Each mistake stops the start with the field at fault and what to do.
    @Test func mistakesNameTheirField() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "merchant-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = try SigningIdentity.generate(environment: .sandbox, now: Date()).root
        try Data(root.serializeAsPEM().pemString.utf8).write(to: folder.appendingPathComponent("root.pem"))

        func refusal(_ edit: (inout [String: Any], inout [String: Any]) -> Void) throws -> KioskError? {
            var document: [String: Any] = [
                "adminToken": "an-admin-token-long-enough", "userTokenSecret": "a-secret-long-enough-to-sign",
            ]
            var app: [String: Any] = [
                "bundleId": "com.example.shop", "store": "http://127.0.0.1:8080", "environments": ["Sandbox"],
                "rootCertificates": ["Sandbox": ["root.pem"]],
                "products": [
                    ["productId": "com.example.shop.coins", "type": "consumable", "balance": "coins", "amount": 10]
                ],
            ]
            edit(&document, &app)
            document["apps"] = [app]
            let file = folder.appendingPathComponent("merchant.json")
            try JSONSerialization.data(withJSONObject: document).write(to: file)
            do {
                _ = try MerchantConfiguration.load(from: file.path)
                return nil
            } catch let error as KioskError {
                return error
            }
        }
        #expect(try refusal { _, _ in } == nil, "the base document is valid")
        #expect(try refusal { document, _ in document["adminToken"] = "short" }?.field == "adminToken")
        #expect(
            try refusal { _, app in app["rootCertificates"] = ["Sandbox": ["missing.pem"]] }?.field
                == "apps[0].rootCertificates.Sandbox[0]")
        #expect(
            try refusal { _, app in app["environments"] = ["Sandbox", "Production"] }?.field
                == "apps[0].rootCertificates.Production")
        #expect(try refusal { _, app in app["environments"] = ["Staging"] }?.field == "apps[0].environments[0]")
        #expect(
            try refusal { _, app in
                app["products"] = [["productId": "com.example.shop.coins", "type": "consumable"]]
            }?.field == "apps[0].products[0].balance")
        #expect(
            try refusal { _, app in
                app["products"] = [
                    ["productId": "com.example.shop.pass", "type": "non_renewing", "entitlement": "pass"]
                ]
            }?.field == "apps[0].products[0].durationDays")
        #expect(
            try refusal { _, app in
                app["products"] = [["productId": "com.example.shop.pro", "type": "monthly", "entitlement": "pro"]]
            }?.field == "apps[0].products[0].type")
        #expect(try refusal { _, app in app["confirmWithServerAPI"] = true }?.field == "apps[0].confirmWithServerAPI")
        #expect(
            try refusal { _, app in app["serverAPIKey"] = ["keyId": "K", "issuerId": "I", "privateKey": "nope"] }?.field
                == "apps[0].serverAPIKey")
        let missing = try refusal { _, app in app.removeValue(forKey: "bundleId") }
        #expect(missing?.field == "apps[0].bundleId" && missing?.fix != nil)
        let none = folder.appendingPathComponent("none.json").path
        #expect {
            try MerchantConfiguration.load(from: none)
        } throws: { error in
            let error = error as? KioskError
            return error?.code == .configurationUnreadable && error?.field == none && error?.fix != nil
        }
    }
}
