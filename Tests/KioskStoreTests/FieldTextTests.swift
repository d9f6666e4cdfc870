import Foundation
import KioskTesting
import Testing

/// Every string of a Kiosk JSON body is one line of at most 4,096 characters unless its field says otherwise,
/// names and identifiers never hold a control character, and fields with App Store Connect's limits keep them;
/// each refusal names the field.
@Suite struct FieldTextTests {
    /// NUL, line breaks and other control characters in names and identifiers are refused, naming the field.
    @Test func controlCharactersInNamesAndIdentifiersAreRefused() async throws {
        try await withTestStore { store in
            for (path, json, field) in [
                ("/admin/v1/apps", ["bundleId": "com.example.app", "name": "Ex\u{0}ample"], "name"),
                ("/admin/v1/apps", ["bundleId": "com.example.app", "name": "Two\nlines"], "name"),
                ("/admin/v1/apps", ["bundleId": "com.example\u{7F}.app", "name": "Example"], "bundleId"),
                (
                    "/admin/v1/testers", ["email": "a@example.com", "password": "sandbox-pass", "firstName": "A\u{0}"],
                    "firstName"
                ),
                (
                    "/sandbox/storekit/v1/sessions",
                    [
                        "email": "a@example.com", "password": "sandbox-pass", "bundleId": "com.example.app",
                        "deviceId": "device\u{1B}[2J",
                    ], "deviceId"
                ),
            ] as [(String, [String: String], String)] {
                let refused = try await store.request(.POST, path, json: json)
                #expect(refused.status == 400, "\(path) \(field): \(refused.text)")
                #expect(refused.errorCode == "invalid_character", "\(path) \(field): \(refused.text)")
                #expect(refused.errorField == field, "\(path): \(refused.text)")
            }
            #expect((try await store.request(.GET, "/admin/v1/apps").json["apps"] as? [Any])?.isEmpty == true)
            try await expectHealthy(store)
        }
    }

    /// A string longer than 4,096 characters is refused in any field, a password over 128 characters too, and
    /// 128 are accepted.
    @Test func overlongStringsAndPasswordsAreRefused() async throws {
        try await withTestStore { store in
            let megabyte = try await store.request(
                .POST, "/admin/v1/testers",
                json: ["email": "a@example.com", "password": String(repeating: "p", count: 1_000_000)])
            #expect(megabyte.status == 400 && megabyte.errorCode == "text_too_long", "\(megabyte.text.prefix(300))")
            #expect(megabyte.errorField == "password")
            #expect(megabyte.body.count < 1000, "the refusal does not repeat the string")

            let long = try await store.request(
                .POST, "/admin/v1/testers",
                json: ["email": "b@example.com", "password": String(repeating: "p", count: 129)])
            #expect(long.status == 400 && long.errorCode == "password_too_long", "\(long.text)")
            #expect(long.errorField == "password")
            let longest = try await store.request(
                .POST, "/admin/v1/testers",
                json: ["email": "c@example.com", "password": String(repeating: "p", count: 128)])
            #expect(longest.status == 201, "\(longest.text)")

            let name = try await store.request(
                .POST, "/admin/v1/testers",
                json: [
                    "email": "d@example.com", "password": "sandbox-pass", "lastName": String(repeating: "n", count: 65),
                ])
            #expect(
                name.status == 400 && name.errorCode == "invalid_name" && name.errorField == "lastName", "\(name.text)")
            try await expectHealthy(store)
        }
    }

    /// A catalog file is checked by the same rules: a control character in a reference name is refused with the
    /// field's code and path, and nothing is changed.
    @Test func aCatalogFileWithAControlCharacterInANameIsRefused() async throws {
        try await withTestStore { store in
            try await store.createApp()
            try await store.createProduct("com.example.coins")
            let exported = try await store.request(.GET, "/admin/v1/apps/com.example.app/catalog")
            var document = exported.json
            var products = try #require(document["products"] as? [[String: Any]])
            products[0]["referenceName"] = "Coins\u{0}"
            document["products"] = products
            let refused = try await store.request(.POST, "/admin/v1/apps/com.example.app/catalog", json: document)
            #expect(refused.status == 400 && refused.errorCode == "invalid_reference_name", "\(refused.text)")
            #expect(refused.errorField == "products[0].referenceName", "\(refused.text)")
            #expect(refused.errorMessage?.contains("U+0000") == true, "\(refused.text)")
            let product = try await store.request(.GET, "/admin/v1/apps/com.example.app/products/com.example.coins")
            #expect(product.json["referenceName"] as? String == "com.example.coins")
        }
    }

    /// A control character in a query parameter (`%00`) is refused naming the parameter, on every family and on
    /// PostgreSQL too (which cannot hold a NUL): never a 500.
    @Test(arguments: TestDatabase.available)
    func controlCharactersInQueryParametersAreRefused(database: TestDatabase) async throws {
        try await withStore(database) { store in
            try await store.preparePurchaseCatalog()
            let key = try await store.createServerAPIKey()
            for (path, parameter) in [
                ("/sandbox/test/v1/apps/\(TestStore.bundleId)/payments?tester=a%00b@example.com", "tester"),
                ("/admin/v1/apps/\(TestStore.bundleId)/offer-codes?productId=a%00b", "productId"),
                ("/admin/v1/apps?note=%0A", "note"),
            ] {
                let refused = try await store.request(.GET, path, token: .some(store.adminToken))
                #expect(refused.status == 400 && refused.errorCode == "invalid_character", "\(path): \(refused.text)")
                #expect(refused.errorField == parameter, "\(path): \(refused.text)")
            }
            let signedIn = try await store.request(.GET, "/sandbox/storekit/v1/updates?after=%00")
            #expect(signedIn.status == 400 && signedIn.errorCode == "invalid_character", "\(signedIn.text)")
            let history = try await store.serverAPI(.GET, "/inApps/v2/history/1?productId=a%00b", key: key)
            #expect(history.status == 400 && history.appleErrorCode == 4_000_000, "\(history.text)")
            try await expectHealthy(store)
        }
    }
}
