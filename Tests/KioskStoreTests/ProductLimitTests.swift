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

extension ProductLimitTests {
    /// The console's app page lists 100 products at a time, in product id order, with where the page is and links to
    /// its neighbours; the overview counts an app's products without listing them. A page past the end says so.
    @Test func theAppPageListsAHundredProductsAtATime() async throws {
        try await withTestStore { store in
            try await store.createApp()
            try await store.createProduct("com.example.coins")
            let bulk = try await Self.bulkCatalog(store, count: 250)
            let imported = try await store.request(.POST, "/admin/v1/apps/\(TestStore.bundleId)/catalog", body: bulk)
            #expect(imported.status == 200, "\(imported.text.prefix(300))")
            let visitor = ConsoleTests.Visitor(store)
            _ = try await visitor.signIn(as: "Ann")

            let first = try await visitor.get("/console/apps/\(TestStore.bundleId)").text
            #expect(first.components(separatedBy: "<tr><td><a href=\"/console/apps/").count - 1 == 100)
            #expect(first.contains("Products 1–100 of 251."), "\(first)")
            #expect(first.contains("?page=2#products\">Next page</a>") && !first.contains("Previous page"))
            #expect(first.contains(">com.example.bulk.0<") && !first.contains(">com.example.coins<"))

            let last = try await visitor.get("/console/apps/\(TestStore.bundleId)?page=3").text
            #expect(last.components(separatedBy: "<tr><td><a href=\"/console/apps/").count - 1 == 51)
            #expect(last.contains("Products 201–251 of 251."), "\(last)")
            #expect(last.contains("?page=2#products\">Previous page</a>") && !last.contains("Next page"))
            #expect(last.contains(">com.example.coins<"), "the last in product id order")

            let beyond = try await visitor.get("/console/apps/\(TestStore.bundleId)?page=99999999999999999999").text
            #expect(beyond.contains("Products 1–100 of 251."), "an unreadable page number shows the first page")
            let past = try await visitor.get("/console/apps/\(TestStore.bundleId)?page=7").text
            #expect(past.contains("No products on page 7: there are 251."), "\(past)")
            #expect(past.contains("?page=3#products\">Previous page</a>"))

            let overview = try await visitor.get("/console").text
            #expect(
                overview.contains("<td><code>\(TestStore.bundleId)</code></td><td>251</td>"), "the overview counts them"
            )

            // The admin API pages the same list with limit and offset.
            let path = "/admin/v1/apps/\(TestStore.bundleId)/products"
            let firstPage = try await store.request(.GET, path + "?limit=100")
            #expect((firstPage.json["products"] as? [[String: Any]])?.count == 100, "\(firstPage.text.prefix(200))")
            #expect(firstPage.json["total"] as? Int == 251 && firstPage.json["nextOffset"] as? Int == 100)
            let lastPage = try await store.request(.GET, path + "?limit=100&offset=200")
            let lastIds = (lastPage.json["products"] as? [[String: Any]])?.compactMap { $0["productId"] as? String }
            #expect(lastIds?.count == 51 && lastIds?.last == "com.example.coins", "\(lastPage.text.prefix(200))")
            #expect(lastPage.json["nextOffset"] == nil && lastPage.json["total"] as? Int == 251)
            let whole = try await store.request(.GET, path)
            #expect((whole.json["products"] as? [[String: Any]])?.count == 251 && whole.json["total"] == nil)
            for (query, field) in [
                ("?limit=0", "limit"), ("?limit=10&offset=-1", "offset"),
                ("?limit=99999999999999999999", "limit"), ("?limit=10&includeDeleted=true", "includeDeleted"),
            ] {
                let refused = try await store.request(.GET, path + query)
                let error = refused.json["error"] as? [String: Any]
                #expect(refused.status == 400, "\(query): \(refused.text)")
                #expect(error?["code"] as? String == "invalid_value" && error?["field"] as? String == field, "\(query)")
            }
        }
    }
}
