import Foundation
import KioskTesting
import Testing

/// App Store Connect's limit of 10,000 in-app purchases per app: a catalog file that names more is refused before
/// the database is touched (a 100,000-product file once held the SQLite writer for half a minute), and one whose new
/// products would take the app past the limit is refused whole, saying how many it has and how many were asked.
@Suite struct ProductLimitTests {
    /// The app's exported catalog with `count` consumables `com.example.bulk.N` in place of its products.
    static func bulkCatalog(_ store: TestStore, count: Int) async throws -> Data {
        let exported = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/catalog")
        var document = exported.json
        let template = try #require((document["products"] as? [[String: Any]])?.first, "\(exported.text)")
        document["products"] = (0..<count).map { index in
            var product = template
            product["productId"] = "com.example.bulk.\(index)"
            product["referenceName"] = "Bulk \(index)"
            return product
        }
        return try JSONSerialization.data(withJSONObject: document)
    }

    /// SQLite only: the limit is checked before any write, the same on both engines, and decoding two files of ten
    /// thousand products takes half a minute in a debug build.
    @Test func catalogsPastTheLimitAreRefusedWhole() async throws {
        try await withTestStore { store in
            try await store.createApp()
            try await store.createProduct("com.example.coins")

            let huge = try await Self.bulkCatalog(store, count: 10_001)
            let refused = try await store.request(.POST, "/admin/v1/apps/\(TestStore.bundleId)/catalog", body: huge)
            #expect(refused.status == 409, "\(refused.text.prefix(400))")
            let error = refused.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == "too_many_products")
            #expect(
                error?["message"] as? String
                    == "The file names 10001 products; an app holds at most 10000 in-app purchases (App Store "
                    + "Connect's limit). Nothing was imported.")

            let past = try await Self.bulkCatalog(store, count: 10_000)
            let over = try await store.request(.POST, "/admin/v1/apps/\(TestStore.bundleId)/catalog", body: past)
            #expect(over.status == 409, "\(over.text.prefix(400))")
            #expect(
                (over.json["error"] as? [String: Any])?["message"] as? String
                    == "com.example.app has 1 products; 10000 more would pass App Store Connect's limit of 10000 "
                    + "in-app purchases per app. Nothing was created.")

            let products = try await store.request(.GET, "/admin/v1/apps/\(TestStore.bundleId)/products")
            #expect((products.json["products"] as? [[String: Any]])?.count == 1, "nothing was imported")
        }
    }
}
