import Foundation
import KioskTesting
import Testing

@Suite struct ConsoleCatalogFilesTests {
    /// The Xcode StoreKit configuration shipped with the core tests.
    static var sampleStoreKitFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("KioskCoreTests/Resources/Sample.storekit")
    }

    /// A catalog exported from one app imports into another unchanged, and importing the same file twice changes
    /// nothing the second time.
    @Test(arguments: TestDatabase.available)
    func exportImportRoundTripIsIdempotent(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            _ = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/subscription-groups",
                json: ["referenceName": "Pro", "localizations": [["locale": "en_US", "name": "Pro"]]])
            try await store.createProduct("com.example.coins")
            try await store.createProduct(
                "com.example.pro", type: "auto_renewable",
                fields: ["subscription": ["group": "Pro", "level": 1], "duration": "P1Y", "pricing": ["tier": 10]])
            let exported = try await store.request(.GET, "/admin/v1/apps/com.example.app/catalog")
            #expect(exported.status == 200)
            #expect(exported.json["format"] as? String == "kiosk-catalog")

            try await store.createApp("com.example.copy", name: "Copy")
            let first = try await store.request(.POST, "/admin/v1/apps/com.example.copy/catalog", body: exported.body)
            #expect(first.status == 200, "\(first.text)")
            #expect(
                (first.json["created"] as? [String])?.sorted() == [
                    "group:Pro", "product:com.example.coins", "product:com.example.pro",
                ])
            let second = try await store.request(.POST, "/admin/v1/apps/com.example.copy/catalog", body: exported.body)
            #expect((second.json["created"] as? [String])?.isEmpty == true)
            #expect((second.json["updated"] as? [String])?.isEmpty == true)
            #expect((second.json["unchanged"] as? [String])?.count == 3)

            // The copy exports to the same document, apart from the app it names.
            let copied = try await store.request(.GET, "/admin/v1/apps/com.example.copy/catalog")
            for key in ["products", "subscriptionGroups"] {
                let original = try #require(exported.json[key] as? NSArray, "\(key)")
                #expect(copied.json[key] as? NSArray == original, "\(key)")
            }
        }
    }

    /// An Xcode `.storekit` file imports (products land Ready to Submit), and the store exports one back that
    /// imports again without changes.
    @Test(arguments: TestDatabase.available)
    func storeKitFileImportAndExport(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let file = try Data(contentsOf: Self.sampleStoreKitFile)
            let imported = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/catalog?format=storekit", body: file)
            #expect(imported.status == 200, "\(imported.text)")
            let created = try #require(imported.json["created"] as? [String])
            #expect(created.contains { $0.hasPrefix("group:") })
            #expect(created.filter { $0.hasPrefix("product:") }.count >= 5)
            #expect((imported.json["warnings"] as? [Any])?.isEmpty == true, "\(imported.text)")

            let products = try await store.request(.GET, "/admin/v1/apps/com.example.app/products")
            let states = Set(
                (products.json["products"] as? [[String: Any]])?.compactMap { $0["reviewState"] as? String } ?? [])
            #expect(states == ["ready_to_submit"])

            let exported = try await store.request(.GET, "/admin/v1/apps/com.example.app/catalog?format=storekit")
            #expect(exported.status == 200)
            #expect(exported.json["subscriptionGroups"] != nil)
            #expect(exported.json["identifier"] as? String == "5C2D7A10", "the file's own identifier comes back")
            let again = try await store.request(.POST, "/admin/v1/apps/com.example.app/catalog", body: exported.body)
            #expect(again.status == 200, "\(again.text)")
            #expect((again.json["created"] as? [String])?.isEmpty == true)
            #expect((again.json["updated"] as? [String])?.isEmpty == true)
        }
    }

    /// What a `.storekit` file holds that Kiosk does not import (offer codes) is reported, not dropped silently.
    @Test func storeKitImportWarnsAboutWhatItLeavesOut() async throws {
        try await withTestStore { store in
            try await store.createApp()
            let text = try String(contentsOf: Self.sampleStoreKitFile, encoding: .utf8).replacingOccurrences(
                of: "\"codeOffers\" : [\n\n          ],\n          \"displayPrice\" : \"49.99\"",
                with: """
                    "codeOffers" : [{"internalID" : "4373DD6D", "isStackable" : true, "eligibility" : ["new"],
                      "paymentMode" : "free", "referenceName" : "Codes", "subscriptionPeriod" : "P3D"}],
                    "displayPrice" : "49.99"
                    """)
            let imported = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/catalog?format=storekit", body: Data(text.utf8))
            #expect(imported.status == 200, "\(imported.text)")
            let warnings = try #require(imported.json["warnings"] as? [[String: Any]])
            #expect(warnings.count == 1, "\(imported.text)")
            #expect(warnings.first?["code"] as? String == "kept_not_used")
            #expect(warnings.first?["path"] as? String == "subscriptionGroups[0].subscriptions[2].codeOffers")
            #expect(warnings.first?["productId"] as? String == "com.example.trails.plus.yearly")

            // Kept, though not imported: the export writes the offer codes back.
            let exported = try await store.request(.GET, "/admin/v1/apps/com.example.app/catalog?format=storekit")
            #expect(exported.text.contains("\"referenceName\" : \"Codes\""), "\(exported.text)")
        }
    }

    /// Malformed files are rejected with the place of the problem, and a failed import writes nothing.
    @Test(arguments: TestDatabase.available)
    func malformedFilesNameThePlace(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.createApp()
            let truncated = Data("{\n  \"format\": \"kiosk-catalog\",\n  \"version\": 1,\n  \"products\": [".utf8)
            let syntax = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/catalog?format=json", body: truncated)
            #expect(syntax.status == 400)
            #expect(syntax.errorCode == "invalid_catalog_file", "\(syntax.text)")
            #expect(syntax.errorField?.hasPrefix("line ") == true, "\(syntax.text)")

            let document: [String: Any] = [
                "format": "kiosk-catalog", "version": 1, "app": ["bundleId": "com.example.app", "name": "Example"],
                "subscriptionGroups": [],
                "products": [
                    [
                        "productId": "com.example.ok", "referenceName": "OK", "type": "consumable",
                        "pricing": ["tier": 1], "clearedForSale": true, "familyShareable": false,
                        "localizations": [["locale": "en_US", "displayName": "OK", "description": "Fine"]],
                    ],
                    [
                        "productId": "com.example.bad", "referenceName": "Bad", "type": "consumable",
                        "pricing": ["tier": 42], "clearedForSale": true, "familyShareable": false,
                        "localizations": [["locale": "en_US", "displayName": "Bad", "description": "Tier"]],
                    ],
                ],
            ]
            let invalid = try await store.request(.POST, "/admin/v1/apps/com.example.app/catalog", json: document)
            #expect(invalid.status == 400)
            #expect(invalid.errorField == "products[1].pricing.tier", "\(invalid.text)")
            let products = try await store.request(.GET, "/admin/v1/apps/com.example.app/products")
            #expect(
                (products.json["products"] as? [Any])?.isEmpty == true, "the valid first product was rolled back too")

            let storekit = try await store.request(
                .POST, "/admin/v1/apps/com.example.app/catalog?format=storekit", body: Data("{\"products\": 3}".utf8))
            #expect(storekit.status == 400)
            #expect(storekit.errorCode == "invalid_storekit_file", "\(storekit.text)")
            #expect(storekit.errorField == "products", "\(storekit.text)")
        }
    }
}
